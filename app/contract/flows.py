"""The wire shapes of flows (CONTRACT.md "Flows: saved workflows"): a flow as read and listed, the answer of
a validation, a run's node runs. The definition itself is `agents.flows.definition.FlowDefinition`."""

from __future__ import annotations

from datetime import datetime
from typing import Any, Literal

import msgspec

from agents.flows import FlowDefinition
from app.contract.schemas import Camel, FlowStartBody

FlowStart = FlowStartBody


class FlowView(Camel, kw_only=True):
    """A saved flow: its draft, and the versions published from it (newest first)."""

    id: int
    name: str
    description: str
    created_at: datetime
    updated_at: datetime
    draft: FlowDefinition
    hash: str  # the draft's: sha256 of its canonical JSON
    latest_version: int | None = None


class FlowSummary(Camel, kw_only=True):
    """A flow in the list."""

    id: int
    name: str
    description: str
    updated_at: datetime
    latest_version: int | None = None


class FlowList(Camel, kw_only=True):
    """A page of the caller's flows, newest first; `cursor` is the last id of the page."""

    items: list[FlowSummary]
    has_more: bool
    cursor: int | None = None


class FlowDeleted(Camel, kw_only=True):
    """The answer of DELETE /api/flows/{id}."""

    deleted: Literal["flow"] = "flow"
    flow_id: int


class FlowProblem(Camel, kw_only=True):
    """One problem of a definition: the node it is in (null: the flow itself), a stable code, a sentence."""

    node_id: str | None
    code: str
    message: str


class ValidAnswer(Camel, kw_only=True):
    """A definition without problems."""

    valid: bool = True


class NodeRunView(Camel, kw_only=True):
    """One node run of a flow round (a node, a map item `m[3]`, a loop iteration `l#2`)."""

    node_id: str
    path: str
    type: str
    status: Literal["pending", "running", "waiting", "succeeded", "failed", "skipped"]
    attempts: int
    started_at: datetime | None
    finished_at: datetime | None
    input: Any = None
    output: Any = None
    input_size: int = 0  # characters of the input's JSON, whole (the value shown may be cut)
    output_size: int = 0
    files: list[int] = []
    error: str | None = None
    branch: str | None = None
    items: int | None = None
    iterations: int | None = None
    reused_from: int | None = None


class NodeRunPage(Camel, kw_only=True):
    """A flow round's node runs, in the order they settled."""

    round: int
    items: list[NodeRunView]


def cut(value: Any, limit: int) -> tuple[Any, int]:
    """A value as the node-runs answer shows it: whole when its JSON fits `limit` characters, else its
    JSON text cut there; and the whole JSON's size."""
    text = msgspec.json.encode(value).decode()
    if len(text) <= limit:
        return value, len(text)
    return text[:limit] + "…", len(text)
