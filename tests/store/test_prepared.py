"""Statements run straight on the cursor (app.store.statements) write and read what SQLAlchemy would, fail as
it would, and stay visible to its cursor events; on both backends."""

from __future__ import annotations

import asyncio
from datetime import timedelta

import pytest
import sqlalchemy as sa

from app.clock import now
from app.config import Settings
from app.store.database import Database
from app.store.records import NewLog, Owner
from app.store.repository import Repository
from app.store.statements import Prepared
from app.store.tables import LogRow, WorkflowRow

L, W = LogRow.__table__, WorkflowRow.__table__


@pytest.fixture
async def db(tmp_path, database_url):
    db = Database(Settings(data_dir=tmp_path, database_url=database_url).app_database_url)
    await db.migrate()
    await Repository(db).workflows.start_round(Owner(1, 1), "wf", "A workflow", True, "Hello", [], {},
                                               NewLog("", "Started"))
    yield db
    await db.dispose()


def _log(key: str, **values) -> dict:
    return dict(workflow_id="wf", key=key, round=1, message="Ünïcode ✓", type="info",
                timestamp=now() - timedelta(minutes=5), agent_name="analyst", status="running", progress=40) | values


async def test_a_row_written_on_the_cursor_reads_back_as_sqlalchemy_wrote_it(db):
    insert = Prepared(db.insert(L).on_conflict_do_nothing(index_elements=["key"]).returning(L.c.id, L.c.progress))
    row = Prepared(sa.select(W).where(W.c.id == sa.bindparam("wid")))
    values = _log("wf:1:a")

    def write(conn):
        return insert.execute(conn, values), insert.execute(conn, values)  # the second finds the key taken

    first, again = await db.run_write(write)
    assert len(first) == 1 and first[0][1] == 40 and again == []

    def read(conn):
        stored = conn.execute(sa.select(L).where(L.c.id == first[0][0])).one()._asdict()
        return stored, row.first(conn, {"wid": "wf"}), dict(conn.execute(sa.select(W)).one()._mapping)

    stored, prepared_row, sqlalchemy_row = await db.run_read(read)
    assert {name: stored[name] for name in values} == values  # the timestamp, to the microsecond, and the text
    assert prepared_row == sqlalchemy_row  # datetimes come back as datetimes, on SQLite too
    assert prepared_row["started_at"].tzinfo is not None
    assert await db.run_read(lambda conn: row.first(conn, {"wid": "none"})) is None


async def test_a_failing_statement_raises_what_sqlalchemy_raises_and_takes_only_its_call_back(db):
    plain = Prepared(sa.insert(L).returning(L.c.id))
    await db.run_write(lambda conn: plain.execute(conn, _log("wf:1:taken")))

    with pytest.raises(sa.exc.IntegrityError) as failed:
        await db.run_write(lambda conn: plain.execute(conn, _log("wf:1:taken")))
    assert "INSERT INTO logs" in str(failed.value)
    # A write issued with the failing one still commits (the batch runs each call alone again).
    results = await asyncio.gather(
        db.run_write(lambda conn: plain.execute(conn, _log("wf:1:taken"))),
        db.run_write(lambda conn: plain.execute(conn, _log("wf:1:other"))), return_exceptions=True)
    assert isinstance(results[0], sa.exc.IntegrityError) and results[1][0][0] > 0
    keys = await db.run_read(lambda conn: sorted(conn.execute(sa.select(L.c.key).where(L.c.key.like("wf:1:%")))
                                                 .scalars()))
    assert keys == ["wf:1:other", "wf:1:start", "wf:1:taken"]  # the start's log, and one of each


async def test_statement_counters_see_statements_run_on_the_cursor(db):
    seen: list[str] = []
    engine = db.sync_writer if db.is_sqlite else db.writer.sync_engine
    listener = lambda conn, cursor, statement, *rest: seen.append(statement)  # noqa: E731
    sa.event.listen(engine, "before_cursor_execute", listener)
    try:
        update = Prepared(sa.update(W).where(W.c.id == sa.bindparam("wid")).values(progress=sa.bindparam("p")))
        await db.run_write(lambda conn: update.execute(conn, {"wid": "wf", "p": 7}))
    finally:
        sa.event.remove(engine, "before_cursor_execute", listener)
    assert [s for s in seen if s.startswith("UPDATE workflows")], seen
    assert await db.run_read(lambda conn: conn.execute(sa.select(W.c.progress)).scalar()) == 7


def test_a_statement_that_needs_sqlalchemys_defaults_is_refused(tmp_path):
    table = sa.Table("counted", sa.MetaData(), sa.Column("id", sa.Integer, primary_key=True),
                     sa.Column("n", sa.Integer, default=1))
    engine = sa.create_engine(f"sqlite:///{tmp_path / 'x.db'}")
    table.create(engine)
    with engine.begin() as conn, pytest.raises(ValueError, match="takes every value from its parameters"):
        Prepared(table.insert()).execute(conn, {"id": 1})  # `n` would be left out, not defaulted
    with engine.begin() as conn:  # given, it is written
        Prepared(table.insert()).execute(conn, {"id": 1, "n": 5})
        assert conn.execute(sa.select(table.c.n)).scalar() == 5


async def test_rows_written_in_one_executemany_read_back_as_sqlalchemy_wrote_them_and_a_taken_key_is_skipped(db):
    many = Prepared(db.insert(L).on_conflict_do_nothing(index_elements=["key"]))
    first, second = _log("wf:1:m1", progress=10), _log("wf:1:m2", message="zwei ✓", progress=20)
    seen: list[tuple[str, bool]] = []
    engine = db.sync_writer if db.is_sqlite else db.writer.sync_engine
    def listener(conn, cursor, statement, params, context, executemany):
        seen.append((statement, executemany))

    sa.event.listen(engine, "before_cursor_execute", listener)
    try:
        await db.run_write(lambda conn: many.execute_many(conn, [first, second]))
        await db.run_write(lambda conn: many.execute_many(conn, [_log("wf:1:m1", message="again"), _log("wf:1:m3")]))
        await db.run_write(lambda conn: many.execute_many(conn, []))  # nothing to write: no statement
    finally:
        sa.event.remove(engine, "before_cursor_execute", listener)
    assert [executemany for statement, executemany in seen if "INSERT INTO logs" in statement] == [True, True]

    def read(conn):
        rows = conn.execute(sa.select(L).where(L.c.key.like("wf:1:m%")).order_by(L.c.key)).all()
        return [row._asdict() for row in rows]

    stored = await db.run_read(read)
    assert [row["key"] for row in stored] == ["wf:1:m1", "wf:1:m2", "wf:1:m3"]
    assert {name: stored[0][name] for name in first} == first  # the first write's, not the skipped one's
    assert {name: stored[1][name] for name in second} == second
