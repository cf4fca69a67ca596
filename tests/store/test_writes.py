"""Concurrent writes: a failing one takes only itself back, the others commit, on both backends; SQLite's
checkpoints stay out of the commits."""

from __future__ import annotations

import asyncio
import os
import threading
from pathlib import Path

import pytest
import sqlalchemy as sa

from app.clock import now
from app.config import Settings
from app.fsm import Event
from app.store.cursors import Cursor, CursorCache
from app.store.database import Database
from app.store.records import NewLog, NewMessage, Owner
from app.store.repository import Repository
from app.store.tables import FileRow
from tests.harness import wait_for


def _file(name: str) -> FileRow:
    return FileRow(mandate_id=1, user_id=1, name=name, ext="txt", mime="text/plain", size=1, sha256=name,
                   created_at=now())


@pytest.fixture
async def repo(tmp_path, database_url):
    db = Database(Settings(data_dir=tmp_path, database_url=database_url).app_database_url)
    await db.migrate()
    yield Repository(db)
    await db.dispose()


async def test_a_failing_write_loses_none_of_the_writes_made_with_it(repo):
    def insert_then_fail(conn, name):
        repo.files.add_files_tx(conn, [_file(name)])
        raise ValueError(f"{name} refused")

    # Issued together, so on SQLite they share one group commit.
    results = await asyncio.gather(
        repo.files.add_files([_file("first")]),
        repo.db.run_write(insert_then_fail, "broken"),
        repo.files.add_files([_file("second")]),
        repo.db.run_write(insert_then_fail, "also-broken"),
        repo.files.add_files([_file("third")]),
        return_exceptions=True,
    )

    assert [str(r) for r in results if isinstance(r, Exception)] == ["broken refused", "also-broken refused"]
    ids = [r[0].id for r in results if isinstance(r, list)]
    stored = await repo.files.files_by_id(ids + [ids[-1] + 1, ids[-1] + 2])
    assert sorted(f.name for f in stored.values()) == ["first", "second", "third"]
    assert not await repo.files.sha_in_use("broken") and not await repo.files.sha_in_use("also-broken")


async def test_sqlite_writes_commit_in_the_order_they_were_made(repo):
    if not repo.db.is_sqlite:
        pytest.skip("PostgreSQL commits independent transactions in any order; appends lock their workflow")
    results = await asyncio.gather(*(repo.files.add_files([_file(f"f{i}")]) for i in range(20)))
    ids = [rows[0].id for rows in results]
    assert ids == sorted(ids)


async def test_a_write_that_loses_its_connection_fails_alone_and_the_next_write_gets_a_new_one(repo):
    # SQLite's writer keeps its connection open between batches; one the driver lost is not reused.
    def lose_connection(conn):
        conn.connection.dbapi_connection.close()  # as a driver that lost its file or server would be
        return repo.files.add_files_tx(conn, [_file("lost")])

    with pytest.raises(sa.exc.DBAPIError) as lost:
        await repo.db.run_write(lose_connection)
    assert lost.value.connection_invalidated
    written = await repo.files.add_files([_file("after")])
    stored = await repo.files.files_by_id([written[0].id])
    assert [f.name for f in stored.values()] == ["after"] and not await repo.files.sha_in_use("lost")


def _sqlite(tmp_path, checkpoint_seconds: float) -> tuple[Database, Path]:
    path = tmp_path / "app.store.database"
    return Database(f"sqlite+aiosqlite:///{path}", checkpoint_seconds=checkpoint_seconds), path


async def _write_megabytes(db: Database, megabytes: int) -> None:
    def write(conn):
        conn.exec_driver_sql("CREATE TABLE IF NOT EXISTS big (b BLOB)")
        conn.exec_driver_sql("INSERT INTO big VALUES (?)", (os.urandom(megabytes << 20),))
    await db.run_write(write)


async def test_a_sqlite_commit_never_copies_the_wal_into_the_database_itself(tmp_path):
    # SQLite's own checkpoint would run inside the commit that takes the WAL past 1000 pages
    # (4 MB), and every item of that commit would wait for its fsyncs.
    db, path = _sqlite(tmp_path, checkpoint_seconds=3600)
    try:
        await _write_megabytes(db, 8)
        assert path.stat().st_size < 1 << 20, "the commit copied its pages into the database file"
        assert Path(f"{path}-wal").stat().st_size > 8 << 20
        assert await db.run_read(lambda conn: conn.exec_driver_sql("SELECT length(b) FROM big").scalar()) == 8 << 20
    finally:
        await db.dispose()


async def test_sqlite_writes_are_checkpointed_on_a_thread_of_their_own(tmp_path):
    db, path = _sqlite(tmp_path, checkpoint_seconds=0)
    try:
        await _write_megabytes(db, 8)
        wait_for(lambda: path.stat().st_size > 8 << 20, what="the WAL's pages to reach the database file")
    finally:
        await db.dispose()


