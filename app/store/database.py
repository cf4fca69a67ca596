"""The application database: an async engine with the pragmas SQLite needs, and its migration."""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any, TypeVar

import msgspec
from sqlalchemy import create_engine, event
from sqlalchemy import exc as sa_exc
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.ext.asyncio import create_async_engine
from sqlalchemy.pool import StaticPool
from sqlalchemy.util import greenlet_spawn

from app.store import schema
from app.store.full import causes, storage_full

T = TypeVar("T")
# A queued write: the work, its arguments, and the future its caller awaits.
Write = tuple[Callable[..., Any], tuple[Any, ...], "asyncio.Future[Any]"]
log = logging.getLogger("foreman.db")

READ_THREADS = 4  # plain sqlite3 connections for reads that must be prompt (see `run_read`)
# Write transactions a PostgreSQL replica has open at once (see `run_write`): two, so that a batch
# waiting on a row another replica holds does not hold up every other write of this one.
PG_WRITE_BATCHES = 2
CHECKPOINT_SECONDS = 5.0  # while writes go on, the WAL is copied into the database file at most this often
PING_IDLE_SECONDS = 1.0  # a pooled PostgreSQL connection unused for longer is checked before use (`_ping_when_idle`)

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


def _ping_when_idle(engine: Any, idle_seconds: float) -> None:
    """Check a pooled connection before use if it went unused for more than `idle_seconds`.

    SQLAlchemy's `pool_pre_ping` checks every checkout: on asyncpg a transaction, a statement and a
    rollback, three round trips, 6% of a PostgreSQL round's CPU. A connection in steady use was
    fine a moment ago; one that sat idle (the server may have restarted meanwhile) is checked, and
    a dead one is replaced with every other connection of the pool before the caller gets it.
    What the check cannot see, a restart within that moment, `Database._on_postgres` retries.
    """
    def returned(_dbapi_connection: Any, record: Any) -> None:
        record.info["returned"] = time.monotonic()

    def check(dbapi_connection: Any, record: Any, _proxy: Any) -> None:
        since = record.info.get("returned")  # None: a connection opened for this checkout
        if since is None or time.monotonic() - since <= idle_seconds:
            return
        try:
            engine.dialect.do_ping(dbapi_connection)
        except engine.dialect.loaded_dbapi.Error as exc:
            raise sa_exc.InvalidatePoolError("the connection was lost while idle") from exc

    event.listen(engine, "checkin", returned)
    event.listen(engine, "checkout", check)


def _sqlite_pragmas(dbapi_conn: Any, _record: Any) -> None:
    # WAL lets pollers read while a round writes; NORMAL sync is durable across process crashes
    # (only an OS crash can lose the last commits); foreign keys make deletes cascade.
    cursor = dbapi_conn.cursor()
    cursor.execute("PRAGMA journal_mode=WAL")
    cursor.execute("PRAGMA synchronous=NORMAL")
    cursor.execute("PRAGMA busy_timeout=30000")
    cursor.execute("PRAGMA foreign_keys=ON")
    cursor.close()


def _sqlite_writer_pragmas(dbapi_conn: Any, record: Any) -> None:
    _sqlite_pragmas(dbapi_conn, record)
    # SQLite checkpoints inside the commit that takes the WAL past 1000 pages: two fsyncs, 40-110 ms
    # on this machine's disk, which every item of that commit waited for before any stream or
    # poller could see it. The writer never checkpoints; `_checkpoint` does, on a thread of its own.
    dbapi_conn.execute("PRAGMA wal_autocheckpoint=0")


def _sqlite_begin(statement: str) -> Callable[[Any], None]:
    """A begin listener of a SQLite engine that sends `statement` straight to the driver's connection
    (sqlite3's, or aiosqlite's adapter): through `exec_driver_sql` a BEGIN cost as much as a small insert.

    Writers begin with BEGIN IMMEDIATE: every write transaction takes the write lock up front, so
    read-then-write never deadlocks and ids are committed in the order they were assigned (the
    cursor contract relies on it).
    """
    def begin(conn: Any) -> None:
        conn.connection.dbapi_connection.execute(statement)
    return begin


