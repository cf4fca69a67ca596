"""The application database: an async engine with the pragmas SQLite needs, and the schema."""

from __future__ import annotations

import asyncio
import contextlib
from typing import Any, AsyncIterator

from sqlalchemy import event
from sqlalchemy.ext.asyncio import AsyncConnection, create_async_engine
from sqlmodel import SQLModel

from app import tables  # noqa: F401  (registers the tables on SQLModel.metadata)


def _sqlite_pragmas(dbapi_conn: Any, _record: Any) -> None:
    # WAL lets pollers read while a round writes; NORMAL sync is durable across process crashes
    # (only an OS crash can lose the last commits); foreign keys make deletes cascade.
    cursor = dbapi_conn.cursor()
    cursor.execute("PRAGMA journal_mode=WAL")
    cursor.execute("PRAGMA synchronous=NORMAL")
    cursor.execute("PRAGMA busy_timeout=30000")
    cursor.execute("PRAGMA foreign_keys=ON")
    cursor.close()


def _sqlite_begin(conn: Any) -> None:
    # Every write transaction takes the write lock up front: read-then-write never deadlocks,
    # and ids are committed in the order they were assigned (the cursor contract relies on it).
    conn.exec_driver_sql("BEGIN IMMEDIATE")


class Database:
    """The engines of one database: a writer and a reader (the same engine on PostgreSQL)."""

    def __init__(self, url: str) -> None:
        self.url = url
        self.is_sqlite = url.startswith("sqlite")
        if self.is_sqlite:
            self.writer = create_async_engine(url, connect_args={"isolation_level": None})
            event.listen(self.writer.sync_engine, "connect", _sqlite_pragmas)
            event.listen(self.writer.sync_engine, "begin", _sqlite_begin)
            self.reader = create_async_engine(url, connect_args={"isolation_level": None})
            event.listen(self.reader.sync_engine, "connect", _sqlite_pragmas)
            event.listen(self.reader.sync_engine, "begin", lambda conn: conn.exec_driver_sql("BEGIN"))
        else:
            self.writer = create_async_engine(url, pool_size=20, max_overflow=20, pool_pre_ping=True)
            self.reader = self.writer
        self._write_lock = asyncio.Lock() if self.is_sqlite else None

    @contextlib.asynccontextmanager
    async def write(self) -> AsyncIterator[AsyncConnection]:
        """A write transaction. On SQLite, writers of this process queue here rather than in
        SQLite's busy handler, which sleeps in growing steps while the lock is taken."""
        if self._write_lock is None:
            async with self.writer.begin() as conn:
                yield conn
            return
        async with self._write_lock:
            async with self.writer.begin() as conn:
                yield conn

    async def create_schema(self) -> None:
        """Create missing tables (idempotent)."""
        async with self.writer.begin() as conn:
            await conn.run_sync(SQLModel.metadata.create_all)

    async def dispose(self) -> None:
        await self.writer.dispose()
        if self.reader is not self.writer:
            await self.reader.dispose()
