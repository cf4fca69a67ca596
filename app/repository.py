"""Every SQL statement of the service. Nothing else builds queries."""

from __future__ import annotations

from datetime import datetime
from types import SimpleNamespace
from typing import Any, Sequence

from sqlalchemy import and_, bindparam, delete, func, or_, select, update
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.engine import Connection
from sqlalchemy.ext.asyncio import AsyncConnection

from app.clock import aware, now
from app.chunks import delete_unused_chunks_tx, insert_chunks_tx
from app.db import Database
from app.notify import CHANNEL, STOP_CHANNEL, payload
from app.records import Appended, Cost, NewDocument, NewLog, NewMessage, Owner
from app.fsm import Event, WorkflowStatus, next_status, sources
from app.tables import (
    DocumentRow,
    ExtractionRow,
    FileRow,
    IdempotencyRow,
    LogRow,
    MessageRow,
    RoundFileRow,
    WorkflowRow,
)

W, M, L, F, D = WorkflowRow, MessageRow, LogRow, FileRow, DocumentRow
CLAIM_SECONDS = 120.0


class KeyReusedError(Exception):
    """An Idempotency-Key already used for a different request."""


def user_message_key(workflow_id: str, round_no: int) -> str:
    """The key of a round's user message (status first), written by the start."""
    return f"{workflow_id}:{round_no}:prepare:message"


