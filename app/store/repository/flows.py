"""Flows (`flows`, `flow_versions`, `flow_definitions`) and the node runs of flow rounds (`node_runs`).

A definition is stored once by the sha256 of its canonical JSON; a draft, a version and a run name it
by that hash, so a run keeps its definition whatever is published or deleted after it started.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy import bindparam, delete, desc, func, select, update
from sqlalchemy.engine import Connection
from sqlmodel import col

from app.clock import now
from app.store.database import Database
from app.store.records import Owner
from app.store.statements import Prepared
from app.store.tables import FlowDefinitionRow, FlowRow, FlowVersionRow, NodeRunRow, table_of

F, V, D, N = FlowRow, FlowVersionRow, FlowDefinitionRow, NodeRunRow
DEFINITIONS_KEPT = 64  # definitions kept in memory once read, each at most DEFINITION_KEPT_CHARS long
DEFINITION_KEPT_CHARS = 256 * 1024


@dataclass(frozen=True)
class StoredNodeRun:
    """A node run as written: its columns and the engine's record of it."""

    path: str
    node_id: str
    type: str
    status: str
    attempts: int
    started_at: datetime | None
    finished_at: datetime | None
    record: dict[str, Any]
    seq: int = 0  # the order runs settled in


@dataclass(frozen=True)
class NodeState:
    """A settled node run as a run's state shows it: where it settled in the run (`seq`), and how."""

    seq: int
    path: str
    type: str
    status: str
    attempts: int
    branch: str | None


