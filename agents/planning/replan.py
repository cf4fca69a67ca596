"""Re-planning after a task failed or was skipped, or the user steered the round: the rest of the plan,
revised (by the model, else offline). No I/O but the model's calls: the app writes the revision.

Finished tasks are kept as they are (their results stand and they never run again); what failed
is dropped or replaced; what was skipped because of it runs without it where it can.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import Any, Protocol

from agents.base import Plan, TaskSpec
from agents.errors import PlanError
from agents.language import split_sentences
from agents.model import Model, ModelError, Usage
from agents.planning.manager import PlanLimits, RoundInput, make_plan, render_plan_message
from agents.planning.plan import plan_to_json, validate_plan
from agents.planning.scheduler import BUDGET
from agents.registry import Registry

# How a steer's words follow the plan so far in what the model revising the plan reads.
ASKED_WHILE_RUNNING = "The user asked, while the plan ran: "


@dataclass
class Revision:
    """A revised plan and why, in a sentence a person reads."""

    plan: Plan
    why: str
    dropped: list[str] = field(default_factory=list)
    added: list[str] = field(default_factory=list)
    review: bool = False  # it waits for the user's review before it runs (the round is under plan review)

    @property
    def record(self) -> dict[str, Any]:
        """The revised plan as its message stores it (`Plan.record`)."""
        return self.plan.record()

    @property
    def work_plan(self) -> str:
        """The revised plan's work plan as Markdown (its message's part under the heading; the
        manager's answer stays in the round's plan message)."""
        rendered = render_plan_message(self.plan)
        return rendered[max(0, rendered.find("### ")):]


def revise_offline(plan: Plan, done: set[str], failed: dict[str, str], skipped: dict[str, str],
                   uploads: list[str]) -> Revision | None:
    """What a model that writes nothing new can do: drop the failed tasks, and run each task skipped
    because of them without them (on the uploaded documents instead of their outputs), or drop it
    too when what it needs is gone. None: nothing would run anew."""
    producers = {o.name: t.id for t in plan.tasks for o in t.outputs}
    gone = set(failed)
    kept: list[TaskSpec] = []
    notes = [f"task {tid} ({_agent(plan, tid)}) failed ({reason.rstrip('.')}) and is dropped"
             for tid, reason in failed.items()]
    rerun: list[str] = []
    for task in plan.tasks:
        if task.id in done:
            kept.append(task)
            continue
        if task.id in gone or task.id not in skipped:
            continue
        deps = [d for d in task.depends_on if d not in gone]
        inputs = [i for i in task.inputs if producers.get(i) not in gone]
        lost = [i for i in task.inputs if i not in inputs]
        if lost and not inputs and not uploads:
            gone.add(task.id)
            notes.append(f"task {task.id} ({task.agent}) is dropped: its input {', '.join(lost)} is missing")
            continue
        if lost and not inputs:
            inputs = list(uploads)
        kept.append(replace(task, depends_on=deps, inputs=inputs))
        rerun.append(task.id)
        how = f"works from {', '.join(inputs)}" if lost else "runs without it"
        notes.append(f"task {task.id} ({task.agent}) {how}")
    if not rerun:
        return None
    finals = [d for d in plan.final_documents if producers.get(d.name) not in gone]
    revised = replace(plan, tasks=kept, final_documents=finals)
    return Revision(revised, "; ".join(notes), dropped=sorted(gone - set(done)), added=rerun)


def merge_revision(plan: Plan, proposed: Plan, done: set[str], used: set[str], number: int) -> Plan:
    """A model's revised plan on top of the finished tasks: its tasks with a finished task's id are
    that task (it does not run again); ids used before in the round get a suffix, so each task of the
    round keeps its own messages."""
    renamed = {t.id: (f"{t.id}-r{number}" if t.id in used else t.id) for t in proposed.tasks if t.id not in done}
    finished = [t for t in plan.tasks if t.id in done]
    fresh = [replace(t, id=renamed[t.id], depends_on=[renamed.get(d, d) for d in t.depends_on])
             for t in proposed.tasks if t.id not in done]
    return replace(proposed, tasks=finished + fresh)


def revision_prompt(prompt: str, plan: Plan, done: dict[str, str], failed: dict[str, str],
                    skipped: dict[str, str]) -> str:
    """The request with what happened to the plan so far, for the model that plans the rest."""
    lines = [prompt, "", "A work plan for this request was run:", str(plan_to_json(plan)["objWorkplan"]), ""]
    lines += [f"- Task {tid} finished (keep it; do not plan it again): {text[:300]}" for tid, text in done.items()]
    lines += [f"- Task {tid} failed: {reason}" for tid, reason in failed.items()]
    lines += [f"- Task {tid} was skipped: {reason}" for tid, reason in skipped.items()]
    lines += ["", "Plan only the work still to do, another way where a task failed. Tasks may depend on the "
                  "finished ones by their ids."]
    return "\n".join(lines)


def changes_prompt(plan: Plan, feedback: str) -> str:
    """What a model revising a plan at the user's request reads besides the request: the plan proposed,
    the user's feedback as a numbered list of changes to make, and that the answer is the whole new
    plan. Measured 2026-11-26 on Qwen2.5-Coder-0.5B: with only the feedback joined to the request and
    the old plan in the history, its revised plan for "Also give me the table as Excel." kept the PDF
    writer and added no workbook; shown the plan and the list of changes, it added a task for it, whose
    agent only the retired word-pattern repairs made the data extractor. With the format-to-agents table
    in the planning prompt it lists the workbook among objFinalDocuments without a task making it, and
    the one agent that makes .xlsx gets that task (`agents.planning.repairs`; tests/rounds/test_realmodel_rounds.py)."""
    shown = plan_to_json(plan)
    proposed = {"objFinalDocuments": shown["objFinalDocuments"], "objWorkplan": shown["objWorkplan"]}
    changes = [s.strip() for s in split_sentences(feedback) if s.strip()] or [feedback.strip()]
    return "\n".join([
        "The work plan proposed for this request (it has not run):",
        json.dumps(proposed, ensure_ascii=False), "",
        "The user asks for these changes to it:",
        *(f"{n}. {change}" for n, change in enumerate(changes, 1)), "",
        "Write the complete new work plan: the proposed one with every change made. Keep the tasks no change "
        "is about; change or remove what a change asks to; for anything a change asks for that the plan does "
        "not do yet, add a task whose outputs hold the document it delivers, and list that document in "
        "objFinalDocuments."])


def _on(task: TaskSpec) -> str:
    return f"{task.id} ({task.agent}{' of ' + ', '.join(task.inputs) if task.inputs else ''})"


def differences(before: list[TaskSpec], after: list[TaskSpec]) -> list[str]:
    """What a revision changed in the work still to do, task by task, in sentences a person reads: each
    task of `before` paired with one of `after` by the same agent, those that share the most inputs
    first; what it no longer or now reads, its new instructions; the tasks dropped and added."""
    pairs = sorted(((len(set(o.inputs) & set(n.inputs)), -i, -j) for i, o in enumerate(before)
                    for j, n in enumerate(after) if o.agent == n.agent), reverse=True)
    paired: dict[int, int] = {}
    for _, i, j in pairs:
        if -i not in paired and -j not in paired.values():
            paired[-i] = -j
    notes: list[str] = []
    for i, old in enumerate(before):
        if i not in paired:
            notes.append(f"{_on(old)} dropped")
            continue
        new = after[paired[i]]
        gone = [f for f in old.inputs if f not in new.inputs]
        came = [f for f in new.inputs if f not in old.inputs]
        said = ([f"no longer reads {', '.join(gone)}"] if gone else []) + ([f"now reads {', '.join(came)}"] if came else [])
        if new.instructions.strip() != old.instructions.strip():
            text = new.instructions.strip()
            said.append(f"is now asked “{text if len(text) <= 120 else text[:117] + '...'}”")
        if said:
            notes.append(f"{old.agent} task {new.id} " + " and ".join(said))
    notes += [f"{_on(t)} added" for j, t in enumerate(after) if j not in paired.values()]
    return notes


def _agent(plan: Plan, task_id: str) -> str:
    return next((t.agent for t in plan.tasks if t.id == task_id), "?")


class Outcome(Protocol):
    """What a revision needs of a task's outcome: whether it delivered, its text, why it failed."""

    ok: bool
    text: str
    error: str


