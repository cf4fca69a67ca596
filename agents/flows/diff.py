"""What changed between two definitions (`GET /api/flows/{id}/diff`): nodes, edges, inputs and outputs
added, removed and changed, each change with its fields.

Both sides are compared in their normal form (`canonical.normal_form`: every default written out),
so spelling a default out is not a change. A node's config is compared field by field down to its
leaves (`config.body.config.prompt`); a list is one field.
"""

from __future__ import annotations

from typing import Any

import msgspec

from agents.flows.canonical import normal_form
from agents.flows.definition import FlowDefinition


class FieldChange(msgspec.Struct, frozen=True):
    """One field's value before and after (None when the field is new or gone)."""

    field: str
    before: Any = msgspec.field(name="from", default=None)
    after: Any = msgspec.field(name="to", default=None)


class Changed(msgspec.Struct, frozen=True):
    """A node, input or output present on both sides with different fields."""

    key: str
    fields: list[FieldChange]


class Section(msgspec.Struct, frozen=True):
    """The keys added and removed, and the changes to those on both sides, in the newer side's order."""

    added: list[str] = []
    removed: list[str] = []
    changed: list[Changed] = []


class FlowDiff(msgspec.Struct, frozen=True):
    """Everything that differs between two definitions; `flow` holds name and description changes."""

    flow: list[FieldChange]
    nodes: Section
    edges: Section
    inputs: Section
    outputs: Section

    @property
    def empty(self) -> bool:
        """Whether the two definitions are the same flow."""
        return not self.flow and all(not (s.added or s.removed or s.changed)
                                     for s in (self.nodes, self.edges, self.inputs, self.outputs))

    @classmethod
    def between(cls, before: FlowDefinition, after: FlowDefinition) -> FlowDiff:
        """What `after` changes of `before`."""
        a, b = normal_form(before), normal_form(after)
        flow = [FieldChange(name, a[name], b[name]) for name in ("name", "description") if a[name] != b[name]]
        return cls(
            flow=flow,
            nodes=_section({n["id"]: n for n in a["nodes"]}, {n["id"]: n for n in b["nodes"]}),
            edges=_section({_edge_key(e): e for e in a["edges"]}, {_edge_key(e): e for e in b["edges"]}),
            inputs=_section(a["inputs"], b["inputs"]),
            outputs=_section({k: {"template": v} for k, v in a["outputs"].items()},
                             {k: {"template": v} for k, v in b["outputs"].items()}),
        )


def _leaves(value: dict[str, Any], prefix: str = "") -> dict[str, Any]:
    """A mapping flattened to dotted paths of its non-mapping values (iteratively)."""
    out: dict[str, Any] = {}
    stack = [(prefix, value)]
    while stack:
        path, current = stack.pop()
        for key, item in current.items():
            dotted = f"{path}.{key}" if path else str(key)
            if isinstance(item, dict) and item:
                stack.append((dotted, item))
            else:
                out[dotted] = item
    return out


def _fields(before: dict[str, Any], after: dict[str, Any]) -> list[FieldChange]:
    old, new = _leaves(before), _leaves(after)
    return [FieldChange(path, old.get(path), new.get(path)) for path in sorted(old.keys() | new.keys())
            if old.get(path) != new.get(path) or (path in old) != (path in new)]


def _section(before: dict[str, dict[str, Any]], after: dict[str, dict[str, Any]]) -> Section:
    changed = [Changed(key, fields) for key in after if key in before
               if (fields := _fields(before[key], after[key]))]
    return Section(added=[key for key in after if key not in before],
                   removed=[key for key in before if key not in after], changed=changed)


def _edge_key(edge: dict[str, Any]) -> str:
    branch = edge.get("branch")
    return f"{edge['source']} -> {edge['target']}" + (f" [{branch}]" if branch is not None else "")