class FlowStore:
    """The flows, versions, definitions and node runs of one database."""

    def __init__(self, db: Database) -> None:
        self.db = db
        self._definitions: dict[str, str] = {}  # definitions read lately, by hash (`definition`)
        # A flow round's start reads its flow: on the cursor (building the query cost 9x the read's own work).
        ft = table_of(F)
        self._flow = Prepared(select(ft).where(ft.c.id == bindparam("fid")))
        self._owned_flow = Prepared(select(ft).where(ft.c.id == bindparam("fid"),
                                                     ft.c.mandate_id == bindparam("mandate"),
                                                     ft.c.user_id == bindparam("user")))
        # Every node run's write: straight on the cursor (app.store.statements).
        self._insert_runs = Prepared(db.insert(table_of(N)).on_conflict_do_nothing(
            index_elements=["workflow_id", "round", "path"]))

    # --- definitions by hash --------------------------------------------------------------------

    def _put_definition_tx(self, conn: Connection, digest: str, body: str) -> None:
        conn.execute(self.db.insert(table_of(D)).values(hash=digest, body=body)
                     .on_conflict_do_nothing(index_elements=["hash"]))

    async def definition(self, digest: str) -> str | None:
        """The canonical JSON of the definition with this hash (a definition stored is never changed nor
        deleted: those read lately are kept, and a flow round's start and its run read it once between them)."""
        body = self._definitions.get(digest)
        if body is None:
            body = await self.db.run_read(self._definition_tx, digest)
            if body is not None and len(body) <= DEFINITION_KEPT_CHARS:
                self._definitions[digest] = body
                if len(self._definitions) > DEFINITIONS_KEPT:
                    del self._definitions[next(iter(self._definitions))]  # the first read (a dict keeps that order)
        return body

    @staticmethod
    def _definition_tx(conn: Connection, digest: str) -> str | None:
        row = conn.execute(select(col(D.body)).where(col(D.hash) == digest)).first()
        return row[0] if row else None

    # --- flows ------------------------------------------------------------------------------------

    async def create(self, owner: Owner, name: str, description: str, digest: str, body: str) -> FlowRow:
        """A new flow whose draft is the definition `body` (hash `digest`)."""
        return await self.db.run_write(self._create_tx, owner, name, description, digest, body)

    def _create_tx(self, conn: Connection, owner: Owner, name: str, description: str, digest: str,
                   body: str) -> FlowRow:
        self._put_definition_tx(conn, digest, body)
        stamp = now()
        t = table_of(F)
        row = conn.execute(t.insert().values(mandate_id=owner.mandate_id, user_id=owner.user_id, name=name,
                                             description=description, draft_hash=digest, created_at=stamp,
                                             updated_at=stamp).returning(*t.c)).one()
        return FlowRow.model_validate(row._mapping)

    async def flow(self, owner: Owner | None, flow_id: int) -> FlowRow | None:
        """The flow, if `owner` (anyone: None) has it."""
        return await self.db.run_read(self._flow_tx, owner, flow_id)

    def _flow_tx(self, conn: Connection, owner: Owner | None, flow_id: int) -> FlowRow | None:
        if owner is None:
            row = self._flow.first(conn, {"fid": flow_id})
        else:
            row = self._owned_flow.first(conn, {"fid": flow_id, "mandate": owner.mandate_id, "user": owner.user_id})
        return FlowRow.model_validate(row) if row else None

    async def page(self, owner: Owner, limit: int, before: int | None) -> list[FlowRow]:
        """The owner's flows, newest first, after the cursor `before` (a flow id)."""
        return await self.db.run_read(self._page_tx, owner, limit, before)

    @staticmethod
    def _page_tx(conn: Connection, owner: Owner, limit: int, before: int | None) -> list[FlowRow]:
        query = select(F).where(col(F.mandate_id) == owner.mandate_id, col(F.user_id) == owner.user_id)
        if before is not None:
            query = query.where(col(F.id) < before)
        rows = conn.execute(query.order_by(desc(col(F.id))).limit(limit))
        return [FlowRow.model_validate(r._mapping) for r in rows]

    async def replace(self, owner: Owner, flow_id: int, name: str, description: str, digest: str,
                      body: str) -> FlowRow | None:
        """The flow's draft replaced (None: the owner has no such flow)."""
        return await self.db.run_write(self._replace_tx, owner, flow_id, name, description, digest, body)

    def _replace_tx(self, conn: Connection, owner: Owner, flow_id: int, name: str, description: str, digest: str,
                    body: str) -> FlowRow | None:
        self._put_definition_tx(conn, digest, body)
        changed = conn.execute(update(F).where(col(F.id) == flow_id, col(F.mandate_id) == owner.mandate_id,
                                               col(F.user_id) == owner.user_id)
                               .values(name=name, description=description, draft_hash=digest, updated_at=now()))
        return self._flow_tx(conn, owner, flow_id) if changed.rowcount else None

    async def delete(self, owner: Owner, flow_id: int) -> bool:
        """Delete the flow and its versions; the rounds it ran and their definitions stay."""
        return await self.db.run_write(self._delete_tx, owner, flow_id)

    @staticmethod
    def _delete_tx(conn: Connection, owner: Owner, flow_id: int) -> bool:
        found = conn.execute(select(col(F.id)).where(col(F.id) == flow_id, col(F.mandate_id) == owner.mandate_id,
                                                     col(F.user_id) == owner.user_id)).first()
        if found is None:
            return False
        conn.execute(delete(V).where(col(V.flow_id) == flow_id))
        conn.execute(delete(F).where(col(F.id) == flow_id))
        return True

    # --- versions ----------------------------------------------------------------------------------

    async def publish(self, owner: Owner, flow_id: int, name: str, comment: str, author: str) -> FlowVersionRow | None:
        """The draft published as the next version (None: no such flow)."""
        return await self.db.run_write(self._publish_tx, owner, flow_id, name, comment, author)

    def _publish_tx(self, conn: Connection, owner: Owner, flow_id: int, name: str, comment: str,
                    author: str) -> FlowVersionRow | None:
        flow = self._flow_tx(conn, owner, flow_id)
        if flow is None:
            return None
        conn.execute(update(F).where(col(F.id) == flow_id).values(updated_at=now()))  # locks the flow's row
        last = conn.execute(select(func.max(col(V.version))).where(col(V.flow_id) == flow_id)).scalar()
        row = FlowVersionRow(flow_id=flow_id, version=(last or 0) + 1, hash=flow.draft_hash, name=name,
                             comment=comment, author=author, created_at=now())
        conn.execute(table_of(V).insert().values(row.model_dump()))
        return row

    async def versions(self, flow_id: int) -> list[FlowVersionRow]:
        """The flow's versions, newest first."""
        return await self.db.run_read(self._versions_tx, flow_id, None)

    async def version(self, flow_id: int, version: int | None) -> FlowVersionRow | None:
        """One version (None: the latest)."""
        found = await self.db.run_read(self._versions_tx, flow_id, version)
        return found[0] if found else None

    @staticmethod
    def _versions_tx(conn: Connection, flow_id: int, version: int | None) -> list[FlowVersionRow]:
        query = select(V).where(col(V.flow_id) == flow_id)
        if version is not None:
            query = query.where(col(V.version) == version)
        rows = conn.execute(query.order_by(desc(col(V.version))))
        return [FlowVersionRow.model_validate(r._mapping) for r in rows]

    # --- node runs -------------------------------------------------------------------------------

    async def settle(self, workflow_id: str, round_no: int, runs: Sequence[dict[str, Any]],
                     after: int | None = None) -> None:
        """Write settled node runs (a run written before, by a replay, stays as it was); `after`: see `settle_tx`."""
        if runs:
            await self.db.run_write(self.settle_tx, workflow_id, round_no, list(runs), after)

    def settle_tx(self, conn: Connection, workflow_id: str, round_no: int, runs: list[dict[str, Any]],
                  after: int | None = None) -> None:
        """`settle` inside a transaction of the caller's (with the node's log and message); `after`: the last
        `seq` the round's runs have (the caller's count: no read), else read here."""
        last = after if after is not None else conn.execute(select(func.max(col(N.seq))).where(
            col(N.workflow_id) == workflow_id, col(N.round) == round_no)).scalar() or 0
        rows = [dict(run, workflow_id=workflow_id, round=round_no, seq=last + n) for n, run in enumerate(runs, 1)]
        self._insert_runs.execute_many(conn, rows)

    async def node_runs(self, workflow_id: str, round_no: int, item: str | None = None) -> list[StoredNodeRun]:
        """The round's settled node runs, in the order they settled; with `item` (a map item's path), only the
        top-level nodes' and that item's: what one item run on another replica reads, not its siblings'."""
        return await self.db.run_read(self._node_runs_tx, workflow_id, round_no, item)

    @staticmethod
    def _node_runs_tx(conn: Connection, workflow_id: str, round_no: int, item: str | None = None) -> list[StoredNodeRun]:
        query = (select(col(N.path), col(N.node_id), col(N.type), col(N.status), col(N.attempts), col(N.started_at),
                        col(N.finished_at), col(N.record), col(N.seq))
                 .where(col(N.workflow_id) == workflow_id, col(N.round) == round_no).order_by(col(N.seq)))
        if item is not None:  # an inner run's path holds "[", "#" or "/" (`agents.flows.iteration`)
            path = col(N.path)
            query = query.where((path == item) | (path.not_like("%[%") & path.not_like("%#%") & path.not_like("%/%")))
        return [StoredNodeRun(*r) for r in conn.execute(query)]

    async def node_states(self, workflow_id: str, round_no: int, since: int = 0) -> list[NodeState]:
        """The round's node runs from the `since`-th settled on (by `seq`), without their records: what a
        run's state shows of each, read incrementally by a follower of the run. Two runs settled at once may
        share a `seq` (each write takes the highest it sees plus one): a follower reads again from the last
        `seq` it saw and skips the paths it has."""
        return await self.db.run_read(self._node_states_tx, workflow_id, round_no, since)

    @staticmethod
    def _node_states_tx(conn: Connection, workflow_id: str, round_no: int, since: int) -> list[NodeState]:
        branch = table_of(N).c.record["branch"].as_string()  # json_extract / ->>: the record is not decoded
        query = (select(col(N.seq), col(N.path), col(N.type), col(N.status), col(N.attempts), branch)
                 .where(col(N.workflow_id) == workflow_id, col(N.round) == round_no, col(N.seq) >= since)
                 .order_by(col(N.seq)))
        return [NodeState(*r) for r in conn.execute(query)]
