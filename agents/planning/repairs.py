"""Deterministic repairs of a model's plan: fixes that need no second model call. Pure, no I/O.

Small models make the same few slips: a task that depends on itself or on a task the plan does not
have, dependencies in a cycle, two tasks delivering one file, final documents that no task
produces, an input no document has, an answer cut at the token limit. Each repair here is safe (it never invents work) and is reported in a sentence, so
the round can log it as a warning.

Only what is invalid is repaired. A valid plan is the model's: a registered agent it chose is
kept even when the task's words would suit another (no word lists of the offline planner decide
over a real model; a plan that cannot run is shown back to the model with its errors instead).
"""

from __future__ import annotations

import json
import re
from collections.abc import Collection, Mapping, Sequence
from dataclasses import replace
from functools import lru_cache
from typing import Any

from agents.base import OutputSpec, Plan, TaskSpec
from agents.phrases import say
from agents.planning.plan import cycle_of, makers_of, out_format, undeliverable

_MAX_CUTS = 200  # closing attempts on a cut answer; each is one json.loads


def close_json(text: str) -> Any:
    """The longest complete JSON value a cut answer starts with, closed; None when there is none.

    '{"a": [1, 2, {"b": "x' gives {"a": [1, 2]}: the unfinished last element is dropped, the
    open arrays and objects are closed.
    """
    start = min((i for i in (text.find("{"), text.find("[")) if i >= 0), default=-1)
    if start < 0:
        return None
    stack: list[str] = []
    cuts: list[tuple[int, str]] = []  # (end of the kept text, closers) at each safe point
    in_string = escaped = False
    for index in range(start, len(text)):
        char = text[index]
        if in_string:
            if escaped:
                escaped = False
            elif char == "\\":
                escaped = True
            elif char == '"':
                in_string = False
            continue
        if char == '"':
            in_string = True
        elif char in "{[":
            stack.append("}" if char == "{" else "]")
            if char == "[":  # an empty list is harmless; an empty object would be a broken item
                cuts.append((index + 1, "".join(reversed(stack))))
        elif char in "}]":
            if not stack:
                break
            stack.pop()
            cuts.append((index + 1, "".join(reversed(stack))))
            if not stack:
                break
        elif char == ",":
            cuts.append((index, "".join(reversed(stack))))
    for end, closers in reversed(cuts[-_MAX_CUTS:]):
        try:
            return json.loads(text[start:end] + closers)
        except ValueError:
            continue
    return None


def repair_structure(plan: Plan, uploads: Collection[str],
                     formats: Mapping[str, Collection[str]]) -> tuple[Plan, list[str]]:
    """The plan with what cannot run in its structure fixed, and one sentence per fix: dependencies on
    itself or on no task, outputs named like an upload or made twice, a task repeated word for word,
    cycles, inputs nothing has, a reader not waiting for its maker, final documents no task makes.
    `formats`: the registered agents' (`Registry.formats`), for a final document only one agent makes."""
    notes: list[str] = []
    upload_names = set(uploads)
    tasks: list[TaskSpec] = []
    produced: dict[str, str] = {}
    ids = {t.id for t in plan.tasks}
    seen: dict[tuple[str, str, tuple[str, ...]], str] = {}
    alias: dict[str, str] = {}
    renamed: dict[str, str] = {}
    for task in plan.tasks:
        agent, instructions = task.agent, task.instructions
        depends = []
        for dep in task.depends_on:
            if dep == task.id:
                notes.append(f"task '{task.id}': dropped its dependency on itself")
            elif dep not in ids:
                notes.append(f"task '{task.id}': dropped its dependency on '{dep}', which is not in the plan")
            elif dep in depends:
                continue
            else:
                depends.append(dep)
        outputs = []
        for out in task.outputs:
            if out.name in upload_names:  # a file to make, named like one the round already has
                fresh = _free_name(out.name, upload_names | set(produced))
                notes.append(f"task '{task.id}': output '{out.name}' has the name of an uploaded document; "
                             f"named '{fresh}'")
                renamed[out.name] = fresh
                out = replace(out, name=fresh)
            if out.name in produced:
                notes.append(f"task '{task.id}': dropped output '{out.name}', already produced by "
                             f"task '{produced[out.name]}'")
                continue
            if out.name not in upload_names:
                produced[out.name] = task.id
            outputs.append(out)
        same = (agent, " ".join(instructions.lower().split()), tuple(task.inputs))
        if same in seen:  # a small model may repeat a task word for word
            notes.append(f"task '{task.id}': dropped, it repeats task '{seen[same]}'")
            alias[task.id] = seen[same]
            continue
        seen[same] = task.id
        tasks.append(replace(task, agent=agent, instructions=instructions, depends_on=depends,
                             outputs=outputs))
    if alias:
        tasks = [replace(t, depends_on=list(dict.fromkeys(alias.get(d, d) for d in t.depends_on
                                                          if alias.get(d, d) != t.id)))
                 for t in tasks]
    tasks = _without_cycles(tasks, notes)
    outputs_named = {o.name for t in tasks for o in t.outputs}
    tasks = [_known_inputs(t, upload_names, outputs_named, notes) for t in tasks]
    tasks = _link_inputs(tasks, ids, notes)
    named = [replace(d, name=renamed.get(d.name, d.name)) for d in plan.final_documents]
    tasks = _makers_for_finals(named, tasks, produced, list(uploads), formats, notes)
    finals = _final_documents(named, tasks, produced, upload_names, notes)
    return replace(plan, tasks=tasks, final_documents=finals), notes


