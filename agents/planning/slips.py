"""A small model's slips in what a planned task is told and reads, undone without a model call. Pure.

Qwen2.5 0.5B, shown the workflow's documents as catalogue lines and the earlier rounds as turns,
copies them into its tasks: "Find the entry fee in sommerfest.html (html, 1 KB, 1 tables, round 1,
uploaded): begins "Sommerfest 2024 ..."" sent the analyst searching for "uploaded" and "begins",
and "Plan: I have planned 1 step: run the agent writer. Tasks: t1 writer: ..." became a writer's
whole instruction for "Now translate that to German.". And asked to "Summarise the second one
only.", it read the first; asked for "die Jahressummen als CSV-Datei", it planned a writer's Word
file. Each fix is reported in a sentence, like `agents.planning.repairs`' fixes.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Mapping, Sequence
from dataclasses import replace
from typing import Any

from agents.base import OutputSpec, Plan
from agents.language import ANSWER, named_formats, pointed_at
from agents.phrases import say
from agents.planning.plan import out_format
from agents.planning.repairs import deliverable
from agents.tasks.outputs import stem_of, title_stem
from agents.toolkit.matching import matching_blocks

COPIED = 24  # characters: a span this long that the instructions share with the material, not the request
_PIECE, _SLIP = 4, 3  # a matched piece this long, this few characters from the next, continues a copy
_OWN_WORDS = 3  # instructions with fewer words of their own than this once the copies are out say nothing
_WORD = re.compile(r"[^\W\d_]{2,}")
# difflib matched every character of the instructions against every one of the material: 315 x 1,779
# characters took 14.5 ms here, what a text function takes over about 22,000 characters (`LONG_TEXT`);
# `matching_blocks` finds the same blocks in about a third of that (kept as it was: the weight errs long).
PAIRS_PER_CHARACTER = 25


def _copies(text: str, material: str, request: str) -> list[tuple[int, int]]:
    """The spans of `text` (start, end) that copy `material` and are not words of the request. A copy
    with a slip in it ("37 KB" for "36 KB") is one span: matches a few characters apart join."""
    low, asked = text.casefold(), " ".join(request.casefold().split())
    runs: list[list[int]] = []  # start, end, characters matched
    for a, _, size in matching_blocks(low, material.casefold(), _PIECE):
        if runs and a - runs[-1][1] <= _SLIP:
            runs[-1][1:] = [a + size, runs[-1][2] + size]
        else:
            runs.append([a, a + size, size])
    return [(start, end) for start, end, matched in runs
            if matched >= COPIED and " ".join(low[start:end].split()) not in asked]


def _without(text: str, spans: Sequence[tuple[int, int]]) -> str:
    """`text` with the spans cut out and what they leave behind tidied: empty brackets and quotes,
    doubled blanks, a stray colon or semicolon."""
    keep = [True] * len(text)
    for start, end in spans:
        keep[start:end] = [False] * (end - start)
    cut = "".join(c for c, k in zip(text, keep, strict=True) if k)
    cut = re.sub(r"\(\s*\)|\[\s*\]|\"\s*\"|“\s*”|«\s*»", " ", cut)
    cut = re.sub(r"\s+([.,;:!?])", r"\1", " ".join(cut.split()))
    return re.sub(r"[:;,]+(?=[.!?]|$)", "", cut).strip(" :;,-")


def _own_words(text: str, names: Sequence[str]) -> int:
    for name in names:
        text = text.replace(name, " ")
    return len(_WORD.findall(text))


def uncopied(plan: Plan, request: str, catalogue: Mapping[str, str], earlier: Sequence[str],
             replanned: Collection[str] = ()) -> tuple[Plan, list[str]]:
    """The plan with what its tasks' instructions copy from the planning prompt taken out.

    `catalogue`: each document's name and the description its catalogue line gives it (sizes, how it
    begins): never an instruction, always cut. `earlier`: the assistant's earlier turns the prompt
    showed (plans, final answers): an instruction may quote from them, so they are cut only when the
    instruction is nothing else. Instructions left with fewer than three words of their own (the
    documents' names not counted) become the user's request. `replanned`: the instructions of the
    tasks of a stopped round, which the round that continues it plans again word for word (so that
    what they delivered is reused): those are kept."""
    names = list(catalogue)
    again = {" ".join(i.split()) for i in replanned}
    notes, tasks = [], []
    for task in plan.tasks:
        text = task.instructions
        if " ".join(text.split()) in again:
            tasks.append(task)
            continue
        spans = [s for description in catalogue.values() for s in _copies(text, description, request)]
        kept = _without(text, spans) if spans else text
        echoed = [s for turn in earlier for s in _copies(kept, turn, request)]
        if echoed and _own_words(_without(kept, echoed), names) < _OWN_WORDS:
            kept = ""
        if kept == text:
            tasks.append(task)
            continue
        if _own_words(kept, names) < _OWN_WORDS:
            kept = request
            notes.append(f"task '{task.id}': its instructions only copied the planning prompt's documents or "
                         "earlier rounds: it does the user's request instead")
        else:
            notes.append(f"task '{task.id}': what its instructions copied from the documents' catalogue lines "
                         "was taken out")
        tasks.append(replace(task, instructions=kept))
    return (replace(plan, tasks=tasks), notes) if notes else (plan, [])


def pointed_inputs(plan: Plan, request: str, facts: Sequence[Mapping[str, Any]]) -> tuple[Plan, list[str]]:
    """The plan with the documents the request points at explicitly (a file's name, "the second one",
    "that", "the summary of round 2": `agents.language.pointed_at`) read by each of its first tasks
    that reads none of them. A document the workflow produced in the round an earlier answer pointed
    at is that answer too ("translate that" read as the file the summary went to is kept)."""
    pointed = pointed_at(request, facts)
    if not pointed:
        return plan, []
    rounds = {int(f.get("round") or 0) for f in facts if f["name"] in pointed and f.get("origin") == ANSWER}
    same = set(pointed) | {str(f["name"]) for f in facts
                           if f.get("origin") == "produced" and int(f.get("round") or 0) in rounds}
    catalogue = {str(f["name"]) for f in facts}
    notes, tasks = [], []
    for task in plan.tasks:
        read = [i for i in task.inputs if i in catalogue]
        if task.depends_on or same & set(read):
            tasks.append(task)
            continue
        inputs = pointed + [i for i in task.inputs if i not in catalogue]
        notes.append(f"task '{task.id}': the request points at {', '.join(pointed)}, which it did not read "
                     f"({', '.join(read) or 'nothing'}): it reads them")
        tasks.append(replace(task, inputs=inputs))
    return (replace(plan, tasks=tasks), notes) if notes else (plan, [])


def content_stem(task: Any, language: str, request: str) -> str:
    """A file named for what its task makes of what it reads ("summary-of-quarterly-report"), not for the
    words of the request ("summarise-this-document-in-english-and"); the request's words where the task's
    work has no name of its own."""
    if task.agent == "summarizer" and task.inputs:
        return title_stem(say("summary_of", language, doc=stem_of(task.inputs[0])))
    return title_stem(request)


def asked_formats(plan: Plan, request: str, formats: Mapping[str, Collection[str]],
                  facts: Sequence[Mapping[str, Any]] = ()) -> tuple[Plan, list[str]]:
    """The plan with the file types the request names outright (CSV, Excel, Word, Markdown:
    `agents.language.named_formats`) that none of its tasks delivers made by its last task (one no
    other task waits for), named like that task's first output, else like the request; the one agent
    that makes all the task's files takes it when its own cannot (`agents.planning.repairs.deliverable`).
    A type some document of the workflow (`facts`) has names that document ("what does the Excel
    say"), not a file to make."""
    made = {out_format(o) for t in plan.tasks for o in t.outputs}
    held = {str(f.get("ext") or "").lower() for f in facts}
    missing = [f for f in named_formats(request) if f not in made and f not in held]
    waited_for = {d for t in plan.tasks for d in t.depends_on}
    last = next((t for t in reversed(plan.tasks) if t.id not in waited_for), None)
    if not missing or last is None:
        return plan, []
    stem = stem_of(last.outputs[0].name) if last.outputs else content_stem(last, plan.language, request)
    wanted = replace(last, outputs=[*last.outputs, *(OutputSpec(name=f"{stem}.{f}", type=f, purpose="file")
                                                     for f in missing)])
    notes = [f"task '{last.id}': the request asks for {', '.join('.' + f for f in missing)}, which no task "
             f"delivered: it delivers {', '.join(o.name for o in wanted.outputs[len(last.outputs):])}"]
    agent, outputs = deliverable(wanted, formats, notes)
    tasks = [replace(wanted, agent=agent, outputs=outputs) if t is last else t for t in plan.tasks]
    return replace(plan, tasks=tasks), notes


def compared(plan: Plan, catalogue: Mapping[str, str], earlier: Sequence[str]) -> int:
    """The work of `uncopied` in characters of text, as `agents.toolkit.cpu.off_loop_if_long` weighs it."""
    material = sum(len(d) for d in catalogue.values()) + sum(len(t) for t in earlier)
    return sum(len(t.instructions) for t in plan.tasks) * material // PAIRS_PER_CHARACTER