class Repository:
    """Queries over one database."""

    def __init__(self, db: Database) -> None:
        self.db = db
        self._insert = sqlite.insert if db.is_sqlite else postgresql.insert
        # The hot statements are built once with bound parameters, so each append only binds
        # values: building SQLAlchemy statements per call cost more than SQLite's own work.
        wt = W.__table__
        self._lock_query = select(wt).where(wt.c.id == bindparam("wid"))
        if not db.is_sqlite:
            self._lock_query = self._lock_query.with_for_update()  # appends per workflow commit in id order
        self._insert_message = (self._insert(M.__table__).on_conflict_do_nothing(index_elements=["key"])
                                .returning(M.__table__.c.id))
        self._insert_log = (self._insert(L.__table__).on_conflict_do_nothing(index_elements=["key"])
                            .returning(L.__table__.c.id))
        self._insert_document = D.__table__.insert()
        self._update_totals = update(wt).where(wt.c.id == bindparam("wid")).values(
            last_activity=bindparam("stamp"), last_message_id=bindparam("last_message"),
            last_log_id=bindparam("last_log"), next_sequence_no=bindparam("seq"), progress=bindparam("shown"),
            bytes_sent=wt.c.bytes_sent + bindparam("sent"), bytes_received=wt.c.bytes_received + bindparam("received"),
            tokens_used=wt.c.tokens_used + bindparam("tokens"),
            processing_time=wt.c.processing_time + bindparam("seconds"),
        )

    # ---- files -------------------------------------------------------------------------

    async def add_files(self, rows: Sequence[FileRow]) -> list[FileRow]:
        return await self.db.run_write(self._add_files_tx, rows)

    def _add_files_tx(self, conn: Connection, rows: Sequence[FileRow]) -> list[FileRow]:
        out = []
        for row in rows:
            values = row.model_dump(exclude={"id"})
            new_id = (conn.execute(F.__table__.insert().values(**values).returning(F.id))).scalar_one()
            out.append(row.model_copy(update={"id": new_id}))
        return out

    async def files(self, owner: Owner, ids: Sequence[int]) -> dict[int, FileRow]:
        if not ids:
            return {}
        async with self.db.reader.connect() as conn:
            result = await conn.execute(
                select(F).where(F.id.in_(list(ids)), F.mandate_id == owner.mandate_id, F.user_id == owner.user_id)
            )
            return {row.id: FileRow.model_validate(row._mapping) for row in result}

    async def files_by_id(self, ids: Sequence[int]) -> dict[int, FileRow]:
        if not ids:
            return {}
        async with self.db.reader.connect() as conn:
            result = await conn.execute(select(F).where(F.id.in_(list(ids))))
            return {row.id: FileRow.model_validate(row._mapping) for row in result}

    async def sha_in_use(self, sha256: str) -> bool:
        async with self.db.reader.connect() as conn:
            return (await conn.execute(select(func.count()).where(F.sha256 == sha256))).scalar_one() > 0

    # ---- workflows ---------------------------------------------------------------------

    async def workflow(self, owner: Owner | None, workflow_id: str) -> WorkflowRow | None:
        query = select(W).where(W.id == workflow_id)
        if owner is not None:
            query = query.where(W.mandate_id == owner.mandate_id, W.user_id == owner.user_id)
        async with self.db.reader.connect() as conn:
            row = (await conn.execute(query)).first()
            return WorkflowRow.model_validate(row._mapping) if row else None

    async def workflows(self, owner: Owner, limit: int | None = None,
                        after: tuple[datetime, str] | None = None) -> list[WorkflowRow]:
        """The owner's workflows, newest activity first; `after` is the (activity, id) a page ended with."""
        query = (
            select(W)
            .where(W.mandate_id == owner.mandate_id, W.user_id == owner.user_id)
            .order_by(W.last_activity.desc(), W.id)
        )
        if after is not None:
            stamp, last_id = after
            query = query.where(or_(W.last_activity < stamp, and_(W.last_activity == stamp, W.id > last_id)))
        if limit is not None:
            query = query.limit(limit)
        async with self.db.reader.connect() as conn:
            return [WorkflowRow.model_validate(r._mapping) for r in await conn.execute(query)]

    async def running_workflows(self) -> list[WorkflowRow]:
        async with self.db.reader.connect() as conn:
            result = await conn.execute(select(W).where(W.status == WorkflowStatus.RUNNING))
            return [WorkflowRow.model_validate(r._mapping) for r in result]

    async def start_round(
        self, owner: Owner, workflow_id: str, name: str, new: bool, prompt: str, file_ids: list[int],
        passwords: dict[str, str], log: NewLog,
    ) -> WorkflowRow:
        """Create the workflow (round 1) or move it to its next round, as one compare-and-set.

        The round's user message (status first, with its documents, their contents still to
        come) is written in the same transaction: the first poll after the answer shows it.
        """
        return await self.db.run_write(self._start_round_tx, owner, workflow_id, name, new, prompt, file_ids,
                                       passwords, log)

    def _start_round_tx(
        self, conn: Connection, owner: Owner, workflow_id: str, name: str, new: bool, prompt: str,
        file_ids: list[int], passwords: dict[str, str], log: NewLog,
    ) -> WorkflowRow:
        stamp = now()
        if new:
            next_status(None, Event.START)
            row = WorkflowRow(
                id=workflow_id, mandate_id=owner.mandate_id, user_id=owner.user_id, name=name,
                status=WorkflowStatus.RUNNING, started_at=stamp, last_activity=stamp, current_round=1,
            )
            conn.execute(W.__table__.insert().values(**row.model_dump()))
        else:
            current = self._lock(conn, workflow_id)
            if current is None or (current.mandate_id, current.user_id) != (owner.mandate_id, owner.user_id):
                raise LookupError(workflow_id)
            next_status(WorkflowStatus(current.status), Event.START)
            changed = conn.execute(
                update(W)
                .where(W.id == workflow_id, W.status.in_(sources(Event.START)))
                .values(status=WorkflowStatus.RUNNING, current_round=W.current_round + 1, last_activity=stamp,
                        progress=0)
            )
            if changed.rowcount != 1:  # pragma: no cover - the lock above makes this unreachable
                next_status(WorkflowStatus.RUNNING, Event.START)
        row = self._lock(conn, workflow_id)
        log.key = f"{workflow_id}:{row.current_round}:start"
        conn.execute(
            RoundFileRow.__table__.insert().values(
                workflow_id=workflow_id, round=row.current_round, prompt=prompt, file_ids=file_ids,
                passwords=passwords,
            )
        )
        message = NewMessage(user_message_key(workflow_id, row.current_round), "user", "first", prompt,
                             documents=[NewDocument(fid) for fid in file_ids])
        self._append_rows(conn, row, [message], [log], stamp)
        return WorkflowRow.model_validate(vars(self._lock(conn, workflow_id)))

    async def round_input(self, workflow_id: str, round_no: int) -> RoundFileRow | None:
        async with self.db.reader.connect() as conn:
            row = (
                await conn.execute(
                    select(RoundFileRow).where(RoundFileRow.workflow_id == workflow_id, RoundFileRow.round == round_no)
                )
            ).first()
            return RoundFileRow.model_validate(row._mapping) if row else None

    async def forget_passwords(self, workflow_id: str, round_no: int) -> None:
        return await self.db.run_write(self._forget_passwords_tx, workflow_id, round_no)

    def _forget_passwords_tx(self, conn: Connection, workflow_id: str, round_no: int) -> None:
        conn.execute(
            update(RoundFileRow)
            .where(RoundFileRow.workflow_id == workflow_id, RoundFileRow.round == round_no)
            .values(passwords={})
        )

    async def append(
        self, workflow_id: str, round_no: int, messages: Sequence[NewMessage] = (), logs: Sequence[NewLog] = (),
        event: Event | None = None, progress: int | None = None, require_running: bool = True,
        cost: Cost | None = None,
    ) -> Appended | None:
        """Write a step's messages and logs, and apply `event`, in one transaction.

        Nothing is written (None) unless the workflow is still in round `round_no` and, with
        `require_running`, still running: a stopped or deleted round gets no further output.
        """
        return await self.db.run_write(self._append_tx, workflow_id, round_no, messages, logs, event, progress,
                                       require_running, cost)

    def _append_tx(
        self, conn: Connection, workflow_id: str, round_no: int, messages: Sequence[NewMessage],
        logs: Sequence[NewLog], event: Event | None, progress: int | None, require_running: bool,
        cost: Cost | None = None,
    ) -> Appended | None:
        stamp = now()
        row = self._lock(conn, workflow_id)
        if row is None or row.current_round != round_no:
            return None
        status = before = WorkflowStatus(row.status)
        if require_running and status is not WorkflowStatus.RUNNING:
            return None
        if event is not None:
            if status is not WorkflowStatus.RUNNING and event is not Event.STOP:
                return None
            status = next_status(status, event)
            conn.execute(
                update(W).where(W.id == workflow_id, W.status.in_(sources(event))).values(status=status)
            )
            row.status = status
            if event is Event.STOP and not self.db.is_sqlite:  # the process running it may be another
                conn.execute(select(func.pg_notify(STOP_CHANNEL, workflow_id)))
        if progress is not None:
            row.progress = progress
        written = self._append_rows(conn, row, messages, logs, stamp, cost)
        written.before = before
        return written

    async def attach_contents(self, workflow_id: str, round_no: int, file_id: int,
                              contents: list[dict[str, Any]], logs: Sequence[NewLog] = ()) -> Appended | None:
        """Fill in one document of the round's user message with its extracted contents, with `logs`.

        The contents are filled in whatever the round's status (they are the file's, and later
        rounds read them); the logs only while the round runs.
        """
        return await self.db.run_write(self._attach_contents_tx, workflow_id, round_no, file_id, contents, logs)

    def _attach_contents_tx(self, conn: Connection, workflow_id: str, round_no: int, file_id: int,
                            contents: list[dict[str, Any]], logs: Sequence[NewLog]) -> Appended | None:
        row = self._lock(conn, workflow_id)
        if row is None or row.current_round != round_no:
            return None
        message = select(M.id).where(M.key == user_message_key(workflow_id, round_no)).scalar_subquery()
        conn.execute(update(D).where(D.message_id == message, D.file_id == file_id).values(contents=contents))
        if row.status != WorkflowStatus.RUNNING:
            return None
        return self._append_rows(conn, row, [], logs, now())

    def _lock(self, conn: Connection, workflow_id: str) -> SimpleNamespace | None:
        # The row's columns as attributes, unvalidated: every append reads it, and validating
        # it into a WorkflowRow cost more than the statements the append runs.
        row = conn.execute(self._lock_query, {"wid": workflow_id}).first()
        return SimpleNamespace(**row._mapping) if row else None

    def _append_rows(
        self, conn: Connection, row: SimpleNamespace, messages: Sequence[NewMessage], logs: Sequence[NewLog],
        stamp: datetime, cost: Cost | None = None,
    ) -> Appended:
        message_ids, log_ids = [], []
        seq = row.next_sequence_no
        cost = cost or Cost()
        sent, received, tokens, seconds = cost.bytes_sent, cost.bytes_received, cost.tokens_used, cost.processing_time
        progress = row.progress
        parent: int | None = None  # an assistant message answers its round's user message
        if any(msg.role != "user" for msg in messages):
            parent = conn.execute(select(M.id).where(M.workflow_id == row.id, M.round == row.current_round,
                                                     M.role == "user").order_by(M.id).limit(1)).scalar()
        for msg in messages:
            values = dict(
                workflow_id=row.id, key=msg.key, round=row.current_round, started_at=msg.started_at or stamp,
                parent_message_id=None if msg.role == "user" else parent,
                finished_at=stamp, sequence_no=seq, status=msg.status, role=msg.role, content=msg.content,
                agent_name=msg.agent_name, bytes_sent=msg.bytes_sent, bytes_received=msg.bytes_received,
                tokens_used=msg.tokens_used, processing_time=msg.processing_time, meta=msg.meta, deleted=False,
            )
            new_id = conn.execute(self._insert_message, values).scalar_one_or_none()
            if new_id is None:
                continue  # written before a crash; the replay must not write it twice
            if msg.role == "user":
                parent = parent or new_id
            seq += 1
            message_ids.append(new_id)
            sent, received = sent + msg.bytes_sent, received + msg.bytes_received
            tokens, seconds = tokens + msg.tokens_used, seconds + msg.processing_time
            for position, doc in enumerate(msg.documents):
                conn.execute(self._insert_document, dict(
                    id=f"doc_{new_id}_{position}", message_id=new_id, file_id=doc.file_id, position=position,
                    contents=doc.contents,
                ))
        for entry in logs:
            # Parallel tasks finish in any order; the progress a poller sees never goes back.
            # A log without its own progress (a warning, say) shows where the round is.
            shown = progress if entry.progress is None else max(entry.progress, progress)
            values = dict(
                workflow_id=row.id, key=entry.key, round=row.current_round, message=entry.message, type=entry.type,
                timestamp=stamp, agent_name=entry.agent_name, status=entry.status or row.status,
                progress=shown,
            )
            new_id = conn.execute(self._insert_log, values).scalar_one_or_none()
            if new_id is not None:
                log_ids.append(new_id)
                progress = shown
        last_message_id = max(message_ids, default=row.last_message_id)
        last_log_id = max(log_ids, default=row.last_log_id)
        conn.execute(self._update_totals, dict(
            wid=row.id, stamp=stamp, last_message=last_message_id, last_log=last_log_id, seq=seq, shown=progress,
            sent=sent, received=received, tokens=tokens, seconds=seconds,
        ))
        if not self.db.is_sqlite and (message_ids or log_ids):
            conn.execute(select(func.pg_notify(CHANNEL, payload(row.id, last_message_id, last_log_id))))
        return Appended(message_ids, log_ids, WorkflowStatus(row.status), last_message_id, last_log_id)

    async def delete_workflow(self, owner: Owner, workflow_id: str) -> list[FileRow] | None:
        """Delete the workflow with its messages and logs, and the files only it referenced."""
        return await self.db.run_write(self._delete_workflow_tx, owner, workflow_id)

    def _delete_workflow_tx(self, conn: Connection, owner: Owner, workflow_id: str) -> list[FileRow] | None:
        row = self._lock(conn, workflow_id)
        if row is None or (row.mandate_id, row.user_id) != (owner.mandate_id, owner.user_id):
            return None
        next_status(WorkflowStatus(row.status), Event.DELETE)
        mine = select(D.file_id).join(M, M.id == D.message_id).where(M.workflow_id == workflow_id)
        others = select(D.file_id).join(M, M.id == D.message_id).where(M.workflow_id != workflow_id)
        input_ids = select(RoundFileRow.file_ids).where(RoundFileRow.workflow_id == workflow_id)
        file_ids = {fid for (fid,) in conn.execute(mine)}
        for (ids,) in conn.execute(input_ids):
            file_ids.update(ids)
        shared = {fid for (fid,) in conn.execute(others.where(D.file_id.in_(file_ids)))}
        orphans = sorted(file_ids - shared)
        files = [FileRow.model_validate(r._mapping) for r in conn.execute(select(F).where(F.id.in_(orphans)))]
        conn.execute(delete(D).where(D.message_id.in_(select(M.id).where(M.workflow_id == workflow_id))))
        conn.execute(delete(M).where(M.workflow_id == workflow_id))
        conn.execute(delete(L).where(L.workflow_id == workflow_id))
        conn.execute(delete(RoundFileRow).where(RoundFileRow.workflow_id == workflow_id))
        # A key whose workflow is gone starts afresh: its answer would name a workflow that is not there.
        conn.execute(delete(IdempotencyRow).where(IdempotencyRow.workflow_id == workflow_id))
        conn.execute(delete(W).where(W.id == workflow_id))
        if orphans:
            conn.execute(delete(F).where(F.id.in_(orphans)))
            delete_unused_chunks_tx(conn, sorted({f.sha256 for f in files}), self.db.is_sqlite)
        if not self.db.is_sqlite:
            conn.execute(select(func.pg_notify(CHANNEL, f"{workflow_id} deleted")))
        return files

    # ---- messages and logs -------------------------------------------------------------

    async def message_page(self, workflow_id: str, after: int, limit: int) -> list[tuple[MessageRow, list[DocumentRow]]]:
        async with self.db.reader.connect() as conn:
            rows = [
                MessageRow.model_validate(r._mapping)
                for r in await conn.execute(
                    select(M).where(M.workflow_id == workflow_id, M.id > after, M.deleted.is_(False))
                    .order_by(M.id).limit(limit)
                )
            ]
            docs = await self._documents(conn, [r.id for r in rows])
            return [(r, docs.get(r.id, [])) for r in rows]

    async def messages_of(self, workflow_id: str) -> list[tuple[MessageRow, list[DocumentRow]]]:
        return await self.message_page(workflow_id, 0, 1_000_000)

    async def completed_rounds(self, workflow_id: str, before_round: int) -> set[int]:
        """The earlier rounds that completed (their logs say so even when the final message was deleted)."""
        query = (select(L.round).where(L.workflow_id == workflow_id, L.round < before_round,
                                       L.status == WorkflowStatus.COMPLETED).distinct())
        async with self.db.reader.connect() as conn:
            return {r for (r,) in await conn.execute(query)}

    async def _documents(self, conn: AsyncConnection, message_ids: list[int]) -> dict[int, list[DocumentRow]]:
        if not message_ids:
            return {}
        out: dict[int, list[DocumentRow]] = {}
        query = select(D).where(D.message_id.in_(message_ids)).order_by(D.message_id, D.position)
        for r in await conn.execute(query):
            doc = DocumentRow.model_validate(r._mapping)
            out.setdefault(doc.message_id, []).append(doc)
        return out

    async def log_page(self, workflow_id: str, after: int, limit: int) -> list[LogRow]:
        async with self.db.reader.connect() as conn:
            result = await conn.execute(
                select(L).where(L.workflow_id == workflow_id, L.id > after).order_by(L.id).limit(limit)
            )
            return [LogRow.model_validate(r._mapping) for r in result]

    async def logs_of(self, workflow_id: str) -> list[LogRow]:
        return await self.log_page(workflow_id, 0, 1_000_000)

    async def cursor_belongs(self, workflow_id: str, kind: str, item_id: int) -> bool:
        table = M if kind == "messages" else L
        async with self.db.reader.connect() as conn:
            found = await conn.execute(select(table.id).where(table.id == item_id, table.workflow_id == workflow_id))
            return found.first() is not None

    async def delete_message(self, workflow_id: str, message_id: int) -> bool:
        """Hide a message; its id stays valid as a cursor."""
        return await self.db.run_write(self._delete_message_tx, workflow_id, message_id)

    def _delete_message_tx(self, conn: Connection, workflow_id: str, message_id: int) -> bool:
        changed = conn.execute(
            update(M).where(M.id == message_id, M.workflow_id == workflow_id, M.deleted.is_(False))
            .values(deleted=True)
        )
        if changed.rowcount:
            conn.execute(update(W).where(W.id == workflow_id).values(last_activity=now()))
        return bool(changed.rowcount)

    async def remove_document(self, workflow_id: str, message_id: int, file_id: int) -> bool:
        return await self.db.run_write(self._remove_document_tx, workflow_id, message_id, file_id)

    def _remove_document_tx(self, conn: Connection, workflow_id: str, message_id: int, file_id: int) -> bool:
        owned = select(M.id).where(M.id == message_id, M.workflow_id == workflow_id, M.deleted.is_(False))
        changed = conn.execute(
            delete(D).where(D.message_id == message_id, D.file_id == file_id, D.message_id.in_(owned))
        )
        if changed.rowcount:
            conn.execute(update(W).where(W.id == workflow_id).values(last_activity=now()))
        return bool(changed.rowcount)

    # ---- caches ------------------------------------------------------------------------

    async def extraction(self, key: str) -> ExtractionRow | None:
        async with self.db.reader.connect() as conn:
            row = (await conn.execute(select(ExtractionRow).where(ExtractionRow.key == key))).first()
            return ExtractionRow.model_validate(row._mapping) if row else None

    async def save_extraction(self, row: ExtractionRow, sha256: str = "", chunks: Sequence[dict[str, Any]] = ()) -> None:
        """Cache an extraction, with the file's full-text chunks, in one transaction."""
        return await self.db.run_write(self._save_extraction_tx, row, sha256, chunks)

    def _save_extraction_tx(self, conn: Connection, row: ExtractionRow, sha256: str = "",
                            chunks: Sequence[dict[str, Any]] = ()) -> None:
        conn.execute(
            self._insert(ExtractionRow.__table__).values(**row.model_dump()).on_conflict_do_nothing(
                index_elements=["key"]
            )
        )
        insert_chunks_tx(conn, sha256, chunks, self.db.is_sqlite)

    async def claim_idempotency(self, key: str, fingerprint: str = "") -> tuple[bool, dict[str, Any] | None]:
        """(True, None) when this caller may carry out the request for `key`; else (False, the first
        answer, or None while another process is still working on it). A claim left unanswered for
        CLAIM_SECONDS (its process died) passes to the next caller. KeyReusedError when the key was
        first used for a request with another `fingerprint`."""
        return await self.db.run_write(self._claim_idempotency_tx, key, fingerprint)

    def _claim_idempotency_tx(self, conn: Connection, key: str,
                              fingerprint: str) -> tuple[bool, dict[str, Any] | None]:
        stamp = now()
        table = IdempotencyRow.__table__
        claimed = conn.execute(
            self._insert(table).values(key=key, response={}, created_at=stamp, fingerprint=fingerprint)
            .on_conflict_do_nothing(index_elements=["key"]).returning(table.c.key)
        ).first()
        if claimed:
            return True, None
        response, created, first = conn.execute(
            select(table.c.response, table.c.created_at, table.c.fingerprint).where(table.c.key == key)).one()
        if first != fingerprint:
            raise KeyReusedError(key)
        if response:
            return False, response
        if (stamp - aware(created)).total_seconds() > CLAIM_SECONDS:
            conn.execute(update(table).where(table.c.key == key).values(created_at=stamp))
            return True, None
        return False, None

    async def answer_idempotency(self, key: str, response: dict[str, Any] | None) -> None:
        """Store the answer for a claimed key, or (None) give the claim up so a retry can try again."""
        await self.db.run_write(self._answer_idempotency_tx, key, response)

    def _answer_idempotency_tx(self, conn: Connection, key: str, response: dict[str, Any] | None) -> None:
        table = IdempotencyRow.__table__
        if response is None:
            row = conn.execute(select(table.c.response).where(table.c.key == key)).first()
            if row is not None and not row[0]:  # never drop an answer someone else stored
                conn.execute(delete(table).where(table.c.key == key))
        else:
            conn.execute(update(table).where(table.c.key == key).values(response=response,
                                                                        workflow_id=response.get("id")))
