"""A live server per test module, with two API keys and a model that can hold a round."""

from __future__ import annotations

import asyncio
import json
import threading
from pathlib import Path
from typing import Any, Iterator

import httpx
import pytest

from app.config import ApiKey
from app.model import ModelRequest, ModelResponse
from tests.harness import PG_URL, LiveServer, ScriptedModel, plan_of, settings_for, unique_db_name

HOLD = "[hold]"
KEYS = (ApiKey("k1", 1, 1), ApiKey("k2", 1, 2))
ERROR_FIELDS = {"status_code", "detail", "code"}


class HoldingModel(ScriptedModel):
    """The scripted model, except that a request whose prompt says HOLD waits until `release()`.

    The wait polls a threading.Event from the server's own loop, so stopping the round
    (task cancellation) ends it at once.
    """

    def __init__(self, plan: dict[str, Any]) -> None:
        super().__init__(plan)
        self._released = threading.Event()
        self._lock = threading.Lock()
        self.holding = 0

    async def complete(self, request: ModelRequest) -> ModelResponse:
        if HOLD in json.dumps(request.messages):
            with self._lock:
                self.holding += 1
            try:
                while not self._released.is_set():
                    await asyncio.sleep(0.01)
            finally:
                with self._lock:
                    self.holding -= 1
        return await super().complete(request)

    def release(self) -> None:
        self._released.set()


def check_error(response: httpx.Response, status: int, code: str | None = None) -> dict[str, Any]:
    """The response is the contract's JSON error for `status`; returns its body."""
    assert response.status_code == status, response.text
    assert response.headers["content-type"].startswith("application/json")
    body = response.json()
    assert ERROR_FIELDS <= body.keys(), body
    assert body["status_code"] == status
    assert isinstance(body["detail"], str) and body["detail"].strip()
    assert isinstance(body["code"], str) and body["code"]
    assert "Traceback" not in response.text and 'File "' not in response.text
    if code is not None:
        assert body["code"] == code, body
    return body


async def _admin(statement: str) -> None:
    import asyncpg

    conn = await asyncpg.connect(PG_URL.replace("postgresql+asyncpg://", "postgresql://"))
    try:
        await conn.execute(statement)
    finally:
        await conn.close()


@pytest.fixture(scope="module", params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
def module_database_url(request: pytest.FixtureRequest) -> Iterator[str]:
    """'' for SQLite, or a fresh PostgreSQL database for the module when FOREMAN_TEST_PG_URL is set."""
    if request.param == "sqlite":
        yield ""
        return
    if not PG_URL:
        pytest.skip("FOREMAN_TEST_PG_URL is not set: the PostgreSQL run of this test is skipped")
    name = unique_db_name()
    asyncio.run(_admin(f'CREATE DATABASE "{name}"'))
    try:
        yield f"{PG_URL.rsplit('/', 1)[0]}/{name}"
    finally:
        asyncio.run(_admin(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))


@pytest.fixture(scope="module")
def model() -> Iterator[HoldingModel]:
    held = HoldingModel(plan_of(2))
    yield held
    held.release()


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory, module_database_url: str,
           model: HoldingModel) -> Iterator[LiveServer]:
    """One live server for the module, with keys k1 (user 1) and k2 (user 2) of mandate 1."""
    tmp = tmp_path_factory.mktemp("api")
    with LiveServer(settings_for(Path(tmp), module_database_url, api_keys=KEYS), model) as live:
        yield live


@pytest.fixture
def c1(server: LiveServer) -> Iterator[httpx.Client]:
    with server.client("k1") as client:
        yield client


@pytest.fixture
def c2(server: LiveServer) -> Iterator[httpx.Client]:
    with server.client("k2") as client:
        yield client
