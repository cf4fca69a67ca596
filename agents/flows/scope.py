"""What a run's templates and expressions see: its inputs, checked against the definition, and the scope.

One function builds the scope for both languages, so a template and a condition never disagree
about a name: `inputs`, each finished node's id (`{"output", "files"}`; a skipped node's output is
None), and inside a map or loop body `item`, `index` (from 0) and `iteration` (from 1).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

import msgspec

from agents.flows.definition import FlowDefinition, InputSpec
from agents.flows.errors import FlowError

_NO_ITEM: Final = object()


class InputError(FlowError):
    """A run's inputs do not fit the flow: `problems` maps each input at fault to what is wrong."""

    def __init__(self, problems: dict[str, str]) -> None:
        super().__init__("; ".join(f"{name}: {why}" for name, why in problems.items()))
        self.problems = problems


def _fits(spec: InputSpec, value: Any) -> str | None:
    """Why `value` is not a `spec.type`, or None when it is."""
    if value is None:
        return None  # an explicit null: a node reads None, a template renders empty text
    if spec.type == "string" and not isinstance(value, str):
        return f"expected text, got {type(value).__name__}"
    if spec.type == "number" and (isinstance(value, bool) or not isinstance(value, int | float)):
        return f"expected a number, got {type(value).__name__}"
    if spec.type == "boolean" and not isinstance(value, bool):
        return f"expected true or false, got {type(value).__name__}"
    if spec.type in ("list", "files") and not isinstance(value, list):
        return f"expected a list, got {type(value).__name__}"
    if spec.type == "files" and not all(isinstance(v, str | int) and not isinstance(v, bool) for v in value):
        return "expected a list of file ids"
    return None


def resolve_inputs(defn: FlowDefinition, given: Mapping[str, Any]) -> dict[str, Any]:
    """`given` checked against the flow's declared inputs, defaults filled in; an `InputError` names
    every input that is missing, unknown or of the wrong type at once."""
    problems: dict[str, str] = {}
    resolved: dict[str, Any] = {}
    for name in given:
        if name not in defn.inputs:
            problems[name] = "the flow has no such input"
    for name, spec in defn.inputs.items():
        if name in given:
            why = _fits(spec, given[name])
            if why:
                problems[name] = why
            resolved[name] = given[name]
        elif spec.default is not msgspec.UNSET:
            resolved[name] = spec.default
        else:
            problems[name] = "required, and not given"
    if problems:
        raise InputError(problems)
    return resolved


def node_value(output: Any, files: list[Any] | None = None) -> dict[str, Any]:
    """What a node's id names in the scope: its output (None when skipped) and its files."""
    return {"output": output, "files": list(files or ())}


def scope(inputs: Mapping[str, Any], nodes: Mapping[str, Mapping[str, Any]], *, item: Any = _NO_ITEM,
          index: int | None = None, iteration: int | None = None) -> dict[str, Any]:
    """The names a template or an expression reads: `inputs`, each node id in `nodes` (see
    `node_value`), and in a body `item` with `index`, or `iteration`."""
    out: dict[str, Any] = {node_id: value for node_id, value in nodes.items()}
    out["inputs"] = dict(inputs)
    if item is not _NO_ITEM:
        out["item"] = item
        out["index"] = index
    if iteration is not None:
        out["iteration"] = iteration
    return out