async def test_appends_written_together_add_up_as_if_written_one_by_one(repo):
    # Issued together they share a batch (app.store.batch.Batch): the workflow row is read and updated
    # once for all of them, so each must see what the ones before it left.
    owner = Owner(1, 1)
    start = lambda n: NewLog(f"w:{n}:start", "Started", agent_name="system", progress=0)  # noqa: E731
    await repo.workflows.start_round(owner, "w", "w", True, "first", [], {}, start(1))

    def step(round_no: int, n: int, progress: int, tokens: int) -> NewMessage:
        return NewMessage(f"w:{round_no}:step:{n}", "assistant", "step", f"Step {n} of round {round_no}.",
                          tokens_used=tokens, bytes_sent=10 * tokens)

    def append(round_no: int, n: int, progress: int, tokens: int, event: Event | None = None):
        return repo.workflows.append("w", round_no, [step(round_no, n, progress, tokens)],
                                     [NewLog(f"w:{round_no}:log:{n}", f"Step {n}", progress=progress)], event=event)

    written = await asyncio.gather(
        append(1, 1, 40, 5), append(1, 2, 30, 7), append(1, 1, 90, 100),  # the third replays the first's keys
        append(1, 3, 60, 11, Event.FINISH),
        repo.workflows.start_round(owner, "w", "w", False, "second", [], {}, start(2)),
        append(1, 4, 95, 13),  # round 1 is over: nothing written
        append(2, 1, 20, 17),
    )

    assert [bool(w and w.message_ids) for w in (*written[:4], *written[5:])] == [True, True, False, True, False, True]
    row = await repo.workflows.workflow(owner, "w")
    messages = [m for m, _ in await repo.messages.messages_of("w")]
    assert row.current_round == 2 and row.status == "running"
    assert row.tokens_used == 5 + 7 + 11 + 17 and row.bytes_sent == 10 * (5 + 7 + 11 + 17)
    assert row.last_message_id == messages[-1].id and row.next_sequence_no == len(messages) + 1
    assert [m.sequence_no for m in messages] == list(range(1, len(messages) + 1))
    assert [m.content for m in messages] == ["first", "Step 1 of round 1.", "Step 2 of round 1.",
                                             "Step 3 of round 1.", "second", "Step 1 of round 2."]
    logs = [entry for entry, _ in await repo.messages.logs_of("w")]
    assert row.last_log_id == logs[-1].id and row.progress == 20  # the new round's progress starts again


async def test_a_stop_written_with_appends_answers_the_workflow_as_it_left_it(repo):
    # In one batch with the round's appends, the stop reads the row back after the batch's update of it.
    owner = Owner(1, 1)
    await repo.workflows.start_round(owner, "s", "s", True, "first", [], {},
                                     NewLog("s:1:start", "Started", agent_name="system", progress=0))

    def append(n: int):
        return repo.workflows.append("s", 1, [NewMessage(f"s:1:step:{n}", "assistant", "step", f"Step {n}.",
                                                         tokens_used=3)],
                                     [NewLog(f"s:1:log:{n}", f"Step {n}", progress=40)])

    stop_log = lambda round_no: NewLog(f"s:{round_no}:stopped", "Workflow stopped by user",  # noqa: E731
                                       agent_name="system", progress=100, status="stopped")
    first, stopped, late, other = await asyncio.gather(
        append(1), repo.workflows.stop(owner, "s", stop_log), append(2), repo.workflows.stop(Owner(1, 2), "s", stop_log))

    assert first is not None and late is None and other is None  # nothing after the stop; not another's
    answer = stopped.workflow
    logs = [entry for entry, _ in await repo.messages.logs_of("s")]
    messages = [m for m, _ in await repo.messages.messages_of("s")]
    assert answer.status == "stopped" and answer.progress == 100 and answer.tokens_used == 3
    assert answer.last_log_id == logs[-1].id == stopped.written.last_log_id and logs[-1].message.endswith("by user")
    assert answer.last_message_id == messages[-1].id and messages[-1].content == "Step 1."
    again = await repo.workflows.stop(owner, "s", stop_log)
    assert again.written is None and again.workflow.last_log_id == answer.last_log_id


