"""How the application database's connections are set up and judged: SQLite's pragmas and BEGIN,
the check of an idle PostgreSQL connection, the JSON columns' codec, and whether an error says the
database cannot serve now."""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from typing import Any

import msgspec
from sqlalchemy import event
from sqlalchemy import exc as sa_exc

from app.store.full import causes, storage_full

log = logging.getLogger("foreman.db")

# msgspec encodes and decodes the JSON columns (extracted contents can be megabytes) several
# times faster than the standard library, so a large document holds the GIL for less time.
JSON = {"json_serializer": lambda value: msgspec.json.encode(value).decode(), "json_deserializer": msgspec.json.decode}


# PostgreSQL's SQLSTATEs of a server that cannot serve a session now: a connection failure (08),
# too many clients or out of resources (53), shutting down or starting up (57P01-57P03).
_UNAVAILABLE_STATES = ("08", "53", "57P01", "57P02", "57P03")


def unavailable(exc: BaseException) -> bool:
    """True when `exc` (or what caused it) says the database refused or lost the connection, or no
    pooled connection came free in time: the request may succeed later, unchanged."""
    if storage_full(exc):
        return False  # 53100 is in class 53, but a full disk is answered as such (507)
    for error in causes(exc):
        if isinstance(error, (sa_exc.TimeoutError, ConnectionError)):  # pool exhausted; refused or reset
            return True
        if isinstance(error, sa_exc.DBAPIError) and error.connection_invalidated:
            return True
        state = getattr(error, "sqlstate", None) or getattr(error, "pgcode", None)
        if isinstance(state, str) and state.startswith(_UNAVAILABLE_STATES):
            return True
    return False


def check_at_checkout(engine: Any, idle_seconds: float) -> None:
    """Check a pooled PostgreSQL connection before use: one left inside a transaction is replaced,
    and one unused for more than `idle_seconds` is pinged.

    A transaction the pool does not know of: asyncpg marks a connection's transaction open before it
    sends BEGIN and keeps the mark when BEGIN is interrupted (a read cancelled because its client left
    an event stream was seen so). One such connection came back to the pool under load (by which path
    is not known): every later transaction on it was a savepoint inside that one, "committed" by
    releasing the savepoint, so the server's writes went nowhere, its rows stayed locked, and an AG-UI
    run read its own new workflow as deleted. The check reads the driver's own state, no round trip.

    SQLAlchemy's `pool_pre_ping` checks every checkout: on asyncpg a transaction, a statement and a
    rollback, three round trips, 6% of a PostgreSQL round's CPU. A connection in steady use was
    fine a moment ago; one that sat idle (the server may have restarted meanwhile) is checked, and
    a dead one is replaced with every other connection of the pool before the caller gets it.
    What the check cannot see, a restart within that moment, `Database._on_postgres` retries.
    """
    def returned(_dbapi_connection: Any, record: Any) -> None:
        record.info["returned"] = time.monotonic()

    def check(dbapi_connection: Any, record: Any, _proxy: Any) -> None:
        if left_in_transaction(dbapi_connection.driver_connection):
            log.warning("A pooled database connection was left inside a transaction; it is replaced.")
            raise sa_exc.DisconnectionError("the connection was left inside a transaction")
        since = record.info.get("returned")  # None: a connection opened for this checkout
        if since is None or time.monotonic() - since <= idle_seconds:
            return
        try:
            engine.dialect.do_ping(dbapi_connection)
        except engine.dialect.loaded_dbapi.Error as exc:
            raise sa_exc.InvalidatePoolError("the connection was lost while idle") from exc

    event.listen(engine, "checkin", returned)
    event.listen(engine, "checkout", check)


def left_in_transaction(connection: Any) -> bool:
    """Whether an asyncpg connection back in the pool is inside a transaction: the server says so, or
    the driver still holds a transaction it began (its next one would be a savepoint in it)."""
    return connection.is_in_transaction() or getattr(connection, "_top_xact", None) is not None


def sqlite_pragmas(dbapi_conn: Any, _record: Any) -> None:
    # WAL lets pollers read while a round writes; NORMAL sync is durable across process crashes
    # (only an OS crash can lose the last commits); foreign keys make deletes cascade.
    cursor = dbapi_conn.cursor()
    cursor.execute("PRAGMA journal_mode=WAL")
    cursor.execute("PRAGMA synchronous=NORMAL")
    cursor.execute("PRAGMA busy_timeout=30000")
    cursor.execute("PRAGMA foreign_keys=ON")
    cursor.close()


def sqlite_writer_pragmas(dbapi_conn: Any, record: Any) -> None:
    sqlite_pragmas(dbapi_conn, record)
    # SQLite checkpoints inside the commit that takes the WAL past 1000 pages: two fsyncs, 40-110 ms
    # on this machine's disk, which every item of that commit waited for before any stream or
    # poller could see it. The writer never checkpoints; `Database._checkpoint` does, on a thread of its own.
    dbapi_conn.execute("PRAGMA wal_autocheckpoint=0")


def sqlite_begin(statement: str) -> Callable[[Any], None]:
    """A begin listener of a SQLite engine that sends `statement` straight to the driver's connection
    (sqlite3's, or aiosqlite's adapter): through `exec_driver_sql` a BEGIN cost as much as a small insert.

    Writers begin with BEGIN IMMEDIATE: every write transaction takes the write lock up front, so
    read-then-write never deadlocks and ids are committed in the order they were assigned (the
    cursor contract relies on it).
    """
    def begin(conn: Any) -> None:
        conn.connection.dbapi_connection.execute(statement)
    return begin
