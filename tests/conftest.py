"""Fixtures shared by every test package."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Iterator

import pytest

from tests.harness import PG_URL, unique_db_name

pytest_plugins = ["tests.openai_stub"]

BACKENDS = ["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)]


async def _admin(statement: str) -> None:
    import asyncpg

    dsn = PG_URL.replace("postgresql+asyncpg://", "postgresql://")
    conn = await asyncpg.connect(dsn)
    try:
        await conn.execute(statement)
    finally:
        await conn.close()


@pytest.fixture(params=BACKENDS)
def database_url(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[str]:
    """'' (SQLite in the test's data dir) or a fresh PostgreSQL database when FOREMAN_TEST_PG_URL is set."""
    if request.param == "sqlite":
        yield ""
        return
    if not PG_URL:
        pytest.skip("FOREMAN_TEST_PG_URL is not set: the PostgreSQL run of this test is skipped")
    name = unique_db_name()
    asyncio.run(_admin(f'CREATE DATABASE "{name}"'))
    base = PG_URL.rsplit("/", 1)[0]
    try:
        yield f"{base}/{name}"
    finally:
        asyncio.run(_admin(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))


@pytest.fixture(autouse=True)
def _loopback_only(no_remote_network: None) -> None:
    """Every test fails loudly if anything dials a host other than loopback (no real provider)."""
