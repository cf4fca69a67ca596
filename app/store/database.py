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

from sqlalchemy import create_engine, event
from sqlalchemy import exc as sa_exc
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.ext.asyncio import create_async_engine
from sqlalchemy.pool import StaticPool
from sqlalchemy.util import greenlet_spawn

from app.store import schema
from app.store.batch import run_all
from app.store.connections import JSON, check_at_checkout, sqlite_begin, sqlite_pragmas, sqlite_writer_pragmas

T = TypeVar("T")
# A queued write: the work, its arguments, and the future its caller awaits.
Write = tuple[Callable[..., Any], tuple[Any, ...], "asyncio.Future[Any]"]
log = logging.getLogger("foreman.db")

READ_THREADS = 4  # plain sqlite3 connections for reads that must be prompt (see `run_read`)
# Write transactions a PostgreSQL replica has open at once (see `run_write`): two, so that a batch
# waiting on a row another replica holds does not hold up every other write of this one.
PG_WRITE_BATCHES = 2
CHECKPOINT_SECONDS = 5.0  # while writes go on, the WAL is copied into the database file at most this often
PING_IDLE_SECONDS = 1.0  # a pooled PostgreSQL connection unused for longer is checked before use (`connections.check_at_checkout`)


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
        connection unused for `ping_idle_seconds` is checked before it is used (see `connections.check_at_checkout`)."""
        self.url = url
        self.is_sqlite = url.startswith("sqlite")
        # The dialect's INSERT, which knows ON CONFLICT DO NOTHING.
        self.insert = sqlite.insert if self.is_sqlite else postgresql.insert
        if self.is_sqlite:
            self.writer = create_async_engine(url, connect_args={"isolation_level": None}, **JSON)
            event.listen(self.writer.sync_engine, "connect", sqlite_pragmas)
            event.listen(self.writer.sync_engine, "begin", sqlite_begin("BEGIN IMMEDIATE"))
            self.sync_writer = create_engine(url.replace("+aiosqlite", "", 1), poolclass=StaticPool,
                                             connect_args={"isolation_level": None, "check_same_thread": False},
                                             **JSON)
            event.listen(self.sync_writer, "connect", sqlite_writer_pragmas)
            event.listen(self.sync_writer, "begin", sqlite_begin("BEGIN IMMEDIATE"))
            self._writer_conn: Any = None  # the writer thread's connection, kept open (see `_writing`)
            self.checkpointer = create_engine(url.replace("+aiosqlite", "", 1), poolclass=StaticPool,
                                              connect_args={"isolation_level": None, "check_same_thread": False})
            event.listen(self.checkpointer, "connect", sqlite_pragmas)
            self._checkpoints = ThreadPoolExecutor(max_workers=1, thread_name_prefix="foreman-checkpoint")
            self._checkpoint_seconds = checkpoint_seconds
            self._next_checkpoint = time.monotonic() + checkpoint_seconds
            self.reader = create_async_engine(url, connect_args={"isolation_level": None}, pool_size=20,
                                              max_overflow=20, **JSON)
            event.listen(self.reader.sync_engine, "connect", sqlite_pragmas)
            event.listen(self.reader.sync_engine, "begin", sqlite_begin("BEGIN"))
            self.sync_reader = create_engine(url.replace("+aiosqlite", "", 1), pool_size=READ_THREADS,
                                             max_overflow=0, connect_args={"isolation_level": None,
                                                                           "check_same_thread": False}, **JSON)
            event.listen(self.sync_reader, "connect", sqlite_pragmas)
            event.listen(self.sync_reader, "begin", sqlite_begin("BEGIN"))
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
            check_at_checkout(self.writer.sync_engine, ping_idle_seconds)
            self.reader = self.writer
        # Whether writes made one after another land in that order even when the first has not
        # returned yet: on SQLite one batch commits at a time, in the order the calls were made; on
        # PostgreSQL two batches may take a workflow's row in either order.
        self.in_order = self.is_sqlite
        self._pending: list[Write] = []
        # Its own thread: in the loop's shared pool a batch would queue behind DBOS's checkpoints.
        self._thread = ThreadPoolExecutor(max_workers=1, thread_name_prefix="foreman-writer")
        self._flushers: set[asyncio.Task[None]] = set()
        # Told a workflow's new last message and log ids inside the write, before its commit (the
        # cursor cache's `raise_to`; from the writer thread on SQLite).
        self.on_ids: Callable[[str, int, int], None] | None = None

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
                results = run_all(conn, batch)
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
            return await self._on_postgres(True, run_all, (batch,))
        except Exception as exc:
            if len(batch) == 1:
                return [(False, exc)]
        results = []
        for work, args, _ in batch:
            try:
                results.append((await self._on_postgres(True, run_all, ([(work, args, None)],)))[0])
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
                return run_all(conn, [(work, args, None)])[0]
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