async def revise_after_failures(inp: RoundInput, plan: Plan, outcomes: Mapping[str, Outcome],
                                skipped: Mapping[str, str], number: int, model: Model, registry: Registry,
                                max_tasks: int) -> tuple[Revision | None, Usage | None]:
    """The plan revised after its failed and skipped tasks (not those skipped for the budget), and what
    asking the model cost (None: it was not asked). A real model plans the rest again, told the failed
    tasks' errors and the finished tasks' results; when it cannot, or the model is offline, the offline
    revision. None: nothing failed, or nothing better can be planned."""
    ids = {t.id for t in plan.tasks}
    # A task the user did not approve failed with their reason: revised around like any failure.
    failed = {t: o.error for t, o in outcomes.items() if t in ids and not o.ok}
    skipped = {t: r for t, r in skipped.items() if t in ids and r != BUDGET}
    if not failed and not skipped:
        return None, None
    done = {t: o for t, o in outcomes.items() if t in ids and o.ok}
    uploads = [d.name for d in inp.documents if not d.problem]
    revision, usage = None, None
    if not model.extractive:
        asked = replace(inp, prompt=revision_prompt(inp.prompt, plan, {t: o.text for t, o in done.items()},
                                                    failed, skipped))
        try:
            outcome = await make_plan(asked, model, registry, PlanLimits(max_tasks=max_tasks))
            usage = outcome.usage
            merged = merge_revision(plan, outcome.plan, set(done), ids | set(outcomes), number)
            if merged.tasks != plan.tasks and not validate_plan(merged, registry.names(), uploads,
                                                                max_tasks + len(done), registry.formats()):
                added = [t.id for t in merged.tasks if t.id not in done]
                revision = Revision(merged, "the project manager planned the rest again after "
                                    + "; ".join([f"task {t} failed ({r.rstrip('.')})" for t, r in failed.items()]
                                                + [f"task {t} was skipped" for t in skipped]),
                                    dropped=sorted(set(failed) | set(skipped)), added=added)
        except (PlanError, ModelError):
            revision = None
    return revision or revise_offline(plan, set(done), failed, skipped, uploads), usage


