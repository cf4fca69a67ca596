"""What later rounds remember of ended rounds (`round_memory`): read the newest ones in pages, store
the ones computed, find older ones by the words of a request."""

from __future__ import annotations

from collections.abc import Sequence

from sqlalchemy import Integer, bindparam, case, cast, delete, desc, literal, select
from sqlalchemy.engine import Connection
from sqlmodel import col

from app.store.database import Database
from app.store.records import StoredMemory
from app.store.statements import Prepared
from app.store.tables import MessageRow, RoundMemoryRow, table_of

RM, M = RoundMemoryRow, MessageRow


class MemoryStore:
    """The rounds' memory rows of one database."""

    def __init__(self, db: Database) -> None:
        self.db = db
        # Every round that ends writes its row (in its last message's transaction): straight on the cursor
        # (app.store.statements); through `Connection.execute` the INSERT built and looked up per call cost
        # more than SQLite's own work.
        self._insert = Prepared(db.insert(table_of(RM)).on_conflict_do_nothing(index_elements=["workflow_id", "round"]))
        # Every round reads the rows of the rounds in its reach (up to some 45 of them late in a long
        # conversation): on the cursor, as plain records; validating each row as a model cost more than
        # reading it.
        t = table_of(RM)
        self._rounds = Prepared(select(t.c.round, t.c.turns, t.c.delivered, t.c.size, t.c.finished, t.c.terms)
                                .where(t.c.workflow_id == bindparam("workflow_id"), t.c.round >= bindparam("first"),
                                       t.c.round <= bindparam("last")))

    async def rounds(self, workflow_id: str, first: int, last: int) -> dict[int, StoredMemory]:
        """The stored memory of rounds `first` to `last` (both included), by round."""
        return await self.db.run_read(self._rounds_tx, workflow_id, first, last)

    def _rounds_tx(self, conn: Connection, workflow_id: str, first: int, last: int) -> dict[int, StoredMemory]:
        rows = self._rounds.execute(conn, {"workflow_id": workflow_id, "first": first, "last": last})
        return {row[0]: StoredMemory(*row) for row in rows}

    async def remember(self, rows: Sequence[RoundMemoryRow]) -> None:
        """Store rounds' memory; a round stored meanwhile (by another replica) keeps its row."""
        if rows:
            await self.db.run_write(self._remember_tx, [r.model_dump() for r in rows])

    def _remember_tx(self, conn: Connection, rows: list[dict[str, object]]) -> None:
        self._insert.execute_many(conn, rows)

    def remember_tx(self, conn: Connection, rows: Sequence[RoundMemoryRow]) -> None:
        """`remember`, inside the caller's write transaction (a round's last write carries its memory)."""
        if rows:
            self._remember_tx(conn, [r.model_dump() for r in rows])

    async def recall(self, workflow_id: str, before_round: int, terms: Sequence[str], limit: int) -> list[int]:
        """The earlier rounds (before `before_round`) whose request shares the most of `terms`, at
        least two of them (all of them when fewer are given), best first, the newest among equals."""
        if not terms:
            return []
        return await self.db.run_read(self._recall_tx, workflow_id, before_round, list(terms), limit)

    def _recall_tx(self, conn: Connection, workflow_id: str, before_round: int, terms: list[str],
                   limit: int) -> list[int]:
        shared = sum((case((col(RM.terms).contains(f" {t} ", autoescape=True), 1), else_=0) for t in terms),
                     cast(literal(0), Integer))
        query = (select(col(RM.round)).where(col(RM.workflow_id) == workflow_id, col(RM.round) < before_round,
                                             shared >= min(2, len(terms)))
                 .order_by(desc(shared), desc(col(RM.round))).limit(limit))
        return [r for (r,) in conn.execute(query)]


def forget_round_tx(conn: Connection, workflow_id: str, message_id: int) -> None:
    """The memory of the round a message belongs to goes (the message was deleted): computed again when next needed."""
    of_round = select(col(M.round)).where(col(M.id) == message_id, col(M.workflow_id) == workflow_id).scalar_subquery()
    conn.execute(delete(RM).where(col(RM.workflow_id) == workflow_id, col(RM.round) == of_round))