class Batch:
    """What the calls of one write transaction share (see `run_write`): the workflow rows they locked,
    as the calls left them, and each row's update, written once when the calls are done.

    Five tasks of a round ending together are one batch: their appends read the workflow row
    once and write its totals once instead of five times each.
    """

    def __init__(self) -> None:
        self.rows: dict[str, Any] = {}
        self.updates: dict[str, Callable[[], None]] = {}
        self.costs: dict[str, tuple[dict[str, Any], bool]] = {}  # each row's costs to add, and whether to announce
        self.fenced: set[Any] = set()  # claims checked (and their rows locked) in this transaction
        self.claim_owners: dict[Any, Any] = {}  # claims' owners read (and locked) with a row, still to check

    def settle(self, workflow_id: str) -> None:
        """Write the row's update now and forget the row: a statement that changes it otherwise follows."""
        update = self.updates.pop(workflow_id, None)
        if update is not None:
            update()
        self.forget(workflow_id)

    def forget(self, workflow_id: str) -> None:
        """The row is deleted: nothing of it is written."""
        self.updates.pop(workflow_id, None)
        self.costs.pop(workflow_id, None)
        self.rows.pop(workflow_id, None)


def batch_of(conn: Any) -> Batch | None:
    """The batch of the write transaction `conn` is in (None outside `run_write`)."""
    batch: Batch | None = conn.info.get("batch")
    return batch


def _run_all(conn: Any, batch: list[tuple[Callable[..., Any], tuple[Any, ...], Any]]) -> list[tuple[bool, Any]]:
    shared = conn.info["batch"] = Batch()
    try:
        results = [(True, work(conn, *args)) for work, args, _ in batch]
        for update in shared.updates.values():
            update()
        return results
    finally:
        if not conn.invalidated:  # a lost connection is discarded with its info (nor can it be read)
            conn.info.pop("batch", None)


@dataclass
class _Session:
    committing: bool = False  # the work is done and the COMMIT sent: it must not run again


