"""The PostgreSQL pools are sized by settings, and a database that cannot take a request answers 503.

One replica opens at most DATABASE_POOL_SIZE + DATABASE_MAX_OVERFLOW + DBOS_POOL_SIZE + 2
connections (the README's formula, which operators size max_connections by); its connections
are named in pg_stat_activity after its EXECUTOR_ID, so they are counted there per replica.
"""

from __future__ import annotations

import asyncio
import itertools
from dataclasses import replace

import pytest
import sqlalchemy as sa

from app.config import from_env
from app.store.connections import unavailable
from app.store.database import Database
from app.store.statements import Prepared
from tests.harness import ConnectionPeaks, LiveServer, Replica, pg_fetch, plan_of, settings_for, wait_for
from tests.openai_stub import request_schema
from tests.relay import Relay

SMALL = {"DATABASE_POOL_SIZE": "2", "DATABASE_MAX_OVERFLOW": "1", "DBOS_POOL_SIZE": "2"}


def test_pool_settings_are_read_and_add_up_to_the_documented_most():
    defaults = from_env({})
    assert defaults.max_connections == 10 + 5 + 10 + 2
    small = from_env(SMALL)
    assert (small.database_pool_size, small.database_max_overflow, small.dbos_pool_size) == (2, 1, 2)
    assert small.max_connections == 7
    with pytest.raises(ValueError, match="DBOS_POOL_SIZE must be at least 1"):
        from_env({"DBOS_POOL_SIZE": "0"})


def test_a_replica_under_load_opens_no_more_connections_than_its_pool_settings(tmp_path, postgres_url, openai_stub):
    """Twelve rounds of two parallel tasks at once on a replica with pools of 2 + 1 and 2: every round
    completes, and pg_stat_activity never shows more of its connections than the settings allow."""
    numbers = itertools.count(1)
    openai_stub.default = lambda body: plan_of(2) if request_schema(body) else f"Answer {next(numbers)}."
    openai_stub.delay = 0.2
    replica = Replica(tmp_path, postgres_url, "small", OPENAI_BASE_URL=openai_stub.url_for("small"),
                      OPENAI_API_KEY="test", MAX_CONCURRENT_ROUNDS="12", **SMALL)
    try:
        with ConnectionPeaks(postgres_url) as peaks:
            replica.start().wait_ready()
            with replica.client() as client:
                started = [client.post("/api/workflows/start", json={"prompt": f"Look at case {n}."})
                           for n in range(12)]
                assert all(a.status_code == 200 for a in started), [a.text for a in started]
                ids = [a.json()["id"] for a in started]

                def statuses() -> list[str] | None:
                    found = [client.get(f"/api/workflows/{w}/status").json()["status"] for w in ids]
                    return None if "running" in found else found

                final = wait_for(statuses, 120, "every round to end")
    finally:
        replica.stop()
    assert final == ["completed"] * 12, replica.log()[-3000:]
    assert peaks.samples > 0
    # The service's pool (2 + 1) and its LISTEN connection; DBOS's pool (2) and the one it takes out to LISTEN.
    assert 1 <= peaks.peak["foreman small"] <= 2 + 1 + 1, peaks.peak
    assert 1 <= peaks.peak["foreman-dbos small"] <= 2 + 1, peaks.peak


def test_a_full_pool_is_reported_as_the_database_being_unavailable(postgres_url):
    async def run() -> BaseException:
        db = Database(postgres_url, pool_size=1, max_overflow=0, pool_timeout=0.1)
        try:
            async with db.writer.connect():  # the pool's only connection, held
                with pytest.raises(sa.exc.TimeoutError) as caught:
                    await db.run_read(lambda conn: conn.execute(sa.text("SELECT 1")).scalar())
            assert await db.run_read(lambda conn: conn.execute(sa.text("SELECT 1")).scalar()) == 1  # free again
            return caught.value
        finally:
            await db.dispose()

    assert unavailable(asyncio.run(run()))
    assert not unavailable(ValueError("not a database problem"))


def test_requests_answer_503_with_retry_after_while_postgresql_is_unreachable(tmp_path, postgres_url):
    """Through a relay that cuts every connection and refuses new ones (as a server that went away):
    a request answers 503 `database_unavailable` with Retry-After and a sentence, not a 500 with a
    trace; once the server is back the same request succeeds."""
    host_port = postgres_url.split("@", 1)[1].split("/", 1)[0]
    upstream = int(host_port.rsplit(":", 1)[1]) if ":" in host_port else 5432
    with Relay(upstream) as relay:
        url = postgres_url.replace(host_port, f"127.0.0.1:{relay.port}", 1)
        settings = replace(settings_for(tmp_path, url), database_pool_timeout_seconds=2.0)
        with LiveServer(settings) as server, server.client() as client:
            assert client.get("/api/workflows").status_code == 200
            relay.down()
            answer = client.get("/api/workflows")
            assert answer.status_code == 503, answer.text
            body = answer.json()
            assert body["code"] == "database_unavailable"
            assert answer.headers["Retry-After"] == "5"
            assert "Try again in 5 seconds" in body["detail"] and "Traceback" not in answer.text
            started = client.post("/api/workflows/start", json={"prompt": "Hello"})
            assert (started.status_code, started.json()["code"]) == (503, "database_unavailable"), started.text
            relay.up()
            wait_for(lambda: client.get("/api/workflows").status_code == 200, 30, "the service to reach PostgreSQL again")


