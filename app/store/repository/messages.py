"""Messages (with their documents) and logs: the rows a round appends, the pages pollers read."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from types import SimpleNamespace
from typing import Any

from sqlalchemy import bindparam, delete, func, select, update
from sqlalchemy.engine import Connection
from sqlmodel import col

from app.clock import now
from app.fsm import WorkflowStatus
from app.store.batch import batch_of
from app.store.database import Database
from app.store.notify import announcing, cursors_announcement
from app.store.records import Appended, Cost, NewLog, NewMessage
from app.store.repository.memory import forget_round_tx
from app.store.statements import Prepared
from app.store.tables import DocumentRow, FileRow, LogRow, MessageRow, WorkflowRow, stored_id, table_of

W, M, L, D, F = WorkflowRow, MessageRow, LogRow, DocumentRow, FileRow


def user_message_key(workflow_id: str, round_no: int) -> str:
    """The key of a round's user message (status first), written by the start."""
    return f"{workflow_id}:{round_no}:prepare:message"

READ_DONE = ":done"  # the reading log written with the file's contents (`attach_contents`) ends so


def reading_key(workflow_id: str, round_no: int, position: int) -> str:
    """The key prefix of the logs about reading the file at `position` of a round's user message."""
    return f"{workflow_id}:{round_no}:prepare:file:{position}"


def fills_message(log_key: str) -> bool:
    """Whether a log was written in the transaction that filled a file's contents into its round's user message."""
    return log_key.endswith(READ_DONE) and ":prepare:file:" in log_key


SOME_LOGS = 16  # up to this many logs of one append are one statement on the cursor (`_logs_insert`)
LOG_COLUMNS = ("workflow_id", "key", "round", "message", "type", "timestamp", "agent_name", "status", "progress")

UPDATES = ":updates:"  # a log whose key ends so changed the message it names (e.g. a plan's review state)


def updates_key(key: str, message_id: int) -> str:
    """The key of a log written in the transaction that changed message `message_id`."""
    return f"{key}{UPDATES}{message_id}"


def _updated(key: str) -> int | None:
    head, found, tail = key.rpartition(UPDATES)
    return int(tail) if found and tail.isdigit() else None