async def revise_for_steer(inp: RoundInput, plan: Plan, outcomes: Mapping[str, Outcome], request: str,
                           number: int, model: Model, registry: Registry,
                           max_tasks: int) -> tuple[Revision, Usage | None]:
    """The unfinished part of the plan planned again with the user's new `request` (the plan goes on
    unchanged, said so, when it cannot be), and what asking the model cost."""
    ids = {t.id for t in plan.tasks}
    done = {t: o for t, o in outcomes.items() if t in ids and o.ok}
    uploads = [d.name for d in inp.documents if not d.problem]
    # A real model sees the plan so far and what finished; the offline model plans from the new request.
    prompt = request if model.extractive else (
        revision_prompt(inp.prompt, plan, {t: o.text for t, o in done.items()}, {}, {})
        + f"\n\n{ASKED_WHILE_RUNNING}{request}")
    usage: Usage | None = None
    merged: Plan | None = None
    try:
        outcome = await make_plan(replace(inp, prompt=prompt), model, registry, PlanLimits(max_tasks=max_tasks))
        usage = outcome.usage
        merged = merge_revision(plan, outcome.plan, set(done), ids | set(outcomes), number)
        if validate_plan(merged, registry.names(), uploads, max_tasks + len(done), registry.formats()):
            merged = None
    except (PlanError, ModelError):
        merged = None
    unfinished = [t.id for t in plan.tasks if t.id not in done]
    quoted = request if len(request) <= 160 else request[:157] + "..."
    if merged is None:  # the request is noted; nothing better could be planned
        return Revision(plan, f"the user asked “{quoted}” during the round; the plan could not be "
                              "revised with it and goes on unchanged"), usage
    added = [t.id for t in merged.tasks if t.id not in done]
    changes = ([f"unfinished task{'s' if len(unfinished) > 1 else ''} {', '.join(unfinished)} replaced by "
                f"{', '.join(added) or 'nothing'}"] if unfinished else [f"added {', '.join(added) or 'nothing'}"])
    changes += differences([t for t in plan.tasks if t.id not in done], [t for t in merged.tasks if t.id not in done])
    if done:
        changes.append(f"finished {', '.join(sorted(done))} kept")
    return Revision(merged, f"the user asked “{quoted}” during the round; " + "; ".join(changes),
                    dropped=unfinished, added=added), usage