def _backend_pid(conn: sa.Connection) -> int:
    return conn.exec_driver_sql("SELECT pg_backend_pid()").scalar()


_PID = Prepared(sa.select(sa.func.pg_backend_pid()))


def _backend_pid_on_cursor(conn: sa.Connection) -> int:  # as the appends of a round read and write (app.store.statements)
    return _PID.execute(conn, {})[0][0]


async def _end_session(postgres_url: str, pid: int) -> None:
    """End the server session `pid`, as a server restart or an administrator would, and wait until it is gone."""
    def end() -> None:
        assert pg_fetch(postgres_url, "SELECT pg_terminate_backend($1)", pid)[0][0]
        wait_for(lambda: not pg_fetch(postgres_url, "SELECT count(*) FROM pg_stat_activity WHERE pid = $1", pid)[0][0],
                 10, f"session {pid} to end")

    await asyncio.to_thread(end)  # pg_fetch runs a loop of its own


def test_a_session_the_server_ended_is_replaced_before_a_write_or_read_fails(postgres_url):
    """A pooled connection whose session the server ended (a restart, an administrator) costs no
    request an error: checked before use once idle, or, used again at once, replaced and retried."""
    async def run(ping_idle_seconds: float) -> list[int]:
        db = Database(postgres_url, pool_size=1, max_overflow=0, ping_idle_seconds=ping_idle_seconds)
        try:
            pids = [await db.run_write(_backend_pid)]
            await _end_session(postgres_url, pids[-1])
            pids.append(await db.run_write(_backend_pid))  # the write goes through, on a new session
            await _end_session(postgres_url, pids[-1])
            pids.append(await db.run_read(_backend_pid))
            await _end_session(postgres_url, pids[-1])
            async with db.reader.connect() as conn:  # no retry here: only the check before use can help
                pids.append(await conn.run_sync(_backend_pid))
            return pids
        finally:
            await db.dispose()

    checked = asyncio.run(run(ping_idle_seconds=0))  # every reused connection is checked
    assert len(set(checked)) == 4, checked

    async def unchecked() -> None:  # a connection in steady use is not checked: the write retries
        db = Database(postgres_url, pool_size=1, max_overflow=0, ping_idle_seconds=3600)
        try:
            first = await db.run_write(_backend_pid)
            await _end_session(postgres_url, first)
            assert await db.run_write(_backend_pid) != first
            third = await db.run_write(_backend_pid_on_cursor)
            await _end_session(postgres_url, third)
            assert await db.run_write(_backend_pid_on_cursor) != third
            second = await db.run_read(_backend_pid)
            await _end_session(postgres_url, second)
            assert await db.run_read(_backend_pid) != second
            await _end_session(postgres_url, await db.run_read(_backend_pid))
            async with db.reader.connect() as conn:
                with pytest.raises(sa.exc.DBAPIError) as lost:
                    await conn.run_sync(_backend_pid)
            assert unavailable(lost.value)  # a request in this state answers 503, and the next one succeeds
            assert await db.run_read(_backend_pid)
        finally:
            await db.dispose()

    asyncio.run(unchecked())


def test_a_connection_left_inside_a_transaction_is_replaced_before_its_writes_go_nowhere(postgres_url, caplog):
    """asyncpg marks a transaction open before it sends BEGIN; a request cancelled in that moment (a
    client that left an event stream) left the pooled connection inside a transaction SQLAlchemy did
    not know of. Every later write on it became a savepoint in that transaction: answered as committed,
    seen by no one else, its rows locked (an AG-UI run read its new workflow as deleted)."""
    async def run() -> tuple[int, int, int]:
        db = Database(postgres_url, pool_size=1, max_overflow=0, ping_idle_seconds=3600)
        try:
            await db.run_write(lambda conn: conn.exec_driver_sql("CREATE TABLE kept (x int)"))
            async with db.writer.connect() as conn:  # the one pooled connection, its transaction begun behind the pool's back
                raw = (await conn.get_raw_connection()).driver_connection
                await raw.transaction().start()
                left = await conn.run_sync(_backend_pid)
            await db.run_write(lambda conn: conn.exec_driver_sql("INSERT INTO kept VALUES (1)"))
            seen = (await asyncio.to_thread(pg_fetch, postgres_url, "SELECT count(*) AS n FROM kept"))[0]["n"]  # another session
            return left, await db.run_read(_backend_pid), seen
        finally:
            await db.dispose()

    with caplog.at_level("WARNING", logger="foreman.db"):
        left, now, seen = asyncio.run(run())
    assert seen == 1 and now != left
    assert "left inside a transaction" in caplog.text
