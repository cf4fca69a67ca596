"""Saved flows as their owner sees them: create, read, list, replace the draft, delete, validate, publish
versions; what a round that runs one starts with (its version, definition hash and checked inputs); the
node runs of a flow round. No HTTP here."""

from __future__ import annotations

import asyncio
from typing import Any

import msgspec

from agents.flows import DefinitionError, FlowDefinition, Read
from app.contract.flows import FlowList, FlowStart, FlowSummary, FlowView, NodeRunPage, NodeRunView, cut
from app.errors import BadRequestError, NotFoundError
from app.rounds.runtime import Runtime
from app.store.records import Owner
from app.store.repository.flows import NodeState
from app.store.tables import FlowRow

RECORD_CUT = 4000  # characters of a node run's input or output shown; the whole size is said beside it


def refused(error: DefinitionError) -> BadRequestError:
    """The 400 of a definition that cannot be taken: the error's stable code, its sentence and what it adds
    (the problems, each with its node; the line of a file; the Dify node at fault)."""
    return BadRequestError(error.detail, code=error.code, extra=error.extra)


def not_found(flow_id: int) -> NotFoundError:
    return NotFoundError(f"There is no flow {flow_id}.", code="flow_not_found")


class FlowService:
    """The flows of the service's database."""

    def __init__(self, rt: Runtime) -> None:
        self.rt = rt
        self.repo = rt.repo

    # --- definitions ---------------------------------------------------------------------------

    async def checked(self, sent: Any, flow_id: int | None = None, media: str | None = None) -> Read:
        """The definition sent (a parsed JSON body, or with `media` a file's bytes), checked against the
        registry and the limits, with its canonical JSON and hash; or the 400 saying what is wrong (read in
        a worker thread: a large graph is CPU work)."""
        try:
            return await asyncio.to_thread(Read.of, sent, agents=self.rt.runner.registry.names(),
                                           max_nodes=self.rt.settings.flow_max_nodes, flow_id=flow_id, media=media)
        except DefinitionError as exc:
            raise refused(exc) from None

    # --- flows -------------------------------------------------------------------------------

    async def create(self, owner: Owner, sent: Any) -> FlowView:
        return await self.saved(owner, await self.checked(sent))

    async def saved(self, owner: Owner, read: Read) -> FlowView:
        """A new flow whose draft is the definition read."""
        version = read.version
        row = await self.repo.flows.create(owner, version.definition.name, version.definition.description,
                                           version.hash, version.canonical)
        return await self.view(row)

    async def owned(self, owner: Owner, flow_id: int) -> FlowRow:
        row = await self.repo.flows.flow(owner, flow_id)
        if row is None:
            raise not_found(flow_id)
        return row

    async def read(self, owner: Owner, flow_id: int) -> FlowView:
        return await self.view(await self.owned(owner, flow_id))

    async def replace(self, owner: Owner, flow_id: int, raw: Any) -> FlowView:
        await self.owned(owner, flow_id)
        version = (await self.checked(raw, flow_id)).version
        row = await self.repo.flows.replace(owner, flow_id, version.definition.name, version.definition.description,
                                            version.hash, version.canonical)
        if row is None:
            raise not_found(flow_id)
        return await self.view(row)

    async def delete(self, owner: Owner, flow_id: int) -> None:
        if not await self.repo.flows.delete(owner, flow_id):
            raise not_found(flow_id)

    async def page(self, owner: Owner, limit: int, cursor: int | None) -> FlowList:
        rows = await self.repo.flows.page(owner, limit + 1, cursor)
        more = len(rows) > limit
        rows = rows[:limit]
        items = []
        for row in rows:
            latest = await self.repo.flows.version(_id(row), None)
            items.append(FlowSummary(id=_id(row), name=row.name, description=row.description,
                                     updated_at=row.updated_at, latest_version=latest.version if latest else None))
        return FlowList(items=items, has_more=more, cursor=_id(rows[-1]) if more and rows else None)

    async def view(self, row: FlowRow) -> FlowView:
        body = await self.repo.flows.definition(row.draft_hash)
        latest = await self.repo.flows.version(_id(row), None)
        return FlowView(id=_id(row), name=row.name, description=row.description, created_at=row.created_at,
                        updated_at=row.updated_at, draft=FlowDefinition.decode((body or "{}").encode()),
                        hash=row.draft_hash, latest_version=latest.version if latest else None)

    # --- a round that runs a flow ------------------------------------------------------------

    async def run_spec(self, owner: Owner, start: FlowStart, file_ids: list[int]) -> tuple[dict[str, Any], str]:
        """What the round's start stores ({id, version, hash, inputs}) and the name of the flow: the version
        resolved (none: the latest published; "draft"), the inputs checked against the definition's (400
        naming each problem); `file_ids` fill the first `files` input the inputs leave out."""
        row = await self.owned(owner, start.id)
        version: int | str
        if start.version == "draft":
            digest, version = row.draft_hash, "draft"
        else:
            found = await self.repo.flows.version(start.id, start.version)
            if found is None:
                if start.version is None:
                    raise BadRequestError(f"Flow {start.id} has no published version yet: publish it, or run the "
                                          "draft with \"version\": \"draft\".", code="flow_not_published")
                raise NotFoundError(f"Flow {start.id} has no version {start.version}.", code="flow_version_not_found")
            digest, version = found.hash, found.version
        body = await self.repo.flows.definition(digest)
        definition = FlowDefinition.decode((body or "{}").encode())
        inputs = await self.inputs(owner, definition, dict(start.inputs), file_ids)
        return {"id": start.id, "version": version, "hash": digest, "inputs": inputs}, definition.name

    async def inputs(self, owner: Owner, definition: FlowDefinition, given: dict[str, Any],
                     file_ids: list[int]) -> dict[str, Any]:
        problems: list[str] = []
        unknown = sorted(set(given) - set(definition.inputs))
        if unknown:
            problems.append(f"unknown inputs {unknown} (the flow takes {sorted(definition.inputs) or 'none'})")
        out: dict[str, Any] = {}
        filled = False
        for name, spec in definition.inputs.items():
            if name not in given and spec.type == "files" and file_ids and not filled:
                given[name], filled = list(file_ids), True
            if name not in given:
                if spec.default is msgspec.UNSET:
                    problems.append(f"input {name!r} ({spec.type}) is required")
                else:
                    out[name] = spec.default
                continue
            value = given[name]
            if not _fits(spec.type, value):
                problems.append(f"input {name!r} must be {_kind(spec.type)}, not {type(value).__name__}")
                continue
            if spec.type == "files":
                files = await self.repo.files.files(owner, list(value))
                missing = [fid for fid in value if fid not in files]
                if missing:
                    problems.append(f"input {name!r} names files that are not yours or not there: {missing}")
            out[name] = value
        if problems:
            raise BadRequestError(f"The flow's inputs are not right: {'; '.join(problems)}.", code="invalid_inputs",
                                  extra={"problems": problems})
        return out

    # --- node runs ---------------------------------------------------------------------------

    async def node_states(self, workflow_id: str, round_no: int, since: int = 0) -> list[NodeState]:
        """The round's node runs from the `since`-th settled on, as a run's state shows them (no records)."""
        return await self.repo.flows.node_states(workflow_id, round_no, since)

    async def node_runs(self, workflow_id: str, round_no: int) -> NodeRunPage:
        items = []
        for stored in await self.repo.flows.node_runs(workflow_id, round_no):
            record = stored.record
            shown_in, size_in = cut(record.get("input"), RECORD_CUT)
            shown_out, size_out = cut(record.get("output"), RECORD_CUT)
            items.append(NodeRunView(
                node_id=stored.node_id, path=stored.path, type=stored.type, status=stored.status,  # type: ignore[arg-type]
                attempts=stored.attempts, started_at=stored.started_at, finished_at=stored.finished_at,
                input=shown_in, output=shown_out, input_size=size_in, output_size=size_out,
                files=list(record.get("files") or []), error=record.get("error") or None,
                branch=record.get("branch"), items=record.get("items"), iterations=record.get("iterations"),
                reused_from=record.get("reused_from")))
        return NodeRunPage(round=round_no, items=items)


def _id(row: FlowRow) -> int:
    assert row.id is not None  # read back from the database
    return row.id


def _fits(kind: str, value: Any) -> bool:
    if kind == "string":
        return isinstance(value, str)
    if kind == "number":
        return isinstance(value, (int, float)) and not isinstance(value, bool)
    if kind == "boolean":
        return isinstance(value, bool)
    if kind == "list":
        return isinstance(value, list)
    return isinstance(value, list) and all(isinstance(v, int) and not isinstance(v, bool) for v in value)


def _kind(kind: str) -> str:
    return {"string": "text", "number": "a number", "boolean": "true or false", "list": "a list",
            "files": "a list of file ids"}[kind]
