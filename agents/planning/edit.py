"""A person's edit of a plan under review (`{"tasks": [...], "finalDocuments": [...]}`, the shape of the plan
message's `metadata.plan`): read and checked by the rules a model's plan is (`plan`: the registry's agents
and their formats, the round's readable documents, MAX_TASKS_PER_PLAN), its output names by the service's
own naming of the files it stores, and given back with its record and its message; `PlanEditError` lists
every problem at once, in the wire's names. Pure: the Runner runs it off the event loop (`Runner.edited`)."""

from __future__ import annotations

from collections.abc import Callable, Collection, Mapping
from dataclasses import dataclass
from typing import Any

from agents.base import Plan
from agents.errors import PlanEditError, PlanFormatError
from agents.planning.manager import render_plan_message
from agents.planning.plan import parse_plan, too_many_tasks, validate_plan

EDIT_FIELDS = ("tasks", "finalDocuments")


@dataclass(frozen=True)
class EditedPlan:
    """The plan a person edited, checked: the plan, its stored record and its chat message."""

    plan: Plan
    record: dict[str, Any]
    message: str


def oversized(edit: Any, max_tasks: int) -> None:
    """`PlanEditError` with the size alone when the edit has over `max_tasks` tasks: told before anything
    else is read of it (a 10,000-task edit is not parsed)."""
    tasks = edit.get("tasks", []) if isinstance(edit, dict) else []
    if isinstance(tasks, list) and len(tasks) > max_tasks:
        raise PlanEditError([too_many_tasks(len(tasks), max_tasks)])


def checked_edit(edit: Any, current: Plan, agents: Collection[str], documents: Collection[str], max_tasks: int,
                 formats: Mapping[str, Collection[str]], file_name: Callable[[str], str]) -> EditedPlan:
    """`edit` as a plan in `current`'s language with its answer, or `PlanEditError` listing every reason it
    cannot run; `file_name(name)` is the name the service would store a file named `name` under."""
    problems: list[str] = []
    if not isinstance(edit, dict):
        problems.append("plan must be an object with tasks and finalDocuments")
        edit = {}
    unknown = sorted(set(edit) - set(EDIT_FIELDS))
    if unknown:
        problems.append(f"plan has unknown fields {unknown}: only tasks and finalDocuments are taken")
    plan = None
    try:
        plan = parse_plan({"userLanguage": current.language, "objUserResponse": current.answer,
                           "objWorkplan": edit.get("tasks", []), "objFinalDocuments": edit.get("finalDocuments", [])})
    except PlanFormatError as exc:
        problems.extend(exc.errors)
    if plan is not None:
        problems.extend(validate_plan(plan, list(agents), list(documents), max_tasks, formats))
        problems.extend(_unplain_names(plan, file_name))
    if problems or plan is None:
        raise PlanEditError([_wire(p) for p in problems])
    return EditedPlan(plan, plan.record(), render_plan_message(plan))


def _unplain_names(plan: Plan, file_name: Callable[[str], str]) -> list[str]:
    """Each output name that is not a plain file name (folders, control characters), as uploads are named."""
    named = [(f"task '{t.id}': output", o.name) for t in plan.tasks for o in t.outputs]
    named += [("final document", d.name) for d in plan.final_documents]
    return [f"{where} '{name}' is not a plain file name (no folders or control characters): "
            f"name it '{file_name(name)}'" for where, name in named if file_name(name) != name]


def _wire(problem: str) -> str:
    """A plan problem in the wire's names (the model's schema calls the tasks objWorkplan)."""
    return (problem.replace("objWorkplan[", "tasks[").replace("objWorkplan", "tasks")
            .replace("objFinalDocuments", "finalDocuments").replace("objUserResponse is empty and ", ""))
