"""Re-planning after a task failed or was skipped: the rest of the plan, revised. Pure, no I/O.

Finished tasks are kept as they are (their results stand and they never run again); what failed
is dropped or replaced; what was skipped because of it runs without it where it can.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field, replace

from agents.base import Plan, TaskSpec
from agents.plan import plan_to_json
from agents.toolkit.sentences import split_sentences


@dataclass
class Revision:
    """A revised plan and why, in a sentence a person reads."""

    plan: Plan
    why: str
    dropped: list[str] = field(default_factory=list)
    added: list[str] = field(default_factory=list)
    review: bool = False  # it waits for the user's review before it runs (the round is under plan review)


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
    writer and added no workbook; shown the plan and the list of changes, it added a data_extractor task
    (without naming its outputs) in 3 of 3 runs (tests/api/test_realmodel_rounds.py)."""
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


def _agent(plan: Plan, task_id: str) -> str:
    return next((t.agent for t in plan.tasks if t.id == task_id), "?")
