"""multitaskStrategy "steer" over real HTTP: the post joins the running round as a user message of it,
the project manager revises the unfinished part of the plan with it (a step message that says what
changed), no finished task runs twice, and a stream and a poller see every item exactly once, in order."""

from __future__ import annotations

import json
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from agents.model import ModelRequest, ModelResponse, Usage
from tests.harness import LiveServer, settings_for, wait_for, wait_status
from tests.services.test_multitask import GateModel, poll_all, post
from tests.sse import EventReader
from tests.web.conftest import check_error

STEER = "Only the northern figures, please."


def task(tid: str, instructions: str, deps: list[str] | None = None) -> dict[str, Any]:
    return {"id": tid, "agent": "analyst", "instructions": instructions, "inputs": [], "outputs": [],
            "dependsOn": deps or []}


def plan(*tasks: dict[str, Any]) -> dict[str, Any]:
    return {"userLanguage": "en", "objUserResponse": "Here is the plan.", "objFinalDocuments": [],
            "objWorkplan": list(tasks)}


class SteerModel(GateModel):
    """Plans the round's first plan from `first`; a planning call that carries the steering message plans
    the rest for it (keeping the finished t1); task instructions with "[gate] <token>" wait at a gate."""

    def __init__(self) -> None:
        super().__init__()
        self.first: dict[str, Any] = {}

    async def complete(self, request: ModelRequest) -> ModelResponse:
        text = json.dumps(request.messages, ensure_ascii=False)
        if request.purpose in ("plan", "repair"):
            self.requests.append(request)
            chosen = (plan(task("t1", "Look at the southern part of the request."),
                           task("n1", "Look at the northern part of the request.", ["t1"])) if STEER in text else self.first)
            return ModelResponse(text=json.dumps(chosen), data=chosen, usage=Usage(calls=1), model=self.name)
        return await super().complete(request)

    def task_calls(self, instructions: str, since: int = 0) -> int:
        return sum(1 for r in self.requests[since:] if r.purpose == "task" and instructions in json.dumps(r.messages))


@pytest.fixture(scope="module")
def model() -> SteerModel:
    return SteerModel()


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory, module_database_url: str, model: SteerModel) -> Iterator[LiveServer]:
    with LiveServer(settings_for(Path(tmp_path_factory.mktemp("steer")), module_database_url, max_replans=1),
                    model) as live:
        yield live


@pytest.fixture
def client(server: LiveServer) -> Iterator[httpx.Client]:
    with server.client() as c:
        yield c


def test_steer_during_a_running_task_revises_the_rest_of_the_plan(server: LiveServer, client: httpx.Client,
                                                                   model: SteerModel) -> None:
    token, since = uuid.uuid4().hex, len(model.requests)  # the model serves both backends' servers
    model.first = plan(task("t1", f"[gate] {token} Look at the southern part of the request."),
                       task("t2", "Look at the eastern part of the request.", ["t1"]))
    started = client.post("/api/workflows/start", json={"prompt": "Count the figures."})
    assert started.status_code == 200, started.text
    wid = started.json()["id"]
    wait_for(lambda: token in model.waiting, 240, "task t1 at its gate")
    reader = EventReader(f"{server.url}/api/workflows/{wid}/events").start()
    polled: dict[str, list[int]] = {"messages": [], "logs": []}
    cursors = {"messages": 0, "logs": 0}
    try:
        for kind in cursors:
            cursors[kind] = poll_all(client, wid, kind, cursors[kind], polled[kind])
        upload = client.post("/api/files", files=[("files", ("note.txt", b"north: 12"))]).json()
        body = {"prompt": STEER, "listFileId": [upload[0]["id"]], "multitaskStrategy": "steer"}
        check_error(client.post("/api/workflows/start", params={"id": wid}, json=body), 400, "steer_needs_prompt")
        answer = post(client, wid, STEER, "steer")
        assert answer.status_code == 200, answer.text
        assert answer.json() == {"id": wid, "status": "running", "currentRound": 1, "queued": False}
        for kind in cursors:  # the post is polled while the task still runs
            cursors[kind] = poll_all(client, wid, kind, cursors[kind], polled[kind])
        model.open(token)
        final = wait_status(client, wid, "completed", timeout=240)
        for kind in cursors:
            cursors[kind] = poll_all(client, wid, kind, cursors[kind], polled[kind])
        wait_for(lambda: reader.of("log") and reader.of("log")[-1]["id"] == final["lastLogId"], 240, "the stream")
    finally:
        reader.close()
    items = client.get(f"/api/workflows/{wid}/messages").json()["items"]
    assert {m["round"] for m in items} == {1}
    users = [m["content"] for m in items if m["role"] == "user"]
    assert users == ["Count the figures.", STEER]
    steered = next(i for i, m in enumerate(items) if m["content"] == STEER)
    revised = [m for m in items if m["content"].startswith("Plan revised at your request")]
    assert len(revised) == 1 and items.index(revised[0]) > steered
    meta = revised[0]["metadata"]
    assert meta["revision"]["steer"] == [items[steered]["id"]]
    assert meta["revision"]["dropped"] == ["t2"] and meta["revision"]["added"] == ["n1"]
    assert "replaced by n1" in revised[0]["content"] and "finished t1 kept" in revised[0]["content"]
    assert [t["id"] for t in meta["plan"]["tasks"]] == ["t1", "n1"]
    # t1 finished before the revision and never ran again; t2 never started; n1 ran once
    assert model.task_calls("Look at the southern part of the request.", since) == 1
    assert model.task_calls("Look at the eastern part of the request.", since) == 0
    assert model.task_calls("Look at the northern part of the request.", since) == 1
    tasks = [m["metadata"].get("taskId") for m in items if m["metadata"].get("taskId")]
    assert tasks == ["t1", "n1"]
    logs = [e["message"] for e in client.get(f"/api/workflows/{wid}/logs").json()["items"]]
    assert any(e.startswith("A message joined the running round") for e in logs)
    assert not any(e.startswith("Work plan revised (") for e in logs)  # not counted as a failure re-plan
    for kind, event in (("messages", "message"), ("logs", "log")):
        every = [i["id"] for i in client.get(f"/api/workflows/{wid}/{kind}").json()["items"]]
        assert polled[kind] == every  # each once, in order
        assert [e["id"] for e in reader.of(event)] == every



def test_a_steer_during_the_last_task_is_taken_up_after_it(client: httpx.Client, model: SteerModel) -> None:
    # No task starts after the steer, so only the look after the tasks can see it (on SQLite that look
    # reads only when a steer came since the last look that found none).
    token, since = uuid.uuid4().hex, len(model.requests)
    model.first = plan(task("t1", f"[gate] {token} Look at the southern part of the request."))
    started = client.post("/api/workflows/start", json={"prompt": "Count the figures."})
    assert started.status_code == 200, started.text
    wid = started.json()["id"]
    wait_for(lambda: token in model.waiting, 240, "task t1 at its gate")
    assert post(client, wid, STEER, "steer").status_code == 200
    model.open(token)
    wait_status(client, wid, "completed", timeout=240)
    items = client.get(f"/api/workflows/{wid}/messages").json()["items"]
    revised = [m for m in items if m["content"].startswith("Plan revised at your request")]
    assert len(revised) == 1 and revised[0]["metadata"]["revision"]["added"] == ["n1"]
    assert model.task_calls("Look at the southern part of the request.", since) == 1
    assert model.task_calls("Look at the northern part of the request.", since) == 1