def _free_name(name: str, taken: set[str]) -> str:
    """`name` with the first number that makes it new ("summary.docx" -> "summary-2.docx")."""
    stem, dot, ext = name.rpartition(".")
    stem, dot = (stem, dot) if dot else (ext, "")
    ext = ext if dot else ""
    return next(n for i in range(2, len(taken) + 3) if (n := f"{stem}-{i}{dot}{ext}") not in taken)


def deliverable(task: TaskSpec, formats: Mapping[str, Collection[str]],
                notes: list[str]) -> tuple[str, list[OutputSpec]]:
    """The agent and outputs of a task asked for files its agent cannot make (an Excel workbook of the
    summarizer): the one agent that makes every file the task names takes the task (the file format
    is capability data, not a reading of the words); when none or several do, the files the agent
    cannot make are dropped, and it delivers what it can."""
    bad = undeliverable(task, formats)
    if not bad:
        return task.agent, task.outputs
    wanted = {out_format(o) for o in task.outputs if out_format(o)}
    able = [a for a, made in formats.items() if wanted <= set(made)]
    names = ", ".join(o.name for o in bad)
    if len(able) == 1:
        notes.append(f"task '{task.id}': agent '{task.agent}' cannot deliver {names}; the task goes to "
                     f"'{able[0]}', which delivers {', '.join('.' + f for f in sorted(wanted))}")
        return able[0], task.outputs
    notes.append(f"task '{task.id}': dropped output {names}, which agent '{task.agent}' cannot deliver")
    return task.agent, [o for o in task.outputs if o not in bad]


def _without_cycles(tasks: list[TaskSpec], notes: list[str]) -> list[TaskSpec]:
    """Dependencies in a cycle: in each cycle, the one on a task listed later (or on itself) is
    dropped, so the tasks run in the order the plan lists them where it has to choose."""
    position = {t.id: n for n, t in enumerate(tasks)}
    deps = {t.id: list(t.depends_on) for t in tasks}

    while found := cycle_of(deps):
        edges = list(zip(found, found[1:], strict=False))  # (task, a task it depends on)
        task_id, dep = max(edges, key=lambda e: position[e[1]] - position[e[0]])
        deps[task_id].remove(dep)
        notes.append(f"task '{task_id}': dropped its dependency on '{dep}', which closed a cycle "
                     f"({' -> '.join(found)})")
    return [replace(t, depends_on=deps[t.id]) if deps[t.id] != t.depends_on else t for t in tasks]


def _known_inputs(task: TaskSpec, uploads: set[str], outputs: set[str], notes: list[str]) -> TaskSpec:
    """An input no document and no other task has (a file the task itself is to make included): the
    only upload when there is just one, else dropped."""
    inputs: list[str] = []
    own = {o.name for o in task.outputs} - uploads
    for name in task.inputs:
        if name in uploads or (name in outputs and name not in own):
            inputs.append(name)
            continue
        why = "is its own output" if name in own else "does not exist"
        if len(uploads) == 1:
            [only] = uploads
            notes.append(f"task '{task.id}': input '{name}' {why}; it reads '{only}' instead")
            name = only
        else:
            notes.append(f"task '{task.id}': dropped input '{name}', which "
                         + ("it is to make itself" if name in own else "no document or task has"))
            continue
        if name not in inputs:
            inputs.append(name)
    return replace(task, inputs=inputs) if inputs != task.inputs else task


def _link_inputs(tasks: list[TaskSpec], ids: set[str], notes: list[str]) -> list[TaskSpec]:
    """A task that reads another task's output depends on that task (unless that makes a cycle)."""
    producer = {out.name: t.id for t in tasks for out in t.outputs}
    deps = {t.id: set(t.depends_on) for t in tasks}

    def reaches(start: str, goal: str) -> bool:
        seen, stack = set(), [start]
        while stack:
            node = stack.pop()
            if node == goal:
                return True
            if node not in seen:
                seen.add(node)
                stack.extend(deps.get(node, ()))
        return False

    linked = []
    for task in tasks:
        added = []
        for name in task.inputs:
            source = producer.get(name)
            if (source and source != task.id and source in ids and source not in deps[task.id]
                    and not reaches(source, task.id)):
                deps[task.id].add(source)
                added.append(source)
                notes.append(f"task '{task.id}': reads '{name}', so it now depends on task '{source}'")
        linked.append(replace(task, depends_on=task.depends_on + added) if added else task)
    return linked