async def test_the_cursor_cache_holds_a_writes_ids_before_its_commit_can_be_read(repo):
    """A reader woken by an earlier write could read this one's commit (the round's status, say) while the
    cache still held the ids before it, and answer "nothing new" for a message it had committed: the
    protocols' flow questions came back empty that way. The write itself now raises the cache, before it
    commits (`Database.on_ids`), not its caller after the commit returned."""
    owner = Owner(1, 1)
    await repo.workflows.start_round(owner, "c", "c", True, "first", [], {},
                                     NewLog("c:1:start", "Started", agent_name="system", progress=0))
    row = await repo.workflows.workflow(owner, "c")
    cursors = CursorCache()
    cursors.put("c", Cursor(1, 1, row.last_message_id, row.last_log_id))
    at_commit: list[tuple[int, int]] = []

    def noted(workflow_id: str, last_message_id: int, last_log_id: int) -> None:
        cursors.raise_to(workflow_id, last_message_id, last_log_id)
        entry = cursors.get(workflow_id)
        at_commit.append((entry.last_message_id, entry.last_log_id))

    repo.db.on_ids = noted
    written = await repo.workflows.append("c", 1, [NewMessage("c:1:a", "assistant", "step", "A.")],
                                          [NewLog("c:1:l", "Step A")])
    assert at_commit == [(written.last_message_id, written.last_log_id)]
    assert written.last_message_id > row.last_message_id and written.last_log_id > row.last_log_id
    cursors.raise_to("c", row.last_message_id, row.last_log_id)  # an older write's ids never move it back
    assert (cursors.get("c").last_message_id, cursors.get("c").last_log_id) == at_commit[0]


async def test_a_page_read_while_a_write_is_in_flight_ends_at_what_was_committed(repo):
    """The cache is raised before a write commits (above), so it may be ahead of what a read can see: a
    page's `lastId` taken from it moved a poller past a log that committed a moment later, and the poller
    never saw it (test_takeover on PostgreSQL, under load). A page is bounded by the row's last ids read in
    its own transaction, committed with every row up to them."""
    owner = Owner(1, 1)
    await repo.workflows.start_round(owner, "p", "p", True, "first", [], {},
                                     NewLog("p:1:start", "Started", agent_name="system", progress=0))
    row = await repo.workflows.workflow(owner, "p")
    in_flight: list[tuple[int, int, int]] = []

    async def read() -> tuple[int, int, int]:
        other = Repository(Database(repo.db.url))  # another process's connections, as a poller's replica
        try:
            logs, last_log = await other.messages.log_page("p", 0, 100)
            _, last_message = await other.messages.message_page("p", 0, 100)
            return last_log, max(e.id for e, _ in logs), last_message
        finally:
            await other.db.dispose()

    def read_before_commit(workflow_id: str, last_message_id: int, last_log_id: int) -> None:
        # Inside the write's transaction (on PostgreSQL on the event loop itself): read from another thread.
        reader = threading.Thread(target=lambda: in_flight.append(asyncio.run(read())))
        reader.start()
        reader.join(60)

    repo.db.on_ids = read_before_commit
    written = await repo.workflows.append("p", 1, [NewMessage("p:1:a", "assistant", "step", "A.")],
                                          [NewLog("p:1:l", "Step A")])
    repo.db.on_ids = None
    assert in_flight == [(row.last_log_id, row.last_log_id, row.last_message_id)]
    logs, last_log = await repo.messages.log_page("p", 0, 100)
    assert last_log == written.last_log_id == logs[-1][0].id


@pytest.mark.parametrize("count", [3, 20])  # one statement on the cursor; more than SOME_LOGS: SQLAlchemy's
async def test_logs_appended_together_read_back_as_written_once_each_and_their_progress_never_goes_back(repo, count):
    await repo.workflows.start_round(Owner(1, 1), "g", "Logs", True, "go", [], {},
                                     NewLog("g:1:start", "Started", agent_name="system", progress=0))
    before = now()
    first = [NewLog(f"g:1:{n}", f"Schritt {n} ✓", agent_name="flow", progress=10 + n) for n in range(count)]
    written = await repo.workflows.append("g", 1, logs=first)
    # A replay writes the same logs again with one more and a lower progress: only the new one is written.
    again = await repo.workflows.append("g", 1, logs=[*first[:2], NewLog("g:1:late", "Late", type="warning",
                                                                          agent_name="flow", progress=5)])
    assert written is not None and len(written.log_ids) == count and written.log_ids == sorted(written.log_ids)
    assert again is not None and len(again.log_ids) == 1
    logs = [entry for entry, _ in await repo.messages.logs_of("g")]
    assert [entry.key for entry in logs] == ["g:1:start", *(log.key for log in first), "g:1:late"]
    assert [entry.message for entry in logs[1:-1]] == [log.message for log in first]
    assert [entry.progress for entry in logs[1:]] == [10 + n for n in range(count)] + [10 + count - 1]
    assert logs[-1].type == "warning" and all(entry.agent_name == "flow" for entry in logs[1:])
    assert all(entry.timestamp >= before and entry.timestamp.tzinfo is not None for entry in logs[1:])
    assert {entry.timestamp for entry in logs[1:-1]} == {logs[1].timestamp}  # one write, one stamp