class Database:
    """The engines of one database: a writer and a reader (the same engine on PostgreSQL)."""

    def __init__(self, url: str, idle_transaction_seconds: float = 0, *, pool_size: int = 10, max_overflow: int = 5,
                 pool_timeout: float = 30.0, application_name: str = "foreman",
                 checkpoint_seconds: float = CHECKPOINT_SECONDS, ping_idle_seconds: float = PING_IDLE_SECONDS) -> None:
        """`pool_size`, `max_overflow` and `pool_timeout` size the PostgreSQL pool (DATABASE_POOL_SIZE,
        DATABASE_MAX_OVERFLOW, DATABASE_POOL_TIMEOUT_SECONDS); `application_name` names its
        connections in pg_stat_activity. SQLite's pools are this process's own files, unchanged;
        `checkpoint_seconds` spaces its WAL checkpoints (see `_schedule_checkpoint`); a PostgreSQL
        connection unused for `ping_idle_seconds` is checked before it is used (see `_ping_when_idle`)."""
        self.url = url
        self.is_sqlite = url.startswith("sqlite")
        # The dialect's INSERT, which knows ON CONFLICT DO NOTHING.
        self.insert = sqlite.insert if self.is_sqlite else postgresql.insert
        if self.is_sqlite:
            self.writer = create_async_engine(url, connect_args={"isolation_level": None}, **JSON)
            event.listen(self.writer.sync_engine, "connect", _sqlite_pragmas)
            event.listen(self.writer.sync_engine, "begin", _sqlite_begin("BEGIN IMMEDIATE"))
            self.sync_writer = create_engine(url.replace("+aiosqlite", "", 1), poolclass=StaticPool,
                                             connect_args={"isolation_level": None, "check_same_thread": False},
                                             **JSON)
            event.listen(self.sync_writer, "connect", _sqlite_writer_pragmas)
            event.listen(self.sync_writer, "begin", _sqlite_begin("BEGIN IMMEDIATE"))
            self._writer_conn: Any = None  # the writer thread's connection, kept open (see `_writing`)
            self.checkpointer = create_engine(url.replace("+aiosqlite", "", 1), poolclass=StaticPool,
                                              connect_args={"isolation_level": None, "check_same_thread": False})
            event.listen(self.checkpointer, "connect", _sqlite_pragmas)
            self._checkpoints = ThreadPoolExecutor(max_workers=1, thread_name_prefix="foreman-checkpoint")
            self._checkpoint_seconds = checkpoint_seconds
            self._next_checkpoint = time.monotonic() + checkpoint_seconds
            self.reader = create_async_engine(url, connect_args={"isolation_level": None}, pool_size=20,
                                              max_overflow=20, **JSON)
            event.listen(self.reader.sync_engine, "connect", _sqlite_pragmas)
            event.listen(self.reader.sync_engine, "begin", _sqlite_begin("BEGIN"))
            self.sync_reader = create_engine(url.replace("+aiosqlite", "", 1), pool_size=READ_THREADS,
                                             max_overflow=0, connect_args={"isolation_level": None,
                                                                           "check_same_thread": False}, **JSON)
            event.listen(self.sync_reader, "connect", _sqlite_pragmas)
            event.listen(self.sync_reader, "begin", _sqlite_begin("BEGIN"))
            self._reads = ThreadPoolExecutor(max_workers=READ_THREADS, thread_name_prefix="foreman-reader")
        else:
            # A replica paused inside a transaction (SIGSTOP, a frozen VM) must not hold the row locks
            # its taker needs: PostgreSQL ends such a session after the heartbeat timeout.
            settings = {"application_name": application_name[:63]}  # PostgreSQL keeps 63 bytes of it
            if idle_transaction_seconds:
                settings["idle_in_transaction_session_timeout"] = str(int(idle_transaction_seconds * 1000))
            self.writer = create_async_engine(url, pool_size=pool_size, max_overflow=max_overflow,
                                              pool_timeout=pool_timeout,
                                              connect_args={"server_settings": settings}, **JSON)
            _ping_when_idle(self.writer.sync_engine, ping_idle_seconds)
            self.reader = self.writer
        # Whether writes made one after another land in that order even when the first has not
        # returned yet: on SQLite one batch commits at a time, in the order the calls were made; on
        # PostgreSQL two batches may take a workflow's row in either order.
        self.in_order = self.is_sqlite
        self._pending: list[Write] = []
        # Its own thread: in the loop's shared pool a batch would queue behind DBOS's checkpoints.
        self._thread = ThreadPoolExecutor(max_workers=1, thread_name_prefix="foreman-writer")
        self._flushers: set[asyncio.Task[None]] = set()

    async def run_write(self, work: Callable[..., T], *args: Any) -> T:
        """Run `work(connection, *args)` in a write transaction and return its result.

        The writes of this process are group-committed: whatever queued while the previous batch
        ran goes to one transaction and one commit. On SQLite that is one worker-thread hop on a
        plain sqlite3 connection (aiosqlite would hop threads for every statement, and writers
        competing for SQLite's lock sleep in its busy handler; a batch does neither), and calls
        commit in the order they were made. On PostgreSQL a batch is one pooled connection's
        transaction on the async driver, up to PG_WRITE_BATCHES at once: a pool checkout, BEGIN
        and COMMIT per call cost more CPU than the call's own statements. A call that fails
        takes only itself back (see `_write_batch`).
        """
        future: asyncio.Future[T] = asyncio.get_running_loop().create_future()
        self._pending.append((work, args, future))
        if len(self._flushers) < (1 if self.is_sqlite else PG_WRITE_BATCHES):
            self._flushers.add(asyncio.create_task(self._flush()))
        return await future

    async def ping(self, timeout: float) -> None:
        """One trivial read on a pooled connection; raises when the database does not answer within `timeout`."""
        async with asyncio.timeout(timeout):
            await self.run_read(lambda conn: conn.exec_driver_sql("SELECT 1").scalar())

    async def run_read(self, work: Callable[..., T], *args: Any) -> T:
        """Run `work(connection, *args)` in one read transaction (one snapshot) and return its result.

        On SQLite the whole read is one hop to a reader thread on a plain sqlite3 connection:
        through aiosqlite every statement, fetch and the connection's BEGIN and ROLLBACK is a hop
        of its own, and under load each hop waits for the event loop and the GIL again (an event
        stream's read of four queries took 20 ms at the median that way). On PostgreSQL the
        async driver runs it on the loop.
        """
        if not self.is_sqlite:
            return await self._on_postgres(False, work, args)
        return await asyncio.get_running_loop().run_in_executor(self._reads, self._read, work, args)

    def _read(self, work: Callable[..., T], args: tuple[Any, ...]) -> T:
        with self.sync_reader.connect() as conn, conn.begin():
            return work(conn, *args)

    async def _flush(self) -> None:
        try:
            while self._pending:
                batch, self._pending = self._pending, []
                try:
                    if self.is_sqlite:
                        results = await asyncio.get_running_loop().run_in_executor(self._thread, self._write_batch,
                                                                                   batch)
                    else:
                        results = await self._write_batch_async(batch)
                except BaseException as exc:  # the commit itself failed: nothing of the batch was written
                    results = [(False, exc)] * len(batch)
                for (_, _, future), (ok, value) in zip(batch, results):
                    if not future.done():
                        future.set_result(value) if ok else future.set_exception(value)
        finally:
            # In the step that found nothing pending: a write queued after it starts a flusher of its own.
            self._flushers.discard(asyncio.current_task())

    def _write_batch(self, batch: list[Write]) -> list[tuple[bool, Any]]:
        # Optimistic: the whole batch in one transaction. Should any call fail, the batch is
        # rolled back and each call runs again in its own transaction, so a failing call takes
        # only itself back. Failures are rare; a savepoint around every call cost more than
        # the call's own statements.
        try:
            with self._writing() as conn:
                results = _run_all(conn, batch)
        except Exception as exc:
            if len(batch) == 1:
                results = [(False, exc)]
            else:
                results = [self._write_one(work, args) for work, args, _ in batch]
        self._schedule_checkpoint()
        return results

    async def _write_batch_async(self, batch: list[Write],
                                 ) -> list[tuple[bool, Any]]:
        # As `_write_batch`, on PostgreSQL's async driver.
        try:
            return await self._on_postgres(True, _run_all, (batch,))
        except Exception as exc:
            if len(batch) == 1:
                return [(False, exc)]
        results = []
        for work, args, _ in batch:
            try:
                results.append((await self._on_postgres(True, _run_all, ([(work, args, None)],)))[0])
            except Exception as exc:
                results.append((False, exc))
        return results

    async def _on_postgres(self, write: bool, work: Callable[..., T], args: tuple[Any, ...]) -> T:
        """`work(connection, *args)` on a pooled connection, in a transaction committed at the end if `write`.

        A connection found lost before anything was committed (the server restarted, or ended the
        session, within `ping_idle_seconds` of its last use, so no check caught it) is replaced,
        and the work run again, once.
        """
        for again in (True, False):
            session = _Session()
            try:
                # The checkout, BEGIN, the work, COMMIT and the checkin in one greenlet, as
                # `AsyncConnection.run_sync` runs the work alone: through the async connection's
                # own methods each was a greenlet of its own, 40% of a one-statement transaction.
                return await greenlet_spawn(self._session, session, write, work, args)
            except sa_exc.DBAPIError as exc:
                if not (again and exc.connection_invalidated and not session.committing):
                    raise
        raise AssertionError("unreachable")  # pragma: no cover

    def _session(self, session: _Session, write: bool, work: Callable[..., T], args: tuple[Any, ...]) -> T:
        with self.writer.sync_engine.connect() as conn:
            if not write:
                return work(conn, *args)
            with conn.begin():
                result = work(conn, *args)
                session.committing = True
            return result

    def _schedule_checkpoint(self) -> None:
        # After a commit, at most one checkpoint per interval and one at a time. Each completed
        # checkpoint lets the next commit restart the WAL, which costs it one small fsync of the
        # WAL's header: an interval of seconds keeps those rare.
        clock = time.monotonic()
        if clock >= self._next_checkpoint:
            self._next_checkpoint = clock + self._checkpoint_seconds
            try:
                self._checkpoints.submit(self._checkpoint)
            except RuntimeError:  # shutting down: closing the last connection checkpoints anyway
                pass

    def _checkpoint(self) -> None:
        # PASSIVE: copies what no reader still needs and waits for no one; the rest goes next time.
        # sqlite3 lets go of the GIL while it writes and syncs, so the event loop runs on meanwhile.
        try:
            with self.checkpointer.connect() as conn:
                conn.exec_driver_sql("PRAGMA wal_checkpoint(PASSIVE)")
        except Exception:  # the next commit's checkpoint tries again; the WAL only grows meanwhile
            log.warning("A WAL checkpoint failed.", exc_info=True)

    def _write_one(self, work: Callable[..., Any], args: tuple[Any, ...]) -> tuple[bool, Any]:
        try:
            with self._writing() as conn:
                return _run_all(conn, [(work, args, None)])[0]
        except Exception as exc:
            return False, exc

    @contextmanager
    def _writing(self) -> Iterator[Any]:
        """A write transaction on the writer thread's connection (SQLite). The connection stays open
        between batches: checking it out of the pool and back in for every batch cost more than the
        BEGIN and COMMIT themselves. One the driver lost SQLAlchemy reconnects on its next use."""
        if self._writer_conn is None:
            self._writer_conn = self.sync_writer.connect()
        with self._writer_conn.begin():
            yield self._writer_conn

    def _close_writer(self) -> None:
        conn, self._writer_conn = self._writer_conn, None
        if conn is not None:
            conn.close()

    async def migrate(self) -> str:
        """Bring the schema to the newest migration (in a thread: Alembic blocks); return its revision."""
        return await asyncio.to_thread(schema.upgrade, self.url)

    async def dispose(self) -> None:
        await self.writer.dispose()
        if self.is_sqlite:
            # On the writer thread, after the batch it may be running.
            await asyncio.get_running_loop().run_in_executor(self._thread, self._close_writer)
            self.sync_writer.dispose()
            self._reads.shutdown(wait=False)
            self.sync_reader.dispose()
            # Its own thread closes the checkpoint's connection, after a checkpoint under way: the loop
            # does not wait for it (nor can it use the loop's executor: at exit that is already shut down).
            self._checkpoints.submit(self.checkpointer.dispose)
            self._checkpoints.shutdown(wait=False)
        self._thread.shutdown(wait=False)
        if self.reader is not self.writer:
            await self.reader.dispose()
