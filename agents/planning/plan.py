"""The work plan: its JSON schema, parsing and validation. Pure, no I/O (its scheduler: `agents.planning.scheduler`)."""

from __future__ import annotations

import json
import re
from collections import Counter
from collections.abc import Collection, Mapping
from typing import Any

from agents.base import OutputSpec, Plan, TaskSpec
from agents.errors import PlanFormatError
from agents.language import language_words

# Key names follow the seed's project-manager outputs (objWorkplan, objFinalDocuments, ...).
_OUTPUT_SCHEMA: dict[str, Any] = {
    "type": "object",
    "additionalProperties": False,
    "required": ["name", "type", "purpose"],
    "properties": {
        "name": {"type": "string", "description": "file name with extension, e.g. report.docx"},
        "type": {"type": "string", "description": "extension or MIME type"},
        "purpose": {"type": "string"},
    },
}

# In the order a model writes them under grammar-constrained decoding: the work, then what it delivers
# (files with their formats), then the agent, chosen after the deliverable it must make.
_TASK_PROPERTIES: dict[str, Any] = {
    "id": {"type": "string"},
    "instructions": {"type": "string"},
    "outputs": {"type": "array", "items": _OUTPUT_SCHEMA},
    "agent": {"type": "string"},
    "inputs": {"type": "array", "items": {"type": "string"}},
    "dependsOn": {"type": "array", "items": {"type": "string"}},
}
TASK_KEYS = tuple(_TASK_PROPERTIES)


def plan_schema(agents: list[str] | None = None, max_tasks: int | None = None) -> dict[str, Any]:
    """The plan's JSON schema for one request: `agent` an enum of `agents`, at most `max_tasks`.

    The work plan comes before the final documents: with grammar-constrained decoding the model
    writes keys in schema order, so it plans the tasks before it names what they deliver.
    """
    task: dict[str, Any] = {"type": "object", "additionalProperties": False,
                            "required": list(_TASK_PROPERTIES), "properties": dict(_TASK_PROPERTIES)}
    if agents:
        task["properties"]["agent"] = {"type": "string", "enum": sorted(agents)}
    workplan: dict[str, Any] = {"type": "array", "items": task}
    if max_tasks is not None:
        workplan["maxItems"] = max_tasks
    return {
        "type": "object",
        "additionalProperties": False,
        "required": ["userLanguage", "objUserResponse", "objWorkplan", "objFinalDocuments"],
        "properties": {
            "userLanguage": {"type": "string", "description": "ISO 639-1 code of the user's language"},
            "objUserResponse": {"type": "string", "description": "answer to the user, in their language"},
            "objWorkplan": workplan,
            "objFinalDocuments": {"type": "array", "items": _OUTPUT_SCHEMA},
        },
    }


PLAN_SCHEMA: dict[str, Any] = plan_schema()

_CODE = re.compile(r"^[a-z]{2}(?:[-_][a-z0-9]+)?$")
_FENCE = re.compile(r"^\s*```(?:json)?\s*(.*?)\s*```\s*$", re.DOTALL)


def parse_plan(data: Any) -> Plan:
    """Turn the model's JSON (parsed or as text) into a `Plan`, or raise `PlanFormatError`."""
    if isinstance(data, (str, bytes)):
        text = data.decode() if isinstance(data, bytes) else data
        match = _FENCE.match(text)  # models like to wrap JSON in a Markdown fence
        try:
            data = json.loads(match.group(1) if match else text)
        except ValueError as exc:
            raise PlanFormatError([f"the answer is not valid JSON ({exc})"]) from None
    if not isinstance(data, dict):
        raise PlanFormatError(["the plan must be a JSON object"])
    errors: list[str] = []
    language = data.get("userLanguage", "")
    answer = data.get("objUserResponse", "")
    if not isinstance(language, str):
        errors.append("userLanguage must be a string")
    if not isinstance(answer, str):
        errors.append("objUserResponse must be a string")
    finals = _outputs(data.get("objFinalDocuments", []), "objFinalDocuments", errors)
    raw_tasks = data.get("objWorkplan", [])
    tasks: list[TaskSpec] = []
    if not isinstance(raw_tasks, list):
        errors.append("objWorkplan must be a list of tasks")
        raw_tasks = []
    for index, raw in enumerate(raw_tasks, 1):
        where = f"objWorkplan[{index}]"
        if not isinstance(raw, dict):
            errors.append(f"{where} must be an object")
            continue
        task_id = raw.get("id")
        agent = raw.get("agent")
        if not isinstance(task_id, str) or not task_id.strip():
            errors.append(f"{where} has no id")
            task_id = ""
        if not isinstance(agent, str):
            errors.append(f"{where} has no agent")
            agent = ""
        instructions = raw.get("instructions", "")
        if not isinstance(instructions, str):
            errors.append(f"{where}.instructions must be a string")
            instructions = ""
        tasks.append(TaskSpec(
            id=task_id.strip(),
            agent=agent.strip(),
            instructions=instructions,
            inputs=_strings(raw.get("inputs", []), f"{where}.inputs", errors),
            outputs=_outputs(raw.get("outputs", []), f"{where}.outputs", errors),
            depends_on=_strings(raw.get("dependsOn", []), f"{where}.dependsOn", errors),
        ))
    if errors:
        raise PlanFormatError(errors)
    return Plan(language=language_code(language), answer=answer,
                final_documents=finals, tasks=tasks)


