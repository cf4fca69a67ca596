"""Published flows as other protocols' tools: each published flow of the caller, with a name unique among
the caller's flows, its inputs as a JSON Schema, and a round that runs it.

MCP (`flow_<slug>` tools), the OpenAI-compatible API (`flow/<slug>` models) and A2A (skills) all list
a caller's flows here and start them here, through the workflow service as `POST /api/workflows/start`
with `{"flow": ...}` does: one user's flows are never another's tools.
"""

from __future__ import annotations

import re
from collections import OrderedDict
from dataclasses import dataclass
from typing import Any

import msgspec

from agents.flows import FlowDefinition
from app.contract.schemas import FlowStartBody, Message, StartRequest, WaitingFor
from app.errors import BadRequestError
from app.protocols.rounds import Round, Rounds
from app.rounds.live import Position
from app.store.records import Owner

MAX_FLOWS = 200  # flows listed per caller (the newest); a caller with more runs the others over REST
PAGE = 100
MAX_CACHED = 1000  # published definitions kept decoded, by hash (content-addressed: no tenant's own)
_DEFINITIONS: OrderedDict[str, FlowDefinition] = OrderedDict()
JSON_TYPES: dict[str, dict[str, Any]] = {"string": {"type": "string"}, "number": {"type": "number"}, "boolean": {"type": "boolean"},
              "list": {"type": "array"}, "files": {"type": "array", "items": {"type": "integer"},
                                                   "description": "File ids (upload first)."}}


@dataclass(frozen=True)
class FlowTool:
    """A published flow as a tool: `slug` unique among the caller's flows (lowercase, digits, `_`)."""

    flow_id: int
    version: int
    slug: str
    definition: FlowDefinition

    @property
    def description(self) -> str:
        return self.definition.description or f"Runs the flow {self.definition.name!r}."

    def input_schema(self, version_argument: bool = False) -> dict[str, Any]:
        """The flow's inputs as a JSON Schema object (those without a default required)."""
        properties: dict[str, Any] = {}
        for name, spec in self.definition.inputs.items():
            prop = dict(JSON_TYPES[spec.type])
            if spec.description:
                prop["description"] = spec.description
            if spec.default is not msgspec.UNSET:
                prop["default"] = spec.default
            properties[name] = prop
        required = [n for n, s in self.definition.inputs.items() if s.default is msgspec.UNSET]
        if version_argument:
            properties["version"] = {"type": "integer", "minimum": 1,
                                     "description": f"A published version (default: the latest, {self.version})."}
        return {"type": "object", "properties": properties, "required": required}

    def first_string_input(self) -> str | None:
        return next((n for n, s in self.definition.inputs.items() if s.type == "string"), None)


def slug_of(name: str) -> str:
    return re.sub(r"[^a-z0-9]+", "_", name.lower()).strip("_")[:48] or "flow"


async def published(rounds: Rounds, owner: Owner) -> list[FlowTool]:
    """The caller's published flows (at most MAX_FLOWS, the newest), each at its latest version; the
    older of two flows whose names slug alike keeps the plain slug, the newer gets its id appended."""
    repo = rounds.workflows.flows.repo.flows
    rows: list[Any] = []
    cursor: int | None = None
    while len(rows) < MAX_FLOWS:
        page = await repo.page(owner, PAGE, cursor)
        rows += page
        if len(page) < PAGE:
            break
        cursor = page[-1].id
    tools: list[FlowTool] = []
    taken: set[str] = set()
    for row in sorted(rows[:MAX_FLOWS], key=lambda r: r.id):
        latest = await repo.version(row.id, None)
        if latest is None:
            continue  # a draft only: not a tool
        definition = _DEFINITIONS.get(latest.hash)
        if definition is None:  # a version's definition never changes: decoded once per process
            definition = FlowDefinition.decode(((await repo.definition(latest.hash)) or "{}").encode())
            _DEFINITIONS[latest.hash] = definition
            while len(_DEFINITIONS) > MAX_CACHED:
                _DEFINITIONS.popitem(last=False)
        slug = slug_of(definition.name)
        if slug in taken:
            slug = f"{slug}_{row.id}"
        taken.add(slug)
        tools.append(FlowTool(row.id, latest.version, slug, definition))
    return tools


async def find(rounds: Rounds, owner: Owner, slug: str) -> FlowTool | None:
    return next((t for t in await published(rounds, owner) if t.slug == slug), None)


async def run(rounds: Rounds, owner: Owner, tool: FlowTool, inputs: dict[str, Any], version: int | None = None,
              workflow_id: str | None = None, base_url: str = "") -> Round:
    """Start the flow (its latest published version, or `version`) as a round: a new workflow, or the
    next round of `workflow_id`. Bad inputs are the REST API's 400 `invalid_inputs`."""
    if version is not None and (isinstance(version, bool) or not isinstance(version, int) or version < 1):
        raise BadRequestError("version must be a published version number (1, 2, ...).", code="bad_request")
    position, tokens = Position(), 0
    if workflow_id is not None:
        row = await rounds.workflows.owned(owner, workflow_id)
        position, tokens = Position(row.last_message_id, row.last_log_id), row.tokens_used
    request = StartRequest(flow=FlowStartBody(id=tool.flow_id, version=version, inputs=inputs))
    answer = await rounds.workflows.start(owner, workflow_id, request, None)
    return Round(owner, answer["id"], answer["currentRound"], position, tokens, base_url)


def outputs_of(message: Message | None) -> dict[str, Any]:
    """The flow's outputs, as its `last` message keeps them (none when it did not complete)."""
    if message is None or not isinstance(message.metadata, dict):
        return {}
    outputs = message.metadata.get("outputs")
    return dict(outputs) if isinstance(outputs, dict) else {}


async def question(rounds: Rounds, owner: Owner, workflow_id: str, wait: WaitingFor) -> str:
    """What a waiting human node asks (its message), with its actions. The message is read by its id:
    a page after the id before it could come back empty, from the cached cursor of a write that had
    committed but whose cursor was not advanced yet (a stream woken by the write before it)."""
    await rounds.workflows.owned(owner, workflow_id)
    message = await rounds.workflows.repo.messages.message(workflow_id, wait.message_id) \
        if wait.message_id is not None else None
    text = message.content if message is not None and not message.deleted else ""
    return f"{text or 'The flow waits for your decision.'} (actions: {', '.join(wait.decisions)})"


def one_wait(wait: WaitingFor) -> list[WaitingFor]:
    """A wait as one wait per decision it takes: a flow's human nodes waiting at once, each with its actions."""
    if wait.kind != "node" or not wait.nodes or len(wait.nodes) < 2:
        return [wait]
    return [msgspec.structs.replace(wait, message_id=n["messageId"], decisions=list(n.get("actions") or []),
                                    nodes=[n])
            for n in wait.nodes if isinstance(n.get("messageId"), int)]
