"""The replicas table: each replica's heartbeat, and the compare-and-set that hands a silent one's
rounds to exactly one live replica. Every time is the database's own clock, so replicas whose
clocks disagree still agree on who is silent."""

from __future__ import annotations

from datetime import timedelta

from sqlalchemy import ColumnElement, and_, delete, func, or_, select, update
from sqlalchemy.dialects import postgresql

from app.store.database import Database
from app.store.tables import ReplicaRow, table_of

R = table_of(ReplicaRow)
ALIVE, GONE, TAKEN = "alive", "gone", "taken"
KEEP_TAKEN = timedelta(days=1)  # rows of replicas taken over are kept this long, for operators to read


class ReplicaStore:
    """Queries over the replicas table (PostgreSQL: replicas only share a PostgreSQL database)."""

    def __init__(self, db: Database) -> None:
        self.db = db

    async def register(self, executor_id: str) -> None:
        """This replica is alive (again): a fresh row, or its old one reset."""
        insert = postgresql.insert(R).values(executor_id=executor_id, state=ALIVE, last_beat=func.now(),
                                             started_at=func.now())
        async with self.db.writer.begin() as conn:
            await conn.execute(insert.on_conflict_do_update(
                index_elements=[R.c.executor_id],
                set_={"state": ALIVE, "last_beat": func.now(), "started_at": func.now(), "taken_by": None,
                      "taken_at": None}))

    async def beat(self, executor_id: str) -> bool:
        """Record a heartbeat; False when the row is no longer alive (another replica took this one over)."""
        async with self.db.writer.begin() as conn:
            done = await conn.execute(update(R).where(R.c.executor_id == executor_id, R.c.state == ALIVE)
                                      .values(last_beat=func.now()))
        return done.rowcount == 1

    async def leave(self, executor_id: str) -> None:
        """Hand this replica's rounds over now: any live replica may take them without waiting for the timeout."""
        async with self.db.writer.begin() as conn:
            await conn.execute(update(R).where(R.c.executor_id == executor_id, R.c.state == ALIVE)
                               .values(state=GONE))

    def _silent(self, timeout: float) -> ColumnElement[bool]:
        return or_(R.c.state == GONE,
                   and_(R.c.state == ALIVE, R.c.last_beat < func.now() - timedelta(seconds=timeout)))

    async def silent(self, timeout: float, me: str) -> list[str]:
        """Replicas that left or have not beaten for `timeout` seconds, and are not taken over yet."""
        async with self.db.reader.connect() as conn:
            rows = await conn.execute(select(R.c.executor_id).where(self._silent(timeout), R.c.executor_id != me)
                                      .order_by(R.c.last_beat))
        return [row[0] for row in rows]

    async def claim(self, executor_id: str, me: str, timeout: float) -> list[str] | None:
        """Take a silent replica over: compare-and-set on its row, so of all the replicas that try,
        exactly one wins. The winner gets the executors whose rounds it must recover: the silent
        one's, and those of replicas the silent one had claimed (it may have died before
        recovering them; recovering twice is harmless). None for the losers."""
        async with self.db.writer.begin() as conn:
            won = await conn.execute(update(R).where(R.c.executor_id == executor_id, self._silent(timeout))
                                     .values(state=TAKEN, taken_by=me, taken_at=func.now()))
            if won.rowcount != 1:
                return None
            inherited = await conn.execute(select(R.c.executor_id).where(R.c.taken_by == executor_id,
                                                                         R.c.state == TAKEN))
            await conn.execute(delete(R).where(R.c.state == TAKEN, R.c.taken_at < func.now() - KEEP_TAKEN))
        return [executor_id, *(row[0] for row in inherited)]

    async def ages(self, me: str) -> dict[str, float]:
        """Seconds since each other live replica's last heartbeat."""
        async with self.db.reader.connect() as conn:
            rows = await conn.execute(select(R.c.executor_id, func.extract("epoch", func.now() - R.c.last_beat))
                                      .where(R.c.state == ALIVE, R.c.executor_id != me))
        return {executor: float(age) for executor, age in rows}
