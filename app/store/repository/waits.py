"""Decisions on what a waiting round waits for, and waits that expire: each one compare-and-set on
the workflow row, with the answered message's metadata, the decision's messages and logs."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Any

from sqlalchemy import select, update
from sqlalchemy.engine import Connection
from sqlmodel import col

from app.clock import aware
from app.fsm import Event, WorkflowStatus
from app.store.database import Database
from app.store.records import Decided, NewLog, NewMessage, Owner
from app.store.repository.locking import settle_batch
from app.store.repository.workflows import WorkflowStore
from app.store.tables import MessageRow, WorkflowRow

W, M = WorkflowRow, MessageRow


class WaitStore:
    """The user's side of a wait: a decision taken once, or the wait's end when nobody decided."""

    def __init__(self, db: Database, workflows: WorkflowStore) -> None:
        self.db = db
        self.workflows = workflows

    async def decide(self, owner: Owner, workflow_id: str, kind: str, message_id: int | None, event: Event,
                     decision: dict[str, Any], patch: dict[str, Any], messages: Sequence[NewMessage],
                     logs: Sequence[NewLog]) -> Decided | None:
        """Take `decision` if the workflow still waits for `kind` (on `message_id`, when given): merge
        `patch` into the answered message (`content` replaces its text, the rest its metadata), write
        `messages` and `logs`, apply `event`. With RESUME the round's next part is due (`segment` + 1).
        None: the owner has no such workflow."""
        return await self.db.run_write(self._decide_tx, owner, workflow_id, kind, message_id, event, decision, patch,
                                       messages, logs)

    def _decide_tx(self, conn: Connection, owner: Owner, workflow_id: str, kind: str, message_id: int | None,
                   event: Event, decision: dict[str, Any], patch: dict[str, Any], messages: Sequence[NewMessage],
                   logs: Sequence[NewLog]) -> Decided | None:
        wf = self.workflows
        row = wf.locks.lock(conn, workflow_id)
        if row is None or (row.mandate_id, row.user_id) != (owner.mandate_id, owner.user_id):
            return None
        wait = row.waiting_for or {}
        # What may be answered: the wait's message, or any of a flow's human nodes waiting at once.
        answerable = [n.get("messageId") for n in wait.get("nodes", [])] or [wait.get("messageId")]
        if row.status != WorkflowStatus.WAITING or wait.get("kind") != kind or \
                (message_id is not None and message_id not in answerable):
            settle_batch(conn, workflow_id)
            return Decided(wf.locked_tx(conn, workflow_id), taken=False)
        answered = message_id if message_id is not None else wait["messageId"]
        if patch:
            self._patch_tx(conn, workflow_id, answered, patch)
        segment = row.segment + (1 if event is Event.RESUME else 0)
        written = wf.append_locked_tx(conn, row, messages, logs, event, None, None)
        settle_batch(conn, workflow_id)
        conn.execute(update(W).where(col(W.id) == workflow_id).values(
            segment=segment, decision={**decision, "messageId": answered, "segment": segment}))
        return Decided(wf.locked_tx(conn, workflow_id), taken=True, written=written)

    @staticmethod
    def _patch_tx(conn: Connection, workflow_id: str, message_id: int, patch: dict[str, Any]) -> None:
        meta = conn.execute(select(col(M.meta))
                            .where(col(M.workflow_id) == workflow_id, col(M.id) == message_id)).scalar() or {}
        values: dict[str, Any] = {"meta": {**meta, **{k: v for k, v in patch.items() if k != "content"}}}
        if "content" in patch:
            values["content"] = patch["content"]
        conn.execute(update(M).where(col(M.workflow_id) == workflow_id, col(M.id) == message_id).values(**values))

    async def expired(self, stamp: datetime, limit: int = 100) -> list[tuple[str, int]]:
        """Workflows whose wait expired by `stamp`: (id, round)."""
        query = (select(col(W.id), col(W.current_round))
                 .where(col(W.status) == WorkflowStatus.WAITING, col(W.wait_expires) <= stamp)
                 .order_by(col(W.wait_expires)).limit(limit))
        async with self.db.reader.connect() as conn:
            return [(wid, round_no) for wid, round_no in await conn.execute(query)]

    async def expire(self, workflow_id: str, round_no: int, stamp: datetime, log: NewLog) -> Decided | None:
        """End the wait of round `round_no` as stopped with `log`, if it still waits and expired by `stamp`."""
        return await self.db.run_write(self._expire_tx, workflow_id, round_no, stamp, log)

    def _expire_tx(self, conn: Connection, workflow_id: str, round_no: int, stamp: datetime,
                   log: NewLog) -> Decided | None:
        wf = self.workflows
        row = wf.locks.lock(conn, workflow_id)
        if row is None or row.status != WorkflowStatus.WAITING or row.current_round != round_no:
            return None
        expires = row.wait_expires
        if expires is None or aware(expires) > stamp:
            return None
        written = wf.append_locked_tx(conn, row, (), [log], Event.EXPIRE, None, None)
        settle_batch(conn, workflow_id)
        return Decided(wf.locked_tx(conn, workflow_id), taken=True, written=written)

