"""A post to a running round, by multitaskStrategy: reject, enqueue, interrupt; pollers and a stream see every
item exactly once, in order."""

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

from agents.model import ModelRequest, ModelResponse
from tests.harness import LiveServer, plan_of, settings_for, wait_for, wait_status
from tests.scripted import ScriptedModel
from tests.sse import EventReader
from tests.web.conftest import check_error

GATE = re.compile(r"\[gate\] ([0-9a-f]{32})")


class GateModel(ScriptedModel):
    """The scripted model, except that a round's first call whose prompt says "[gate] <token>" waits until
    `open(token)` (polled from the server's loop, so a stop ends the wait at once)."""

    def __init__(self) -> None:
        super().__init__(plan=plan_of(1))
        self._open: set[str] = set()
        self._seen: set[str] = set()
        self._lock = threading.Lock()
        self.waiting: set[str] = set()

    async def complete(self, request: ModelRequest) -> ModelResponse:
        text = json.dumps(request.messages, ensure_ascii=False)
        with self._lock:
            fresh = [t for t in GATE.findall(text) if t not in self._seen]
            self._seen.update(fresh)
            self.waiting.update(fresh)
        try:
            while any(t not in self._open for t in fresh):
                await asyncio.sleep(0.01)
        finally:
            with self._lock:
                self.waiting.difference_update(fresh)
        return await super().complete(request)

    def open(self, token: str) -> None:
        with self._lock:
            self._open.add(token)


@pytest.fixture(scope="module")
def model() -> GateModel:
    return GateModel()


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory, module_database_url: str, model: GateModel) -> Iterator[LiveServer]:
    with LiveServer(settings_for(Path(tmp_path_factory.mktemp("multitask")), module_database_url), model) as live:
        yield live


@pytest.fixture
def client(server: LiveServer) -> Iterator[httpx.Client]:
    with server.client() as c:
        yield c


def gated_round(client: httpx.Client, model: GateModel) -> tuple[str, str]:
    """A round whose planning call waits at a gate: (workflow id, the gate's token)."""
    token = uuid.uuid4().hex
    response = client.post("/api/workflows/start", json={"prompt": f"[gate] {token} Compare the figures."})
    assert response.status_code == 200, response.text
    wait_for(lambda: token in model.waiting, 240, "the planning call at its gate")
    return response.json()["id"], token


def post(client: httpx.Client, workflow_id: str, prompt: str, strategy: str | None = None) -> httpx.Response:
    body: dict[str, Any] = {"prompt": prompt}
    if strategy:
        body["multitaskStrategy"] = strategy
    return client.post("/api/workflows/start", params={"id": workflow_id}, json=body)


def poll_all(client: httpx.Client, workflow_id: str, kind: str, cursor: int, seen: list[int]) -> int:
    """Poll after `cursor` until the end; the ids go to `seen`; returns the new cursor."""
    while True:
        page = client.get(f"/api/workflows/{workflow_id}/{kind}", params={"id": cursor, "limit": 3}).json()
        seen.extend(item["id"] for item in page["items"])
        cursor = page["lastId"]
        if not page["hasMore"]:
            return cursor


def test_reject_is_the_default_and_answers_409(client: httpx.Client, model: GateModel) -> None:
    wid, token = gated_round(client, model)
    for strategy in (None, "reject"):
        body = check_error(post(client, wid, "Another thing.", strategy), 409, "round_running")
        assert body["currentRound"] == 1
    model.open(token)
    wait_status(client, wid, "completed", timeout=240)


