"""Posts queued behind a running round (multitaskStrategy "enqueue"): stored, started as the next round
in the transaction that takes them off the queue, cancelled by a stop."""

from __future__ import annotations

from collections.abc import Callable

from sqlalchemy import delete, func, select
from sqlalchemy.engine import Connection
from sqlmodel import col

from app.clock import now
from app.fsm import Event, WorkflowStatus, sources
from app.store.database import Database
from app.store.records import NewLog, Owner
from app.store.repository.locking import settle_batch
from app.store.repository.workflows import WorkflowStore
from app.store.tables import QueuedPostRow, WorkflowRow, table_of

Q, W = QueuedPostRow, WorkflowRow


class QueueStore:
    """The queue of posts waiting for a workflow's running round to end."""

    def __init__(self, db: Database, workflows: WorkflowStore) -> None:
        self.db = db
        self.workflows = workflows

    async def enqueue(self, owner: Owner, workflow_id: str, prompt: str, file_ids: list[int],
                      passwords: dict[str, str], review: str,
                      log: Callable[[int, int], NewLog]) -> tuple[WorkflowRow, int] | None:
        """Queue the post behind the running (or waiting) round, with the log `log(round, position)`; the
        workflow and the post's place in the queue. None: no round runs now (start it instead).
        LookupError: the owner has no such workflow."""
        return await self.db.run_write(self._enqueue_tx, owner, workflow_id, prompt, file_ids, passwords, review, log)

    def _enqueue_tx(self, conn: Connection, owner: Owner, workflow_id: str, prompt: str, file_ids: list[int],
                    passwords: dict[str, str], review: str,
                    log: Callable[[int, int], NewLog]) -> tuple[WorkflowRow, int] | None:
        row = self.workflows.locks.lock(conn, workflow_id)
        if row is None or (row.mandate_id, row.user_id) != (owner.mandate_id, owner.user_id):
            raise LookupError(workflow_id)
        if row.status not in (WorkflowStatus.RUNNING, WorkflowStatus.WAITING):
            return None
        conn.execute(table_of(Q).insert().values(workflow_id=workflow_id, prompt=prompt, file_ids=file_ids,
                                                 passwords=passwords, review=review, created_at=now()))
        position = conn.execute(select(func.count()).select_from(Q)
                                .where(col(Q.workflow_id) == workflow_id)).scalar_one()
        self.workflows.append_locked_tx(conn, row, (), [log(row.current_round, position)], None, None, None)
        settle_batch(conn, workflow_id)
        return self.workflows.locked_tx(conn, workflow_id), position

    async def start_next(self, workflow_id: str, log: NewLog) -> tuple[WorkflowRow, QueuedPostRow] | None:
        """Start the workflow's next round from the oldest queued post, if its round has ended: the post
        leaves the queue in the start's own transaction (so it starts once). None: nothing to start."""
        return await self.db.run_write(self._start_next_tx, workflow_id, log)

    def _start_next_tx(self, conn: Connection, workflow_id: str,
                       log: NewLog) -> tuple[WorkflowRow, QueuedPostRow] | None:
        row = self.workflows.locks.lock(conn, workflow_id)
        if row is None or row.status not in sources(Event.START):
            return None
        found = conn.execute(select(Q).where(col(Q.workflow_id) == workflow_id).order_by(col(Q.id)).limit(1)).first()
        if found is None:
            return None
        post = QueuedPostRow.model_validate(found._mapping)
        conn.execute(delete(Q).where(col(Q.id) == post.id))
        started = self.workflows._start_round_tx(conn, Owner(row.mandate_id, row.user_id), workflow_id, row.name,
                                                 False, post.prompt, post.file_ids, post.passwords, log, post.review)
        return started, post

    async def due(self, limit: int = 100) -> list[str]:
        """Workflows with a queued post whose round has ended (their next round is due)."""
        query = (select(col(Q.workflow_id)).join(W, col(W.id) == col(Q.workflow_id))
                 .where(col(W.status).in_(sources(Event.START))).distinct().limit(limit))
        async with self.db.reader.connect() as conn:
            return [wid for (wid,) in await conn.execute(query)]

    @staticmethod
    def cancel_tx(conn: Connection, workflow_id: str) -> int:
        """Drop the workflow's queued posts (a stop cancels them); how many there were."""
        return conn.execute(delete(Q).where(col(Q.workflow_id) == workflow_id)).rowcount or 0
