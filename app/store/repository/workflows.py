"""Workflows and their transitions: start a round, append to it under a status event, delete."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from datetime import datetime, timedelta
from types import SimpleNamespace
from typing import Any

from sqlalchemy import and_, bindparam, delete, or_, select, update
from sqlalchemy.engine import Connection
from sqlalchemy.exc import IntegrityError
from sqlmodel import col

from app.clock import now
from app.fsm import Event, WorkflowStatus, next_status, sources
from app.store.batch import batch_of
from app.store.database import Database
from app.store.notify import announce_deleted, announce_stop
from app.store.ownership import Claim
from app.store.records import Appended, Cost, NewDocument, NewLog, NewMessage, Owner, RoundRequest, Stopped, Wait
from app.store.repository.files import forget_unused_contents_tx, hold_files_tx
from app.store.repository.locking import WorkflowLocks, settle_batch
from app.store.repository.messages import MessageStore, user_message_key
from app.store.statements import Prepared
from app.store.tables import (
    DocumentRow,
    FileRow,
    IdempotencyRow,
    LogRow,
    MessageRow,
    NodeRunRow,
    QueuedPostRow,
    RoundFileRow,
    RoundMemoryRow,
    WorkflowRow,
    table_of,
)
from extractors.base import ContentItem

W, M, L, F, D = WorkflowRow, MessageRow, LogRow, FileRow, DocumentRow
# A new workflow's row before its own values: every column's default, as `WorkflowRow(...).model_dump()` gives
# them (none is a factory's). Building the model to dump it cost 150 us a round in the writer thread.
_NEW_WORKFLOW: dict[str, Any] = {name: f.default for name, f in W.model_fields.items() if not f.is_required()}


class WorkflowExistsError(Exception):
    """A new workflow's given id is taken: a concurrent request created it first."""