def _makers_for_finals(named: list[OutputSpec], tasks: list[TaskSpec], produced: dict[str, str],
                       uploads: list[str], formats: Mapping[str, Collection[str]],
                       notes: list[str]) -> list[TaskSpec]:
    """A final document no task produces, of a format only one agent makes (the table "as Excel" a
    0.5B model lists among the files the user gets without planning the task that makes it): that
    agent gets a task delivering it, over the uploads the plan works on (all of them when no task reads
    one). The model named the file; its format, capability data, names the agent. A format several
    agents or none make is left to `_final_documents` (dropped, said so)."""
    taken = {t.id for t in tasks}
    read = [name for t in tasks for name in t.inputs if name in uploads]
    sources = list(dict.fromkeys(read)) or list(uploads)
    added: list[TaskSpec] = []
    for doc in named:
        if doc.name in produced or doc.name in uploads or not sources:
            continue
        makers = makers_of(out_format(doc), formats) if out_format(doc) else []
        if len(makers) != 1:
            continue
        number = len(taken) + 1
        while f"t{number}" in taken:
            number += 1
        task_id = f"t{number}"
        taken.add(task_id)
        produced[doc.name] = task_id
        purpose = f" ({doc.purpose.strip()})" if doc.purpose.strip() else ""
        added.append(TaskSpec(task_id, makers[0], f"Deliver {doc.name}{purpose} from {', '.join(sources)}.",
                              list(sources), [doc]))
        notes.append(f"final document {doc.name} is produced by no task; task '{task_id}' ({makers[0]}, "
                     f"which makes .{out_format(doc)}) delivers it from {', '.join(sources)}")
    return tasks + added


def _final_documents(named: list[OutputSpec], tasks: list[TaskSpec], produced: dict[str, str],
                     uploads: set[str], notes: list[str]) -> list[OutputSpec]:
    kept = [d for d in named if d.name in produced or d.name in uploads]
    unknown = [d.name for d in named if d not in kept]
    if not unknown:
        return named
    if kept:
        notes.append(f"dropped final documents no task produces: {', '.join(unknown)}")
        return kept
    # None of the named ones exists: the round delivers what the last tasks produce.
    used = {name for t in tasks for name in t.inputs}
    derived = [o for t in tasks for o in t.outputs if o.name not in used] or \
        [o for t in tasks for o in t.outputs]
    shown = ", ".join(o.name for o in derived) or "none"
    notes.append(f"final documents {', '.join(unknown)} are produced by no task; "
                 f"taken from the tasks' outputs instead: {shown}")
    return derived


def steps_announced(plan: Plan, language: str) -> Plan:
    """The plan with its answer the announcement of its steps, in `language`."""
    steps = "; ".join(say("step_agent", language, agent=t.agent) for t in plan.tasks)
    return replace(plan, answer=say("plan_steps", language, n=len(plan.tasks), steps=steps))


def with_a_task(plan: Plan, request: str, documents: Sequence[str], agents: Collection[str]) -> Plan:
    """A plan without tasks given one that does the request: the analyst over the documents, else the
    writer (the built-in planner's plan, when it stands in for a model that could not plan: its own
    answer-only reply is written for a round without a model)."""
    if plan.tasks:
        return plan
    agent = "analyst" if documents and "analyst" in agents else "writer"
    if agent not in agents:
        return plan
    return replace(plan, tasks=[TaskSpec(id="t1", agent=agent, instructions=request,
                                         inputs=list(documents) if agent == "analyst" else [])])


def _said(text: str) -> str:
    return " ".join(re.findall(r"\w+", text.casefold()))


@lru_cache(maxsize=8)
def _copyable(examples: tuple[tuple[str, str], ...]) -> tuple[str, ...]:
    # What a task could copy of the worked examples, as `_said` words. The examples are the planning
    # prompt's constants (`prompt.examples`): read once, not on every plan (their JSON parsed and their
    # sentences scanned again cost ~0.2 ms a plan).
    copied: list[str] = []
    for request, answer in examples:
        asked = request.split("\n")[1] if "\n" in request else request
        firsts = [str(t.get("instructions", "")).split(". ")[0] for t in json.loads(answer).get("objWorkplan", [])]
        copied += [_said(s) for s in [asked, *firsts] if len(_said(s).split()) >= 3]
    return tuple(copied)


def unexampled(plan: Plan, prompt: str, examples: Sequence[tuple[str, str]]) -> tuple[Plan, list[str]]:
    """A task whose instructions copy a worked example of the planning prompt (its request, or the
    first sentence of one of its tasks) that the user's request does not say does the request instead.
    Qwen 0.5B, asked about a kettle's manual, planned the analyst with "What is the capital of France?
    Cite the passage.", the answer-only example's question, and the analyst answered that."""
    copied = _copyable(tuple(examples))
    said = _said(prompt)
    notes, tasks = [], []
    for task in plan.tasks:
        own = _said(task.instructions)
        hit = next((c for c in copied if c in own and c not in said), None)
        if hit:
            notes.append(f"task '{task.id}': its instructions copy a worked example ('{hit}'): it does the "
                         "user's request instead")
            task = replace(task, instructions=prompt)
        tasks.append(task)
    return (replace(plan, tasks=tasks), notes) if notes else (plan, [])
