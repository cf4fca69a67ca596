"""Concurrent writes: a failing one takes only itself back, the others commit, on both backends."""

from __future__ import annotations

import asyncio

import pytest

from app.clock import now
from app.config import Settings
from app.db import Database
from app.repository import Repository
from app.tables import FileRow


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