def test_enqueue_runs_the_post_as_the_next_round_and_every_item_arrives_once(server: LiveServer,
                                                                             client: httpx.Client,
                                                                             model: GateModel) -> None:
    wid, token = gated_round(client, model)
    reader = EventReader(f"{server.url}/api/workflows/{wid}/events").start()
    polled: dict[str, list[int]] = {"messages": [], "logs": []}
    cursors = {"messages": 0, "logs": 0}
    try:
        answer = post(client, wid, "Now only the north.", "enqueue")
        assert answer.status_code == 200, answer.text
        assert answer.json() == {"id": wid, "status": "running", "currentRound": 1, "queued": True}
        assert any(e["message"].startswith("A message was queued") for e in
                   client.get(f"/api/workflows/{wid}/logs").json()["items"])
        for kind in cursors:
            cursors[kind] = poll_all(client, wid, kind, cursors[kind], polled[kind])
        model.open(token)
        wait_for(lambda: client.get(f"/api/workflows/{wid}/status").json()["currentRound"] == 2, 240, "round 2")
        final = wait_status(client, wid, "completed", timeout=240)
        for kind in cursors:
            cursors[kind] = poll_all(client, wid, kind, cursors[kind], polled[kind])
        wait_for(lambda: reader.of("log") and reader.of("log")[-1]["id"] == final["lastLogId"], 240, "the stream")
    finally:
        reader.close()
    items = client.get(f"/api/workflows/{wid}/messages").json()["items"]
    users = [(m["round"], m["content"]) for m in items if m["role"] == "user"]
    assert users[-1] == (2, "Now only the north.")
    for kind, event in (("messages", "message"), ("logs", "log")):
        every = [i["id"] for i in client.get(f"/api/workflows/{wid}/{kind}").json()["items"]]
        assert polled[kind] == every  # each once, in order
        assert [e["id"] for e in reader.of(event)] == every


def test_a_stop_cancels_what_is_queued_and_says_so(client: httpx.Client, model: GateModel) -> None:
    wid, token = gated_round(client, model)
    assert post(client, wid, "Later.", "enqueue").json()["queued"] is True
    assert client.post(f"/api/workflows/{wid}/stop").json()["status"] == "stopped"
    logs = [e["message"] for e in client.get(f"/api/workflows/{wid}/logs").json()["items"]]
    assert logs[-2:] == ["The stop also cancelled 1 queued message", "Workflow stopped by user"]
    model.open(token)
    status = client.get(f"/api/workflows/{wid}/status").json()
    assert status["status"] == "stopped" and status["currentRound"] == 1


def test_interrupt_stops_the_running_round_and_starts_the_new_one_at_once(client: httpx.Client,
                                                                           model: GateModel) -> None:
    wid, token = gated_round(client, model)
    answer = post(client, wid, "Forget that; only the north.", "interrupt")
    assert answer.status_code == 200, answer.text
    assert answer.json()["currentRound"] == 2 and answer.json()["queued"] is False
    wait_status(client, wid, "completed", timeout=240)
    logs = client.get(f"/api/workflows/{wid}/logs").json()["items"]
    round1 = [e["message"] for e in logs if e["round"] == 1]
    assert round1[-1] == "Workflow stopped by user"
    assert not [m for m in client.get(f"/api/workflows/{wid}/messages").json()["items"]
                if m["round"] == 1 and m["role"] == "assistant"]
    model.open(token)


def test_two_interrupts_at_once_are_both_taken_the_later_interrupting_the_earlier(server: LiveServer,
                                                                                  model: GateModel) -> None:
    with server.client() as client:
        for _ in range(4):  # a race: several pairs, so one pair at least posts while the other's start runs
            wid, token = gated_round(client, model)
            tokens = [uuid.uuid4().hex, uuid.uuid4().hex]
            barrier = threading.Barrier(2)
            answers: list[httpx.Response] = []

            def interrupt(gate: str) -> None:
                with server.client() as own:
                    barrier.wait()
                    answers.append(post(own, wid, f"[gate] {gate} Only the north.", "interrupt"))

            posts = [threading.Thread(target=interrupt, args=(t,)) for t in tokens]
            for thread in posts:
                thread.start()
            for thread in posts:
                thread.join()
            assert [a.status_code for a in answers] == [200, 200], [a.text for a in answers]
            assert sorted(a.json()["currentRound"] for a in answers) == [2, 3]
            status = client.get(f"/api/workflows/{wid}/status").json()
            assert status["status"] == "running" and status["currentRound"] == 3
            logs = client.get(f"/api/workflows/{wid}/logs").json()["items"]
            assert [e["message"] for e in logs if e["round"] == 2][-1] == "Workflow stopped by user"
            for gate in [token, *tokens]:
                model.open(gate)
            wait_status(client, wid, "completed", timeout=240)
