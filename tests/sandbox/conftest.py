"""A warm code sandbox, a secret-holding "service" beside it and a listener, shared by a module's tests."""

from __future__ import annotations

import asyncio
import os
import sqlite3
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest
import pytest_asyncio

from app.sandbox.code import FIRST_UID, UID_COUNT, CodeSandbox

SECRET = "s3cr3t-7f1c9a-never-leaves"
SECRET_ENV = "FOREMAN_SANDBOX_TEST_SECRET"


@dataclass
class Listener:
    """A TCP server on 127.0.0.1 that counts the connections it accepted."""

    port: int
    connections: list[str] = field(default_factory=list)


@dataclass
class Service:
    """What the code must never reach: a data directory, a database file and an env var, all holding SECRET."""

    data_dir: Path
    database: Path
    outside: Path  # a writable directory of the test's, outside the sandbox


def sandbox_processes(uids: range = range(FIRST_UID, FIRST_UID + UID_COUNT)) -> list[int]:
    """The pids of processes running as one of `uids` (a code worker's user ids)."""
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                uid = int((entry / "status").read_text().split("\nUid:")[1].split()[0])
            except (OSError, IndexError, ValueError):
                continue
            if uid in uids:
                found.append(int(entry.name))
    return found


async def none_left(uids: range) -> bool:
    """Whether every process of `uids` is gone, waiting a while for finished workers to be reaped."""
    for _ in range(500):
        if not sandbox_processes(uids):
            return True
        await asyncio.sleep(0.01)
    return False


def require(pool: CodeSandbox) -> None:
    """As root (the service here and in CI) the sandbox must be there; elsewhere its tests skip."""
    if not pool.available and os.geteuid() != 0:
        pytest.skip(f"no code sandbox for a user who is not root: {pool.reason}")
    assert pool.available, pool.reason


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def sandbox() -> AsyncIterator[CodeSandbox]:
    pool = CodeSandbox(warm=2)
    await pool.start()
    require(pool)
    yield pool
    await pool.close()


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def listener() -> AsyncIterator[Listener]:
    seen = Listener(port=0)

    async def accepted(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        seen.connections.append(str(writer.get_extra_info("peername")))
        writer.close()

    server = await asyncio.start_server(accepted, "127.0.0.1", 0)
    seen.port = server.sockets[0].getsockname()[1]
    yield seen
    server.close()
    await server.wait_closed()


@pytest.fixture(scope="module")
def service(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Service]:
    root = tmp_path_factory.mktemp("service")
    data_dir = root / "data"
    data_dir.mkdir()
    (data_dir / "secret.txt").write_text(SECRET)
    database = data_dir / "foreman.db"
    with sqlite3.connect(database) as db:
        db.execute("CREATE TABLE secrets (value TEXT)")
        db.execute("INSERT INTO secrets VALUES (?)", (SECRET,))
    db.close()
    outside = root / "outside"
    outside.mkdir()
    os.environ[SECRET_ENV] = SECRET  # in the service's own environment, as a real secret would be
    yield Service(data_dir=data_dir, database=database, outside=outside)
    del os.environ[SECRET_ENV]