class WorkflowStore:
    """Queries over workflows, their rounds' inputs and their status transitions."""

    def __init__(self, db: Database, messages: MessageStore) -> None:
        self.db = db
        self.messages = messages
        self.locks = WorkflowLocks(db)
        wt = table_of(W)
        # Every round starts with these.
        self._insert_workflow = Prepared(wt.insert())
        self._insert_round_files = Prepared(table_of(RoundFileRow).insert())
        # A workflow read by its id (every poll, the answer to a start): straight on the cursor, as a
        # flow's is; building the select per call cost more than running it.
        self._workflow = Prepared(select(wt).where(wt.c.id == bindparam("wid")))
        self._owned_workflow = Prepared(select(wt).where(wt.c.id == bindparam("wid"),
                                                         wt.c.mandate_id == bindparam("mandate"),
                                                         wt.c.user_id == bindparam("user")))

    async def workflow(self, owner: Owner | None, workflow_id: str) -> WorkflowRow | None:
        return await self.db.run_read(self.workflow_tx, owner, workflow_id)

    def workflow_tx(self, conn: Connection, owner: Owner | None, workflow_id: str) -> WorkflowRow | None:
        if owner is None:
            row = self._workflow.first(conn, {"wid": workflow_id})
        else:
            row = self._owned_workflow.first(conn, {"wid": workflow_id, "mandate": owner.mandate_id,
                                                    "user": owner.user_id})
        return WorkflowRow.model_validate(row) if row else None

    def locked_tx(self, conn: Connection, workflow_id: str) -> WorkflowRow:
        """The workflow's row as this transaction left it; the caller holds its lock, so it is there."""
        row = self.workflow_tx(conn, None, workflow_id)
        if row is None:  # pragma: no cover - a locked row cannot be deleted by another transaction
            raise LookupError(workflow_id)
        return row

    async def workflows(self, owner: Owner, limit: int | None = None,
                        after: tuple[datetime, str] | None = None) -> list[WorkflowRow]:
        """The owner's workflows, newest activity first; `after` is the (activity, id) a page ended with."""
        query = (
            select(W)
            .where(col(W.mandate_id) == owner.mandate_id, col(W.user_id) == owner.user_id)
            .order_by(col(W.last_activity).desc(), col(W.id))
        )
        if after is not None:
            stamp, last_id = after
            query = query.where(or_(col(W.last_activity) < stamp,
                                    and_(col(W.last_activity) == stamp, col(W.id) > last_id)))
        if limit is not None:
            query = query.limit(limit)
        async with self.db.reader.connect() as conn:
            return [WorkflowRow.model_validate(r._mapping) for r in await conn.execute(query)]

    async def running_workflows(self) -> list[WorkflowRow]:
        async with self.db.reader.connect() as conn:
            result = await conn.execute(select(W).where(col(W.status) == WorkflowStatus.RUNNING))
            return [WorkflowRow.model_validate(r._mapping) for r in result]

    async def start_round(
        self, owner: Owner, workflow_id: str, name: str, new: bool, prompt: str, file_ids: list[int],
        passwords: dict[str, str], log: NewLog, review: str | None = None, review_default: str | None = None,
        flow: dict[str, Any] | None = None,
    ) -> WorkflowRow:
        """Create the workflow (round 1) or move it to its next round, as one compare-and-set.

        The round's user message (status first, with its documents, their contents still to
        come) is written in the same transaction: the first poll after the answer shows it.
        `review_default` ("plan" or "none") becomes the workflow's default; `review` is this
        round's, which is the default when not given.
        """
        try:
            return await self.db.run_write(self._start_round_tx, owner, workflow_id, name, new, prompt, file_ids,
                                           passwords, log, review, review_default, flow)
        except IntegrityError:
            if new and await self.db.run_read(self._exists_tx, workflow_id):
                raise WorkflowExistsError(workflow_id) from None  # a concurrent start created it first
            raise

    @staticmethod
    def _exists_tx(conn: Connection, workflow_id: str) -> bool:
        return conn.execute(select(col(W.id)).where(col(W.id) == workflow_id)).first() is not None

    def _start_round_tx(
        self, conn: Connection, owner: Owner, workflow_id: str, name: str, new: bool, prompt: str,
        file_ids: list[int], passwords: dict[str, str], log: NewLog, review: str | None = None,
        review_default: str | None = None, flow: dict[str, Any] | None = None,
    ) -> WorkflowRow:
        stamp = now()
        default = "" if review_default in (None, "none") else review_default
        if new:
            next_status(None, Event.START)
            # Checked again here: the last workflow using a file may have been deleted, and the file
            # with it, since the request read them.
            hold_files_tx(conn, owner, file_ids)
            values = _NEW_WORKFLOW | dict(
                id=workflow_id, mandate_id=owner.mandate_id, user_id=owner.user_id, name=name,
                status=WorkflowStatus.RUNNING, started_at=stamp, last_activity=stamp, current_round=1,
                review=default,
            )
            self._insert_workflow.execute(conn, values)
            row = self.locks.hold(conn, SimpleNamespace(**values))  # as written; its insert locks it
        else:
            current = self.locks.lock(conn, workflow_id)
            if current is None or (current.mandate_id, current.user_id) != (owner.mandate_id, owner.user_id):
                raise LookupError(workflow_id)
            next_status(WorkflowStatus(current.status), Event.START)
            hold_files_tx(conn, owner, file_ids)
            settle_batch(conn, workflow_id)
            changed = conn.execute(
                update(W)
                .where(col(W.id) == workflow_id, col(W.status).in_(sources(Event.START)))
                .values(status=WorkflowStatus.RUNNING, current_round=col(W.current_round) + 1, last_activity=stamp,
                        progress=0, segment=0, decision=None,
                        **({} if review_default is None else {"review": default}))
            )
            if changed.rowcount != 1:  # pragma: no cover - the lock above makes this unreachable
                next_status(WorkflowStatus.RUNNING, Event.START)
            locked = self.locks.lock(conn, workflow_id)
            if locked is None:  # pragma: no cover - locked above, so still there
                raise LookupError(workflow_id)
            row = locked
        log.key = f"{workflow_id}:{row.current_round}:start"
        mode = (review or row.review or "") if review != "none" else ""
        self._insert_round_files.execute(conn, dict(workflow_id=workflow_id, round=row.current_round, prompt=prompt,
                                                    file_ids=file_ids, passwords=passwords, review=mode, flow=flow))
        message = NewMessage(user_message_key(workflow_id, row.current_round), "user", "first", prompt,
                             documents=[NewDocument(fid) for fid in file_ids], meta=_flow_meta(flow))
        written = self.messages.append_rows_tx(conn, row, [message], [log], stamp)
        return WorkflowRow.model_validate(dict(vars(row), last_activity=stamp, last_message_id=written.last_message_id,
                                               last_log_id=written.last_log_id,
                                               next_sequence_no=row.next_sequence_no + len(written.message_ids)))

    async def round_input(self, workflow_id: str, round_no: int) -> RoundRequest | None:
        return await self.db.run_read(self._round_input_tx, workflow_id, round_no)

    def _round_input_tx(self, conn: Connection, workflow_id: str, round_no: int) -> RoundRequest | None:
        R = RoundFileRow
        query = (select(col(R.prompt), col(R.file_ids), col(R.passwords), col(R.review), col(R.flow))
                 .where(col(R.workflow_id) == workflow_id, col(R.round) == round_no))
        row = conn.execute(query).first()
        return RoundRequest(*row) if row else None

    async def forget_passwords(self, workflow_id: str, round_no: int) -> None:
        return await self.db.run_write(self._forget_passwords_tx, workflow_id, round_no)

    def _forget_passwords_tx(self, conn: Connection, workflow_id: str, round_no: int) -> None:
        conn.execute(
            update(RoundFileRow)
            .where(col(RoundFileRow.workflow_id) == workflow_id, col(RoundFileRow.round) == round_no)
            .values(passwords={})
        )

    async def append(
        self, workflow_id: str, round_no: int, messages: Sequence[NewMessage] = (), logs: Sequence[NewLog] = (),
        event: Event | None = None, cost: Cost | None = None, claim: Claim | None = None, wait: Wait | None = None,
        also: Callable[[Connection], None] | None = None,
    ) -> Appended | None:
        """Write a step's messages and logs, and apply `event`, in one transaction (with WAIT, `wait` says
        what the round waits for); `also` writes the step's other rows in it (a flow node's run).

        Nothing is written (None) unless the workflow is still running round `round_no`: a
        stopped or deleted round gets no further output.
        With a `claim` (on PostgreSQL), nothing is written and ClaimLostError raised unless the
        execution still owns the round (see app.store.ownership).
        """
        return await self.db.run_write(self._append_tx, workflow_id, round_no, messages, logs, event, cost, claim,
                                       wait, also)

    def _append_tx(
        self, conn: Connection, workflow_id: str, round_no: int, messages: Sequence[NewMessage],
        logs: Sequence[NewLog], event: Event | None, cost: Cost | None, claim: Claim | None = None,
        wait: Wait | None = None, also: Callable[[Connection], None] | None = None,
    ) -> Appended | None:
        row = self.locks.lock(conn, workflow_id, claim)
        if row is None or row.current_round != round_no or row.status != WorkflowStatus.RUNNING:
            return None
        if also is not None:
            also(conn)
        written = self.append_locked_tx(conn, row, messages, logs, event, cost, claim)
        if wait is not None and event is Event.WAIT:
            self.waiting_tx(conn, row, wait)
        return written

    def waiting_tx(self, conn: Connection, row: SimpleNamespace, wait: Wait) -> None:
        """What the round now waits for, with the id of the message to answer (written in this transaction)."""
        message_id = conn.execute(select(col(M.id)).where(col(M.key) == wait.message_key)).scalar()
        since = now()
        expires = since + timedelta(seconds=wait.seconds)
        extra = dict(wait.extra)
        if "nodes" in extra:  # a flow's human nodes waiting at once: each by the id of the message it asks in
            keys = [n["messageKey"] for n in extra["nodes"]]
            ids = dict(conn.execute(select(col(M.key), col(M.id)).where(col(M.key).in_(keys))).all())
            extra["nodes"] = [{**{k: v for k, v in n.items() if k != "messageKey"}, "messageId": ids.get(n["messageKey"])}
                              for n in extra["nodes"]]
        row.waiting_for = {"kind": wait.kind, "messageId": message_id, "since": since.isoformat(),
                           "expiresAt": expires.isoformat(), **extra}
        row.wait_expires = expires
        settle_batch(conn, row.id)
        conn.execute(update(W).where(col(W.id) == row.id).values(waiting_for=row.waiting_for, wait_expires=expires))

    def append_locked_tx(
        self, conn: Connection, row: SimpleNamespace, messages: Sequence[NewMessage], logs: Sequence[NewLog],
        event: Event | None, cost: Cost | None, claim: Claim | None,
    ) -> Appended:
        """`append` to the running round of the workflow `row`, locked by the caller."""
        stamp = now()
        workflow_id = row.id
        status = before = WorkflowStatus(row.status)
        self.locks.fence(conn, claim)
        if event is not None:
            # The row is locked and its status read: a move the table has not raises here, and the new
            # status is written with the row's totals (`append_rows_tx`), in the same statement.
            status = next_status(status, event)
            if before is WorkflowStatus.WAITING:  # what it waited for goes with the wait
                conn.execute(update(W).where(col(W.id) == workflow_id).values(waiting_for=None, wait_expires=None))
                row.waiting_for = row.wait_expires = None
            row.status = status
            if event is Event.STOP:  # the process running it may be another
                announce_stop(conn, self.db.is_sqlite, workflow_id)
        written = self.messages.append_rows_tx(conn, row, messages, logs, stamp, cost)
        written.before = before
        return written

    async def stop(self, owner: Owner | None, workflow_id: str, log: Callable[[int], NewLog]) -> Stopped | None:
        """Stop the workflow's running round with the log `log(round)`, in one transaction that also reads
        the workflow back as it leaves it; None when the owner (any owner: None) has no such workflow.

        A workflow that is not running is returned unchanged: the caller tells a second stop (fine)
        from a stop of a finished round (a conflict) by its status.
        """
        return await self.db.run_write(self._stop_tx, owner, workflow_id, log)

    def _stop_tx(self, conn: Connection, owner: Owner | None, workflow_id: str,
                 log: Callable[[int], NewLog]) -> Stopped | None:
        row = self.locks.lock(conn, workflow_id)
        if row is None or owner is not None and (row.mandate_id, row.user_id) != (owner.mandate_id, owner.user_id):
            return None
        written = None
        if row.status in (WorkflowStatus.RUNNING, WorkflowStatus.WAITING):
            queued = delete(QueuedPostRow).where(col(QueuedPostRow.workflow_id) == workflow_id)
            cancelled = conn.execute(queued).rowcount
            logs = [NewLog(f"{workflow_id}:{row.current_round}:queue-cancelled",
                           f"The stop also cancelled {cancelled} queued message{'' if cancelled == 1 else 's'}",
                           type="warning", agent_name="system")] if cancelled else []
            written = self.append_locked_tx(conn, row, (), [*logs, log(row.current_round)], Event.STOP, None, None)
        settle_batch(conn, workflow_id)  # the batch's update of the row, written before the row is read back
        return Stopped(self.locked_tx(conn, workflow_id), written)

    async def attach_contents(self, workflow_id: str, round_no: int, file_id: int,
                              contents: list[ContentItem], logs: Sequence[NewLog] = (),
                              claim: Claim | None = None, message_id: int | None = None) -> Appended | None:
        """Fill in one document of the round's user message with its extracted contents, with `logs`.

        The contents are filled in whatever the round's status (they are the file's, and later
        rounds read them); the logs only while the round runs. `message_id` names an earlier
        round's message instead, whose reading of that file was cut by a stop: this round read it.
        """
        return await self.db.run_write(self._attach_contents_tx, workflow_id, round_no, file_id, contents, logs,
                                       claim, message_id)

    def _attach_contents_tx(self, conn: Connection, workflow_id: str, round_no: int, file_id: int,
                            contents: list[ContentItem], logs: Sequence[NewLog],
                            claim: Claim | None = None, message_id: int | None = None) -> Appended | None:
        row = self.locks.lock(conn, workflow_id, claim)
        if row is None or row.current_round != round_no:
            return None
        if row.status == WorkflowStatus.RUNNING:
            self.locks.fence(conn, claim)
        message = (select(col(M.id)).where(col(M.id) == message_id, col(M.workflow_id) == workflow_id)
                   if message_id is not None
                   else select(col(M.id)).where(col(M.key) == user_message_key(workflow_id, round_no))).scalar_subquery()
        conn.execute(update(D).where(col(D.message_id) == message, col(D.file_id) == file_id).values(contents=contents))
        if row.status != WorkflowStatus.RUNNING:
            return None
        return self.messages.append_rows_tx(conn, row, [], logs, now())

    async def rename(self, owner: Owner, workflow_id: str, name: str) -> WorkflowRow | None:
        """Give the owner's workflow a new name (the list's title); None when it is not theirs."""
        return await self.db.run_write(self._rename_tx, owner, workflow_id, name)

    def _rename_tx(self, conn: Connection, owner: Owner, workflow_id: str, name: str) -> WorkflowRow | None:
        settle_batch(conn, workflow_id)
        mine = (col(W.id) == workflow_id, col(W.mandate_id) == owner.mandate_id, col(W.user_id) == owner.user_id)
        if not conn.execute(update(W).where(*mine).values(name=name)).rowcount:
            return None
        return self.workflow_tx(conn, owner, workflow_id)

    async def delete_workflow(self, owner: Owner, workflow_id: str) -> list[FileRow] | None:
        """Delete the workflow with its messages and logs, and the files only it referenced."""
        return await self.db.run_write(self._delete_workflow_tx, owner, workflow_id)

    def _delete_workflow_tx(self, conn: Connection, owner: Owner, workflow_id: str) -> list[FileRow] | None:
        row = self.locks.lock(conn, workflow_id)
        if row is None or (row.mandate_id, row.user_id) != (owner.mandate_id, owner.user_id):
            return None
        next_status(WorkflowStatus(row.status), Event.DELETE)
        if (shared := batch_of(conn)) is not None:
            shared.forget(workflow_id)
        mine = select(col(D.file_id)).join(M, col(M.id) == col(D.message_id)).where(col(M.workflow_id) == workflow_id)
        others = select(col(D.file_id)).join(M, col(M.id) == col(D.message_id)).where(col(M.workflow_id) != workflow_id)
        input_ids = select(col(RoundFileRow.file_ids)).where(col(RoundFileRow.workflow_id) == workflow_id)
        file_ids = {fid for (fid,) in conn.execute(mine)}
        for (ids,) in conn.execute(input_ids):
            file_ids.update(ids)
        # Lock them first: a start naming one of them either wrote its message already (seen as sharing
        # it below) or waits for this delete and finds it gone (on PostgreSQL; SQLite writes one at a time).
        conn.execute(select(col(F.id)).where(col(F.id).in_(sorted(file_ids))).with_for_update())
        kept = {fid for (fid,) in conn.execute(others.where(col(D.file_id).in_(file_ids)))}
        orphans = sorted(file_ids - kept)
        files = [FileRow.model_validate(r._mapping) for r in conn.execute(select(F).where(col(F.id).in_(orphans)))]
        conn.execute(delete(D).where(col(D.message_id).in_(select(col(M.id)).where(col(M.workflow_id) == workflow_id))))
        conn.execute(delete(M).where(col(M.workflow_id) == workflow_id))
        conn.execute(delete(L).where(col(L.workflow_id) == workflow_id))
        conn.execute(delete(RoundFileRow).where(col(RoundFileRow.workflow_id) == workflow_id))
        conn.execute(delete(RoundMemoryRow).where(col(RoundMemoryRow.workflow_id) == workflow_id))
        conn.execute(delete(NodeRunRow).where(col(NodeRunRow.workflow_id) == workflow_id))
        conn.execute(delete(QueuedPostRow).where(col(QueuedPostRow.workflow_id) == workflow_id))
        # A key whose workflow is gone starts afresh: its answer would name a workflow that is not there.
        conn.execute(delete(IdempotencyRow).where(col(IdempotencyRow.workflow_id) == workflow_id))
        conn.execute(delete(W).where(col(W.id) == workflow_id))
        if orphans:
            conn.execute(delete(F).where(col(F.id).in_(orphans)))
            forget_unused_contents_tx(conn, sorted({f.sha256 for f in files}), self.db.is_sqlite)
        announce_deleted(conn, self.db.is_sqlite, workflow_id)
        return files


def _flow_meta(flow: dict[str, Any] | None) -> dict[str, Any]:
    """A flow round's user message metadata: `flow` {id, version, hash, inputs}, and a rerun's `forkOf`
    {round, node} (the node runs it reuses stay in the round's files, not on the message)."""
    if not flow:
        return {}
    meta: dict[str, Any] = {"flow": {k: v for k, v in flow.items() if k not in ("reuse", "forkOf")}}
    if "forkOf" in flow:
        meta["forkOf"] = flow["forkOf"]
    return meta
