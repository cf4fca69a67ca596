"""Fixtures shared by every test package."""

from __future__ import annotations

from typing import Iterator

import pytest

from tests.harness import BACKENDS, backend_url

pytest_plugins = ["tests.openai_stub"]


@pytest.fixture(params=BACKENDS)
def database_url(request: pytest.FixtureRequest) -> Iterator[str]:
    """'' (SQLite in the test's data dir) or a fresh PostgreSQL database when FOREMAN_TEST_PG_URL is set."""
    yield from backend_url(request.param)


@pytest.fixture
def postgres_url(database_url: str) -> str:
    """The PostgreSQL run only: tests of several processes on one database."""
    if not database_url:
        pytest.skip("scale-out needs PostgreSQL")
    return database_url


@pytest.fixture(autouse=True)
def _loopback_only(no_remote_network: None) -> None:
    """Every test fails loudly if anything dials a host other than loopback (no real provider)."""