def language_code(value: str) -> str:
    """An ISO 639-1 code from what a model wrote ("de", "de-CH", "German"); "" when unclear."""
    text = value.strip().lower()
    if _CODE.match(text):
        return text[:2]
    return language_words().get(text, "")


def plan_to_json(plan: Plan) -> dict[str, Any]:
    """The plan in the schema's shape, e.g. to show the model its rejected plan."""
    def out(o: OutputSpec) -> dict[str, str]:
        return {"name": o.name, "type": o.type, "purpose": o.purpose}

    return {
        "userLanguage": plan.language,
        "objUserResponse": plan.answer,
        "objFinalDocuments": [out(o) for o in plan.final_documents],
        "objWorkplan": [  # in the schema's order (TASK_KEYS), as a model is asked to write a task
            {"id": t.id, "instructions": t.instructions, "outputs": [out(o) for o in t.outputs], "agent": t.agent,
             "inputs": t.inputs, "dependsOn": t.depends_on}
            for t in plan.tasks
        ],
    }


def validate_plan(plan: Plan, registry_names: list[str] | set[str], document_names: list[str] | set[str],
                  max_tasks: int, formats: Mapping[str, Collection[str]] | None = None) -> list[str]:
    """Every reason the plan cannot run, each precise enough for the model to repair it. `formats`: the
    file formats each agent delivers, where it declares them (`Registry.formats`); a task asked for a
    file its agent cannot make is an error."""
    errors: list[str] = []
    formats = formats or {}
    agents = set(registry_names)
    uploads = set(document_names)
    if not plan.tasks and not plan.answer.strip():
        errors.append("objUserResponse is empty and objWorkplan has no task: answer the user or plan tasks")
    if len(plan.tasks) > max_tasks:  # first and alone: the checks below are for a plan of a size that can run
        return [*errors, too_many_tasks(len(plan.tasks), max_tasks)]
    uses = Counter(t.id for t in plan.tasks)
    for task_id in sorted(i for i, n in uses.items() if n > 1):
        errors.append(f"task id '{task_id}' is used by {uses[task_id]} tasks; ids must be unique")
    known = set(uses)
    producers: dict[str, str] = {}
    for task in plan.tasks:
        if task.agent not in agents:
            errors.append(f"task '{task.id}': unknown agent '{task.agent}'; "
                          f"available agents: {', '.join(sorted(agents))}")
        if not task.instructions.strip():
            errors.append(f"task '{task.id}': instructions are empty")
        for out in undeliverable(task, formats):
            errors.append(f"task '{task.id}': agent '{task.agent}' cannot deliver '{out.name}' "
                          f"(it delivers {', '.join('.' + f for f in formats[task.agent])})"
                          + "".join(f"; .{out_format(out)} is made by {', '.join(makers)}"
                                    for makers in [makers_of(out_format(out), formats)] if makers))
        for dep in task.depends_on:
            if dep not in known:
                errors.append(f"task '{task.id}' depends on '{dep}', which is not in the plan")
        for out in task.outputs:
            if out.name in uploads:
                errors.append(f"task '{task.id}': output '{out.name}' has the name of an uploaded document")
            elif out.name in producers:
                errors.append(f"task '{task.id}': output '{out.name}' is also produced by task "
                              f"'{producers[out.name]}'")
            else:
                producers[out.name] = task.id
    cycle = find_cycle(plan)
    if cycle:
        errors.append("tasks form a cycle: " + " -> ".join(cycle))
    else:
        errors.extend(_input_errors(plan, uploads, producers))
    for final in plan.final_documents:
        if final.name not in producers and final.name not in uploads:
            errors.append(f"final document '{final.name}' is not an output of any task")
    return errors


