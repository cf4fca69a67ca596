"""Concurrent writes: a failing one takes only itself back, the others commit, on both backends; SQLite's
checkpoints stay out of the commits."""

from __future__ import annotations

import asyncio
import os
from pathlib import Path

import pytest

from app.clock import now
from app.config import Settings
from app.db import Database
from app.repository import Repository
from app.tables import FileRow
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


def _sqlite(tmp_path, checkpoint_seconds: float) -> tuple[Database, Path]:
    path = tmp_path / "app.db"
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
