"""A live server per test module, with two API keys and a model that can hold a round."""

from __future__ import annotations

import asyncio
import json
import re
import threading
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from agents.model import ModelError, ModelRequest, ModelResponse
from app.config import ApiKey
from tests.harness import LiveServer, plan_of, settings_for, wait_for, wait_status
from tests.scripted import ScriptedModel

HOLD = "[hold]"
HOLD_TOKEN = re.compile(r"\[hold\] ([0-9a-f]{32})")
FAIL_TOKEN = re.compile(r"\[fail\] ([0-9a-f]{32})")
KEYS = (ApiKey("k1", 1, 1), ApiKey("k2", 1, 2))
ERROR_FIELDS = {"status_code", "detail", "code"}


class HoldingModel(ScriptedModel):
    """The scripted model, except that the first call of a round whose prompt says "[hold] <token>" waits
    and the first call of a round whose prompt says "[fail] <token>" fails for good.

    The wait polls a threading.Event from the server's own loop, so stopping the round
    (task cancellation) ends it at once.
    """

    def __init__(self, plan: dict[str, Any]) -> None:
        super().__init__(plan=plan)
        self._released = threading.Event()
        self._lock = threading.Lock()
        self._held: list[str] = []
        self._seen: set[str] = set()

    async def complete(self, request: ModelRequest) -> ModelResponse:
        text = json.dumps(request.messages, ensure_ascii=False)
        with self._lock:
            fresh = [t for t in HOLD_TOKEN.findall(text) if t not in self._seen]
            self._seen.update(fresh)
            if fresh:
                self._held.append(text)
        if fresh:  # hold only the first call of the round that asked for it, not later rounds' history
            try:
                while not self._released.is_set():
                    await asyncio.sleep(0.01)
            finally:
                with self._lock:
                    self._held.remove(text)
        with self._lock:
            failing = [t for t in FAIL_TOKEN.findall(text) if t not in self._seen]
            self._seen.update(failing)
        if failing:  # like HOLD, only the first call of the round that asked for it
            raise ModelError("scripted failure: the provider refused the request")
        return await super().complete(request)

    def holding(self, token: str) -> bool:
        """True while a model call whose request mentions `token` is held."""
        with self._lock:
            return any(token in text for text in self._held)

    def release(self) -> None:
        self._released.set()


def check_error(response: httpx.Response, status: int, code: str | None = None) -> dict[str, Any]:
    """The response is the contract's JSON error for `status`; returns its body."""
    assert response.status_code == status, response.text
    assert response.headers["content-type"].startswith("application/json")
    body = response.json()
    assert body.keys() >= ERROR_FIELDS, body
    assert body["status_code"] == status
    assert isinstance(body["detail"], str) and body["detail"].strip()
    assert isinstance(body["code"], str) and body["code"]
    assert "Traceback" not in response.text and 'File "' not in response.text
    if code is not None:
        assert body["code"] == code, body
    return body


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


def start(client: httpx.Client, prompt: str = "", files: list[int] | None = None, workflow_id: str | None = None,
          key: str | None = None, **extra: Any) -> httpx.Response:
    """POST /api/workflows/start (with ?id= and Idempotency-Key when given)."""
    params = {"id": workflow_id} if workflow_id else None
    headers = {"Idempotency-Key": key} if key else None
    return client.post("/api/workflows/start", params=params, headers=headers,
                       json={"prompt": prompt, "listFileId": files or [], **extra})


def start_held(client: httpx.Client, model: HoldingModel, workflow_id: str | None = None) -> dict[str, Any]:
    """Start a round whose planning call is held by the model; returns once the call is waiting."""
    token = uuid.uuid4().hex
    response = start(client, f"{HOLD} {token} Summarise the quarter.", workflow_id=workflow_id)
    assert response.status_code == 200, response.text
    wait_for(lambda: model.holding(token), 30, "the round's model call to be held")
    return response.json() | {"token": token}


def run_round(client: httpx.Client, prompt: str = "Compare the figures.", files: list[int] | None = None,
              workflow_id: str | None = None, **extra: Any) -> dict[str, Any]:
    """Start a round and wait until it completed; returns the status body."""
    response = start(client, prompt, files, workflow_id, **extra)
    assert response.status_code == 200, response.text
    return wait_status(client, response.json()["id"], "completed")


def items(client: httpx.Client, workflow_id: str, kind: str, **params: Any) -> list[dict[str, Any]]:
    response = client.get(f"/api/workflows/{workflow_id}/{kind}", params=params)
    assert response.status_code == 200, response.text
    return response.json()["items"]