def too_many_tasks(count: int, max_tasks: int) -> str:
    """The size problem, told alone: a plan over the limit is not checked further."""
    return f"the plan has {count:,} tasks; at most {max_tasks} are allowed"


def out_format(out: OutputSpec) -> str:
    """The format of a planned document: its name's extension ("" without one: every agent names its
    files by the plan's extensions, so such a name is delivered by nobody and told by its own check)."""
    return out.name.rsplit(".", 1)[-1].lower() if "." in out.name else ""


def undeliverable(task: TaskSpec, formats: Mapping[str, Collection[str]]) -> list[OutputSpec]:
    """The task's outputs its agent cannot make (none when the agent declares no formats)."""
    made = formats.get(task.agent)
    return [o for o in task.outputs if made and out_format(o) and out_format(o) not in made]


def makers_of(fmt: str, formats: Mapping[str, Collection[str]]) -> list[str]:
    """The agents that deliver files of the format `fmt`, by name."""
    return sorted(a for a, made in formats.items() if fmt in made)


def _input_errors(plan: Plan, uploads: set[str], producers: dict[str, str]) -> list[str]:
    errors: list[str] = []
    deps = {t.id: t.depends_on for t in plan.tasks}
    for task in plan.tasks:
        made = [producers.get(name) for name in task.inputs if name not in uploads]
        ancestors = _ancestors(deps, task.id) if any(made) else set()  # only where a task's output is read
        for name in task.inputs:
            if name in uploads:
                continue
            producer = producers.get(name)
            if producer is None:
                available = ", ".join(sorted(uploads)) or "none"
                errors.append(f"task '{task.id}': input '{name}' is neither an uploaded document "
                              f"(uploaded: {available}) nor an output of a task")
            elif producer not in ancestors:
                errors.append(f"task '{task.id}': input '{name}' is an output of task '{producer}', "
                              f"but '{task.id}' does not depend on '{producer}'")
    return errors


def _ancestors(deps: Mapping[str, list[str]], task_id: str) -> set[str]:
    seen: set[str] = set()
    stack = list(deps.get(task_id, []))
    while stack:
        dep = stack.pop()
        if dep not in seen and dep in deps:
            seen.add(dep)
            stack.extend(deps[dep])
    return seen


def cycle_of(deps: Mapping[str, list[str]]) -> list[str]:
    """One cycle in `deps` (a task -> the tasks it depends on), closed and in the direction the
    dependencies point (["a", "b", "a"]: a depends on b, b on a), or [] when there is none; the
    tasks are tried in the mapping's order. Iterative and linear in tasks and dependencies: a
    cycle of 10,000 tasks is found like one of two (recursion ended in a RecursionError, a 500)."""
    state: dict[str, int] = {}  # 1 on the current path, 2 finished
    for root in deps:
        if root in state:
            continue
        path = [root]
        where = {root: 0}  # a node on the path -> its index there
        state[root] = 1
        stack = [iter(deps[root])]
        while stack:
            dep = next(stack[-1], None)
            if dep is None:
                node = path.pop()
                del where[node]
                state[node] = 2
                stack.pop()
            elif dep not in deps or state.get(dep) == 2:
                continue
            elif state.get(dep) == 1:
                return path[where[dep]:] + [dep]
            else:
                state[dep] = 1
                where[dep] = len(path)
                path.append(dep)
                stack.append(iter(deps[dep]))
    return []


def find_cycle(plan: Plan) -> list[str]:
    """The task ids of one dependency cycle, closed (["a", "b", "a"]), or [] when there is none; in
    execution order: a task comes after what it depends on."""
    return list(reversed(cycle_of({t.id: list(t.depends_on) for t in plan.tasks})))


def _strings(value: Any, where: str, errors: list[str]) -> list[str]:
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        errors.append(f"{where} must be a list of strings")
        return []
    return [v.strip() for v in value if v.strip()]


def _outputs(value: Any, where: str, errors: list[str]) -> list[OutputSpec]:
    if not isinstance(value, list):
        errors.append(f"{where} must be a list of documents")
        return []
    outputs: list[OutputSpec] = []
    for raw in value:
        if isinstance(raw, str):  # tolerate a bare file name
            raw = {"name": raw}
        if not isinstance(raw, dict) or not isinstance(raw.get("name"), str) or not raw["name"].strip():
            errors.append(f"{where}: every document needs a name")
            continue
        name = raw["name"].strip()
        kind = raw.get("type") or (name.rsplit(".", 1)[-1] if "." in name else "")
        outputs.append(OutputSpec(name=name, type=str(kind), purpose=str(raw.get("purpose") or "")))
    return outputs