class MessageStore:
    """Queries over messages, their documents and logs."""

    def __init__(self, db: Database) -> None:
        self.db = db
        # The hot statements are built once with bound parameters, so each append only binds
        # values: building SQLAlchemy statements per call cost more than SQLite's own work.
        wt = table_of(W)
        # Those a round writes many times run straight on the cursor (app.store.statements).
        self._insert_message = Prepared(db.insert(table_of(M)).on_conflict_do_nothing(index_elements=["key"])
                                        .returning(table_of(M).c.id))
        self._insert_logs = (db.insert(table_of(L)).on_conflict_do_nothing(index_elements=["key"])
                             .returning(table_of(L).c.id, table_of(L).c.progress))
        self._insert_log = Prepared(self._insert_logs)
        self._insert_some_logs: dict[int, Prepared] = {}  # by how many (`_logs_insert`)
        self._insert_reply = Prepared(db.insert(table_of(M))
                                      .values(parent_message_id=select(col(M.id))
                                              .where(col(M.key) == bindparam("parent_key"))
                                              .scalar_subquery())
                                      .on_conflict_do_nothing(index_elements=["key"]).returning(table_of(M).c.id))
        self._insert_document = table_of(D).insert()
        self._insert_file = table_of(F).insert().returning(table_of(F).c.id)
        # The round's status too: an append that moves it (a round's end, a wait) writes it here, not
        # in a statement of its own (the row is locked and its status checked by the caller).
        update_totals = update(wt).where(wt.c.id == bindparam("wid")).values(
            status=bindparam("status"), last_activity=bindparam("stamp"), last_message_id=bindparam("last_message"),
            last_log_id=bindparam("last_log"), next_sequence_no=bindparam("seq"), progress=bindparam("shown"),
            bytes_sent=wt.c.bytes_sent + bindparam("sent"), bytes_received=wt.c.bytes_received + bindparam("received"),
            tokens_used=wt.c.tokens_used + bindparam("tokens"),
            processing_time=wt.c.processing_time + bindparam("seconds"),
        )
        self._update_totals = Prepared(update_totals)
        self._update_announcing = Prepared(announcing(update_totals))

    def append_rows_tx(
        self, conn: Connection, row: SimpleNamespace, messages: Sequence[NewMessage], logs: Sequence[NewLog],
        stamp: datetime, cost: Cost | None = None,
    ) -> Appended:
        """Write messages and logs to the workflow `row` (locked by the caller) and update its totals."""
        message_ids, file_ids = [], []
        seq = row.next_sequence_no
        cost = cost or Cost()
        sent, received, tokens, seconds = cost.bytes_sent, cost.bytes_received, cost.tokens_used, cost.processing_time
        progress = row.progress
        for msg in messages:
            values = dict(
                workflow_id=row.id, key=msg.key, round=row.current_round, started_at=msg.started_at or stamp,
                finished_at=stamp, sequence_no=seq, status=msg.status, role=msg.role, content=msg.content,
                agent_name=msg.agent_name, bytes_sent=msg.bytes_sent, bytes_received=msg.bytes_received,
                tokens_used=msg.tokens_used, processing_time=msg.processing_time, meta=msg.meta, deleted=False,
            )
            if msg.role == "user":
                written = self._insert_message.execute(conn, dict(values, parent_message_id=None))
            else:  # an answer names its round's user message as its parent, found by key in the same statement
                values["parent_key"] = user_message_key(row.id, row.current_round)
                written = self._insert_reply.execute(conn, values)
            if not written:
                continue  # written before a crash; the replay must not write it twice
            new_id = written[0][0]
            seq += 1
            message_ids.append(new_id)
            sent, received = sent + msg.bytes_sent, received + msg.bytes_received
            tokens, seconds = tokens + msg.tokens_used, seconds + msg.processing_time
            for position, doc in enumerate(msg.documents):
                file_id = doc.file_id
                if doc.file is not None:  # a file made with the message: written only with it
                    file_id = conn.execute(self._insert_file, doc.file.model_dump(exclude={"id"})).scalar_one()
                    file_ids.append(file_id)
                conn.execute(self._insert_document, dict(
                    id=f"doc_{new_id}_{position}", message_id=new_id, file_id=file_id, position=position,
                    contents=doc.contents,
                ))
        # Parallel tasks finish in any order; the progress a poller sees never goes back.
        # A log without its own progress (a warning, say) shows where the round is.
        rows = []
        for entry in logs:
            progress = progress if entry.progress is None else max(entry.progress, progress)
            rows.append(dict(workflow_id=row.id, key=entry.key, round=row.current_round, message=entry.message,
                             type=entry.type, timestamp=stamp, agent_name=entry.agent_name,
                             status=entry.status or row.status, progress=progress))
        # One statement for all of them (on the cursor, up to SOME_LOGS); a log written before a crash
        # is not written again and returns nothing (the row's progress already counts it).
        if len(rows) == 1:
            written = self._insert_log.execute(conn, rows[0])
        elif 1 < len(rows) <= SOME_LOGS:
            written = self._logs_insert(len(rows)).execute(conn, {f"{name}_{n}": value for n, values in enumerate(rows)
                                                                  for name, value in values.items()})
        else:
            written = [tuple(r) for r in conn.execute(self._insert_logs, rows)] if rows else []
        log_ids = [log_id for log_id, _ in written]
        progress = max((shown for _, shown in written), default=row.progress)
        last_message_id = max(message_ids, default=row.last_message_id)
        last_log_id = max(log_ids, default=row.last_log_id)
        row.last_activity, row.next_sequence_no, row.progress = stamp, seq, progress
        row.last_message_id, row.last_log_id = last_message_id, last_log_id
        self._add_totals(conn, row, dict(sent=sent, received=received, tokens=tokens, seconds=seconds),
                         announce=bool(message_ids or log_ids))
        return Appended(message_ids, log_ids, WorkflowStatus(row.status), last_message_id, last_log_id,
                        file_ids=file_ids)

    def _logs_insert(self, count: int) -> Prepared:
        """One INSERT of `count` logs (a flow node's write carries its start's and its end's, and those the round
        held for it), on the cursor: SQLAlchemy's INSERT of many rows through `Connection.execute` cost several
        times the statement's own work."""
        found = self._insert_some_logs.get(count)
        if found is None:
            lt = table_of(L)
            values = [{name: bindparam(f"{name}_{n}", type_=lt.c[name].type) for name in LOG_COLUMNS}
                      for n in range(count)]
            found = self._insert_some_logs[count] = Prepared(
                self.db.insert(lt).values(values).on_conflict_do_nothing(index_elements=["key"])
                .returning(lt.c.id, lt.c.progress))
        return found

    def _add_totals(self, conn: Connection, row: SimpleNamespace, costs: dict[str, Any], announce: bool) -> None:
        """Write the row's new last ids, sequence and progress and add `costs` to its totals; in a batch,
        once for all its calls (see app.store.batch.Batch), with the cursors announced once."""
        shared = batch_of(conn)
        if shared is not None and row.id in shared.updates:  # an earlier call of the batch left its own
            earlier, announced = shared.costs[row.id]
            costs, announce = {name: value + earlier[name] for name, value in costs.items()}, announce or announced

        def update() -> None:
            values = dict(wid=row.id, status=str(row.status), stamp=row.last_activity, last_message=row.last_message_id,
                          last_log=row.last_log_id, seq=row.next_sequence_no, shown=row.progress, **costs)
            if self.db.on_ids is not None:  # before the commit: no reader can see it with the cache behind
                self.db.on_ids(row.id, row.last_message_id, row.last_log_id)
            if announce and not self.db.is_sqlite:  # SQLite serves one process: nothing to announce
                self._update_announcing.execute(conn, {
                    **values, **cursors_announcement(row.id, row.last_message_id, row.last_log_id)})
            else:
                self._update_totals.execute(conn, values)

        if shared is None:
            update()
        else:
            shared.costs[row.id] = costs, announce
            shared.updates[row.id] = update

    async def message_page(self, workflow_id: str, after: int,
                           limit: int) -> tuple[list[tuple[MessageRow, list[DocumentRow]]], int]:
        """Messages after `after`, and the workflow's last message id committed before they were read."""
        return await self.db.run_read(self._bounded_tx, "last_message_id", self.message_page_tx, workflow_id, after,
                                      limit)

    def _bounded_tx(self, conn: Connection, last: str, page: Any, workflow_id: str, after: int,
                    limit: int) -> tuple[Any, int]:
        # The row first: its last id was committed with the rows up to it, so the page read after it
        # holds them all. The in-process cursor cache is raised before a write commits and may be ahead
        # of what a read can see; a cursor moved past a row not yet visible would skip it for good.
        committed = conn.execute(select(getattr(table_of(W).c, last)).where(col(W.id) == workflow_id)).scalar()
        return page(conn, workflow_id, after, limit), int(committed or 0)

    def message_page_tx(self, conn: Connection, workflow_id: str, after: int,
                        limit: int) -> list[tuple[MessageRow, list[DocumentRow]]]:
        query = (select(M).where(col(M.workflow_id) == workflow_id, col(M.id) > after, col(M.deleted).is_(False))
                 .order_by(col(M.id)).limit(limit))
        return self._with_documents(conn, query)

    def messages_by_id_tx(self, conn: Connection, workflow_id: str,
                          ids: list[int]) -> list[tuple[MessageRow, list[DocumentRow]]]:
        if not ids:
            return []
        query = (select(M).where(col(M.workflow_id) == workflow_id, col(M.id).in_(ids), col(M.deleted).is_(False))
                 .order_by(col(M.id)))
        return self._with_documents(conn, query)

    def _with_documents(self, conn: Connection, query: Any) -> list[tuple[MessageRow, list[DocumentRow]]]:
        rows = [MessageRow.model_validate(r._mapping) for r in conn.execute(query)]
        docs = self._documents(conn, [stored_id(r) for r in rows])
        return [(r, docs.get(stored_id(r), [])) for r in rows]

    async def messages_of(self, workflow_id: str, before_round: int | None = None,
                          ) -> list[tuple[MessageRow, list[DocumentRow]]]:
        """The workflow's messages (those of rounds before `before_round`), with their documents."""
        return await self.db.run_read(self._messages_of_tx, workflow_id, before_round)

    def _messages_of_tx(self, conn: Connection, workflow_id: str,
                        before_round: int | None) -> list[tuple[MessageRow, list[DocumentRow]]]:
        query = select(M).where(col(M.workflow_id) == workflow_id, col(M.deleted).is_(False))
        if before_round is not None:
            query = query.where(col(M.round) < before_round)
        return self._with_documents(conn, query.order_by(col(M.id)))

    async def rounds_messages(self, workflow_id: str, rounds: Sequence[int]) -> list[tuple[MessageRow, list[DocumentRow]]]:
        """The messages of these rounds, with their documents."""
        if not rounds:
            return []
        query = (select(M).where(col(M.workflow_id) == workflow_id, col(M.deleted).is_(False),
                                 col(M.round).in_(sorted(set(rounds)))).order_by(col(M.id)))
        return await self.db.run_read(self._with_documents, query)

    async def with_documents(self, workflow_id: str, before_round: int) -> list[tuple[MessageRow, list[DocumentRow]]]:
        """The messages of rounds before `before_round` that have documents, with them (the uploads and the
        files agents made: as many as the workflow has files, however long its conversation)."""
        if before_round <= 1:
            return []
        having = select(col(D.message_id))
        query = (select(M).where(col(M.workflow_id) == workflow_id, col(M.deleted).is_(False),
                                 col(M.round) < before_round, col(M.id).in_(having)).order_by(col(M.id)))
        return await self.db.run_read(self._with_documents, query)

    async def texts(self, workflow_id: str, ids: Sequence[int]) -> dict[int, str]:
        """The contents of these messages (those not deleted), by id."""
        if not ids:
            return {}
        t = table_of(M)
        query = select(t.c.id, t.c.content).where(t.c.workflow_id == workflow_id, t.c.id.in_(list(ids)),
                                                  t.c.deleted.is_(False))
        async with self.db.reader.connect() as conn:
            return {i: c for i, c in await conn.execute(query)}

    async def message(self, workflow_id: str, message_id: int) -> MessageRow | None:
        """One message of the workflow, deleted or not."""
        async with self.db.reader.connect() as conn:
            query = select(M).where(col(M.workflow_id) == workflow_id, col(M.id) == message_id)
            row = (await conn.execute(query)).first()
        return MessageRow.model_validate(row._mapping) if row else None

    async def round_messages(self, workflow_id: str, round_no: int,
                             key_prefix: str) -> list[tuple[MessageRow, list[DocumentRow]]]:
        """The round's messages whose key starts with `key_prefix` (a step's), with their documents."""
        return await self.db.run_read(self._round_messages_tx, workflow_id, round_no, key_prefix)

    def _round_messages_tx(self, conn: Connection, workflow_id: str, round_no: int,
                           key_prefix: str) -> list[tuple[MessageRow, list[DocumentRow]]]:
        query = (select(M).where(col(M.workflow_id) == workflow_id, col(M.round) == round_no,
                                 col(M.key).startswith(key_prefix, autoescape=True)).order_by(col(M.id)))
        return self._with_documents(conn, query)

    async def completed_rounds(self, workflow_id: str, before_round: int, since: int = 1) -> set[int]:
        """The earlier rounds (from `since`) that completed (their logs say so even when the final message was deleted)."""
        query = (select(col(L.round)).where(col(L.workflow_id) == workflow_id, col(L.round) < before_round,
                                       col(L.round) >= since,
                                       col(L.status) == WorkflowStatus.COMPLETED).distinct())
        async with self.db.reader.connect() as conn:
            return {r for (r,) in await conn.execute(query)}

    def _documents(self, conn: Connection, message_ids: list[int]) -> dict[int, list[DocumentRow]]:
        if not message_ids:
            return {}
        out: dict[int, list[DocumentRow]] = {}
        query = select(D).where(col(D.message_id).in_(message_ids)).order_by(col(D.message_id), col(D.position))
        for r in conn.execute(query):
            doc = DocumentRow.model_validate(r._mapping)
            out.setdefault(doc.message_id, []).append(doc)
        return out

    async def log_page(self, workflow_id: str, after: int, limit: int) -> tuple[list[tuple[LogRow, int | None]], int]:
        """Log entries after `after`, each with the id of the message its transaction filled in (or None), and
        the workflow's last log id committed before they were read."""
        return await self.db.run_read(self._bounded_tx, "last_log_id", self.log_page_tx, workflow_id, after, limit)

    def log_page_tx(self, conn: Connection, workflow_id: str, after: int,
                    limit: int) -> list[tuple[LogRow, int | None]]:
        result = conn.execute(select(L).where(col(L.workflow_id) == workflow_id, col(L.id) > after)
                              .order_by(col(L.id)).limit(limit))
        logs = [LogRow.model_validate(r._mapping) for r in result]
        rounds = sorted({e.round for e in logs if fills_message(e.key)})
        users: dict[int, int] = {}
        hidden: set[int] = set()
        ids = table_of(M).c.id  # NOT NULL (the model's `id` is optional only before an insert)
        if rounds:  # each round's user message is its first one (written by the start)
            query = (select(col(M.round), func.min(ids))
                     .where(col(M.workflow_id) == workflow_id, col(M.round).in_(rounds), col(M.role) == "user")
                     .group_by(col(M.round)))
            users = dict(conn.execute(query).all())
            hidden = set(conn.execute(select(ids).where(ids.in_(list(users.values())), col(M.deleted).is_(True)))
                         .scalars())
            users = {r: mid for r, mid in users.items() if mid not in hidden}
        changed = {e.id: _updated(e.key) for e in logs if UPDATES in e.key}
        if changed:
            hidden |= set(conn.execute(select(ids).where(ids.in_([m for m in changed.values() if m]),
                                                         col(M.deleted).is_(True))).scalars())
        return [(e, users.get(e.round) if fills_message(e.key) else
                 (changed[e.id] if changed.get(e.id) not in (None, *hidden) else None)) for e in logs]

    async def logs_of(self, workflow_id: str) -> list[tuple[LogRow, int | None]]:
        return await self.db.run_read(self.log_page_tx, workflow_id, 0, 1_000_000)

    async def cursor_belongs(self, workflow_id: str, kind: str, item_id: int) -> bool:
        t = table_of(M if kind == "messages" else L)
        async with self.db.reader.connect() as conn:
            found = await conn.execute(select(t.c.id).where(t.c.id == item_id, t.c.workflow_id == workflow_id))
            return found.first() is not None

    async def delete_message(self, workflow_id: str, message_id: int) -> bool:
        """Hide a message; its id stays valid as a cursor."""
        return await self.db.run_write(self._delete_message_tx, workflow_id, message_id)

    def _delete_message_tx(self, conn: Connection, workflow_id: str, message_id: int) -> bool:
        changed = conn.execute(
            update(M).where(col(M.id) == message_id, col(M.workflow_id) == workflow_id, col(M.deleted).is_(False))
            .values(deleted=True)
        )
        if changed.rowcount:
            forget_round_tx(conn, workflow_id, message_id)
            conn.execute(update(W).where(col(W.id) == workflow_id).values(last_activity=now()))
        return bool(changed.rowcount)

    async def remove_document(self, workflow_id: str, message_id: int, file_id: int) -> bool:
        return await self.db.run_write(self._remove_document_tx, workflow_id, message_id, file_id)

    def _remove_document_tx(self, conn: Connection, workflow_id: str, message_id: int, file_id: int) -> bool:
        owned = (select(col(M.id))
                 .where(col(M.id) == message_id, col(M.workflow_id) == workflow_id, col(M.deleted).is_(False)))
        changed = conn.execute(
            delete(D).where(col(D.message_id) == message_id, col(D.file_id) == file_id, col(D.message_id).in_(owned))
        )
        if changed.rowcount:
            conn.execute(update(W).where(col(W.id) == workflow_id).values(last_activity=now()))
        return bool(changed.rowcount)
