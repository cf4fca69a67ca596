"""A full disk: writes answer 507 storage_full with a sentence, no partial file stays behind (and
old ones are swept at start-up), and a round that cannot write ends failed once it can.

The uploads run on a real, small file system (a tmpfs mounted for the test: root only, else
skipped): on SQLite the data directory, on PostgreSQL also a tablespace holding the test's
database (the server must run on this machine), so PostgreSQL itself runs out of room. The
round's writes fail by the database's own error raised at the journal (SQLite's "database or
disk is full", PostgreSQL's disk_full), since either may still find room in a log or a page
on a full disk."""

from __future__ import annotations

import asyncio
import contextlib
import errno
import os
import shutil
import sqlite3
import subprocess
import tempfile
import threading
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import asyncpg
import pytest
from sqlalchemy import exc as sa_exc

from app.store.filestore import PARTIAL, LocalBlobs
from app.store.full import storage_full
from tests.harness import PG_URL, LiveServer, _admin, settings_for, wait_for, wait_status


@pytest.fixture
def small_disk(database_url: str) -> Iterator[Path]:
    """A 24 MB file system for the data directory; on PostgreSQL the test's database moves onto it."""
    # Not under tmp_path: the PostgreSQL server's user must reach the tablespace's directory.
    mount = Path(tempfile.mkdtemp(prefix="foreman-disk-"))
    mount.chmod(0o755)
    done = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=24m,mode=0755", "tmpfs", str(mount)],
                          capture_output=True)
    if done.returncode:
        mount.rmdir()
        pytest.skip(f"cannot mount a small file system here: {done.stderr.decode().strip()}")
    tablespace = None
    try:
        if database_url:
            tablespace = _move_onto(database_url, mount / "pg")
        yield mount
    finally:
        if tablespace:
            name = database_url.rsplit("/", 1)[1]
            asyncio.run(_admin(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))
            asyncio.run(_admin(f'DROP TABLESPACE IF EXISTS "{tablespace}"'))
        subprocess.run(["umount", "-l", str(mount)], check=False)
        with contextlib.suppress(OSError):
            mount.rmdir()


def _move_onto(database_url: str, directory: Path) -> str:
    """Put the (empty) test database in a tablespace in `directory`; the tablespace's name."""
    try:
        directory.mkdir()
        shutil.chown(directory, "postgres", "postgres")
    except (LookupError, OSError) as exc:
        pytest.skip(f"the PostgreSQL server cannot be given a directory here: {exc}")
    name, tablespace = database_url.rsplit("/", 1)[1], "foreman_small_" + uuid.uuid4().hex[:8]
    try:
        asyncio.run(_admin(f"CREATE TABLESPACE \"{tablespace}\" LOCATION '{directory}'"))
    except asyncpg.PostgresError as exc:  # a server on another machine, or without the rights
        pytest.skip(f"PostgreSQL cannot put a tablespace on the small disk ({PG_URL}): {exc}")
    asyncio.run(_admin(f'ALTER DATABASE "{name}" SET TABLESPACE "{tablespace}"'))
    return tablespace


def fill(directory: Path) -> Path:
    """Write a file until the file system is full; returns it (delete it to free the space)."""
    filler = directory / "filler"
    with open(filler, "wb") as out, contextlib.suppress(OSError):
        while True:
            out.write(b"\0" * 65536)
            out.flush()
    return filler


def test_an_upload_on_a_full_disk_is_507_with_a_sentence_and_leaves_no_partial_file(small_disk, database_url):
    # PostgreSQL keeps the bytes in the database (FILE_STORE's default there), on the small disk too.
    with LiveServer(settings_for(small_disk, database_url)) as server, server.client() as client:
        filler = fill(small_disk)
        response = client.post("/api/files", files=[("files", ("report.bin", os.urandom(600_000)))])
        assert response.status_code == 507, response.text
        body = response.json()
        assert body["code"] == "storage_full" and body["status_code"] == 507
        assert body["detail"].startswith("The server's storage is full, so this request was not carried out")
        assert response.headers["retry-after"] == "60"
        assert not list((small_disk / "data" / "files").glob(f"*/{PARTIAL}*"))
        started = client.post("/api/workflows/start", json={"prompt": "x" * 90_000})
        assert started.status_code in (200, 507), started.text  # SQLite may still have room in its log
        if started.status_code == 507:
            assert started.json()["code"] == "storage_full"

        filler.unlink()  # space again: the same upload works
        again = client.post("/api/files", files=[("files", ("report.bin", os.urandom(600_000)))])
        assert again.status_code == 201, again.text


def test_partial_files_of_an_interrupted_write_are_swept_at_start_up(tmp_path):
    root = tmp_path / "files"
    (root / "ab").mkdir(parents=True)
    old, fresh = root / "ab" / f"{PARTIAL}old", root / "ab" / f"{PARTIAL}fresh"
    old.write_bytes(b"half")
    fresh.write_bytes(b"being written by another replica")
    os.utime(old, (time.time() - 3600, time.time() - 3600))
    LocalBlobs(root)
    assert not old.exists() and fresh.exists()


def test_storage_full_is_recognised_from_each_source():
    assert storage_full(OSError(errno.ENOSPC, "No space left on device"))
    assert storage_full(sqlite3.OperationalError("database or disk is full"))
    wrapped = RuntimeError("write failed")
    wrapped.__cause__ = OSError(errno.EDQUOT, "Disk quota exceeded")
    assert storage_full(wrapped)
    assert not storage_full(OSError(errno.EACCES, "Permission denied"))
    assert not storage_full(sqlite3.OperationalError("database is locked"))
    assert storage_full(disk_full("postgresql+asyncpg://db")) and storage_full(disk_full(""))


def disk_full(database_url: str) -> Exception:
    """What the database driver raises, as SQLAlchemy hands it on, when the disk is full."""
    if not database_url:
        return sqlite3.OperationalError("database or disk is full")
    cause = asyncpg.exceptions.DiskFullError('could not extend file "base/16384/16390": No space left on device')
    return sa_exc.OperationalError("INSERT INTO logs ...", {}, cause)


def test_a_round_that_cannot_write_ends_failed_with_a_log_once_it_can(tmp_path, database_url):
    # One attempt: a second one would go on where the first stopped once the disk has room again.
    settings = settings_for(tmp_path, database_url, round_max_attempts=1)
    with LiveServer(settings) as server, server.client() as client:
        journal = server.app.state.runtime.journal
        real_append = journal.append
        full = threading.Event()
        full.set()
        failures: list[str] = []

        async def append(*args, **kwargs):
            if full.is_set():
                failures.append(args[0] if args else "")
                raise disk_full(database_url)
            return await real_append(*args, **kwargs)

        journal.append = append
        response = client.post("/api/workflows/start", json={"prompt": "Summarise the quarter."})
        assert response.status_code == 200, response.text
        wid = response.json()["id"]
        wait_for(lambda: len(failures) >= 2, 60, "the round's writes and its failure's first write to fail")
        assert client.get(f"/api/workflows/{wid}/status").json()["status"] == "running"
        full.clear()  # space again
        assert wait_status(client, wid, "completed", "failed", timeout=120)["status"] == "failed"
        logs = client.get(f"/api/workflows/{wid}/logs").json()["items"]
        assert logs[-1]["message"] == ("The round failed: the server's storage is full, so the round could not "
                                       "write its work.")
        assert logs[-1]["type"] == "error" and logs[-1]["progress"] == 100
