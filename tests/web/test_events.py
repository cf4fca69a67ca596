"""The live event stream, over real HTTP: what polling returns, in the same order, exactly once."""

from __future__ import annotations

import asyncio
import json
import re
import sys
import threading
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from agents.model import ModelRequest, ModelResponse
from app.store.repository.messages import MessageStore
from tests.harness import LiveServer, plan_of, settings_for, upload, wait_for, wait_status
from tests.scripted import ScriptedModel
from tests.sse import EventReader, poll_all, until_status
from tests.web.conftest import KEYS, check_error, start

GATE = re.compile(r"\[gate\] ([0-9a-f]{32})")
STATUS_FIELDS = {"id", "status", "lastActivity", "currentRound", "progress", "lastMessageId", "lastLogId", "waitingFor"}


class GatedModel(ScriptedModel):
    """The scripted model, except that a round whose prompt says "[gate] <token>" waits in planning
    until the test opens that token's gate (or the round is stopped)."""

    def __init__(self, plan: dict[str, Any]) -> None:
        super().__init__(plan=plan)
        self.gates: dict[str, threading.Event] = {}
        self.waiting: set[str] = set()

    async def complete(self, request: ModelRequest) -> ModelResponse:
        tokens = GATE.findall(json.dumps(request.messages)) if request.purpose == "plan" else []
        for token in tokens:
            gate = self.gates.setdefault(token, threading.Event())
            self.waiting.add(token)
            try:
                while not gate.is_set():
                    await asyncio.sleep(0.01)
            finally:
                self.waiting.discard(token)
        return await super().complete(request)


@pytest.fixture(scope="module")
def model() -> Iterator[GatedModel]:
    gated = GatedModel(plan_of(3))
    yield gated
    for gate in gated.gates.values():
        gate.set()


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory, module_database_url: str, model: GatedModel) -> Iterator[LiveServer]:
    settings = settings_for(Path(tmp_path_factory.mktemp("events")), module_database_url, api_keys=KEYS,
                            event_heartbeat_seconds=0.2)
    with LiveServer(settings, model) as live:
        yield live


def stream(server: LiveServer, workflow_id: str, key: str | None = "k1", headers: dict[str, str] | None = None,
           **params: Any) -> EventReader:
    auth = {"Authorization": f"Bearer {key}"} if key else {}
    return EventReader(f"{server.url}/api/workflows/{workflow_id}/events", headers=auth | (headers or {}),
                       params=params).start()


def start_gated(client: httpx.Client, model: GatedModel) -> tuple[str, str]:
    token = uuid.uuid4().hex
    response = start(client, f"[gate] {token} Summarise the quarter.")
    assert response.status_code == 200, response.text
    wait_for(lambda: token in model.waiting, 30, "the round to wait in planning")
    return response.json()["id"], token


def test_a_stream_receives_the_same_items_in_the_same_order_as_a_poller(server, c1, model):
    wid, token = start_gated(c1, model)
    reader = stream(server, wid)
    wait_for(lambda: reader.of("message"), 30, "the user message on the stream")
    model.gates[token].set()
    final = until_status(reader, "completed")
    reader.close()

    messages, logs = poll_all(c1, wid, "messages"), poll_all(c1, wid, "logs")
    assert [m["status"] for m in messages] == ["first", "step", "step", "step", "step", "last"]
    assert reader.of("message") == messages
    assert reader.of("log") == logs
    assert final["progress"] == 100 and set(final) == STATUS_FIELDS
    assert final == c1.get(f"/api/workflows/{wid}/status").json()
    events = reader.snapshot()
    assert events[-1].event == "status" and events[-1].id == f"{messages[-1]['id']}-{logs[-1]['id']}"
    assert reader.content_type.startswith("text/event-stream")


def test_a_client_that_drops_mid_round_and_reconnects_loses_and_repeats_nothing(server, c1, model):
    wid, token = start_gated(c1, model)
    first = stream(server, wid)
    wait_for(lambda: first.of("message") and first.of("log"), 30, "the first items")
    first.close()
    seen = first.snapshot()
    user_message = first.of("message")[-1]
    # The last message the client saw is deleted while it is away: its id stays a valid cursor.
    assert c1.delete(f"/api/workflows/{wid}/messages/{user_message['id']}").status_code == 200
    model.gates[token].set()

    second = stream(server, wid, headers={"Last-Event-ID": seen[-1].id})
    until_status(second, "completed")
    second.close()
    messages = [e.data for e in seen + second.snapshot() if e.event == "message"]
    logs = [e.data["id"] for e in seen + second.snapshot() if e.event == "log"]
    assert [m["id"] for m in messages] == [user_message["id"]] + [m["id"] for m in poll_all(c1, wid, "messages")]
    assert logs == [entry["id"] for entry in poll_all(c1, wid, "logs")]
    assert len(set(logs)) == len(logs)


def test_a_stop_during_the_stream_ends_with_the_stop_log_and_a_stopped_status(server, c1, model):
    wid, _ = start_gated(c1, model)
    reader = stream(server, wid)
    until_status(reader, "running")
    assert c1.post(f"/api/workflows/{wid}/stop").status_code == 200
    until_status(reader, "stopped")
    logs = reader.of("log")
    assert logs[-1]["message"] == "Workflow stopped by user" and logs[-1]["progress"] == 100
    assert [e.event for e in reader.snapshot()][-2:] == ["log", "status"]
    assert sum(entry["message"] == "Workflow stopped by user" for entry in logs) == 1
    reader.close()


def test_contents_filled_into_a_delivered_user_message_reach_streams_and_pollers(server, c1, model):
    # A long PDF: its user message is delivered with empty contents while the file is read.
    book = upload(c1, "freeculture.pdf")[0]
    token = uuid.uuid4().hex
    response = start(c1, f"[gate] {token} Summarise the book.", files=[book["id"]])
    assert response.status_code == 200, response.text
    wid = response.json()["id"]
    reader = stream(server, wid)
    wait_for(lambda: token in model.waiting, 120, "the book to be read")
    wait_for(lambda: reader.of("update"), 30, "the update of the user message")
    first = reader.of("message")[0]
    assert first["role"] == "user" and first["documents"][0]["contents"] == [], \
        "the user message must have been delivered before its file was read for this test to mean anything"

    # The stream: the log that says the file was read names the message, and an update follows
    # it with the message as a poller now reads it, the book's pages filled in.
    events = reader.snapshot()
    read = next(i for i, e in enumerate(events) if e.event == "log" and e.data["updatedMessageId"] is not None)
    assert events[read].data["message"].startswith("Read freeculture.pdf")
    assert events[read].data["updatedMessageId"] == first["id"]
    update = events[read + 1]
    assert update.event == "update" and update.id == events[read].id
    polled = poll_all(c1, wid, "messages")[0]
    assert update.data == polled and len(polled["documents"][0]["contents"]) > 100
    assert [e.data["id"] for e in events if e.event == "update"] == [first["id"]]

    # A poller: the same log, read by cursor, names the message to read again.
    logs = poll_all(c1, wid, "logs")
    assert [entry["updatedMessageId"] for entry in logs if entry["updatedMessageId"]] == [first["id"]]
    assert all(entry["updatedMessageId"] is None for entry in logs if entry["id"] != events[read].data["id"])
    # A client that reconnects from before that log gets the log and the update again, once.
    resumed = stream(server, wid, headers={"Last-Event-ID": events[read - 1].id})
    wait_for(lambda: resumed.of("update"), 30, "the update after reconnecting")
    assert resumed.of("update") == [polled] and resumed.of("log")[0] == events[read].data
    model.gates[token].set()
    until_status(reader, "completed")
    reader.close()
    resumed.close()


def test_the_whole_workflow_read_while_a_file_is_read_never_names_an_update_it_does_not_hold(
        server, c1, model, monkeypatch):
    # GET /api/workflows/{id} is what a page loads before it follows the stream from the answer's last
    # ids. Its messages are held back here, once read, until the file's contents are filled in: a log
    # in the answer that says "this message was filled in" while the answer's message is still empty
    # would leave the page with the empty message for good (the stream starts after that log).
    paper = upload(c1, "tracemonkey.pdf")[0]
    token = uuid.uuid4().hex
    filled, held = threading.Event(), threading.Event()
    read_messages = MessageStore.messages_of

    async def messages_of(self, workflow_id, *args, **kwargs):
        rows = await read_messages(self, workflow_id, *args, **kwargs)
        if sys._getframe(1).f_code.co_name == "whole" and not held.is_set():  # the page's load only
            held.set()
            while not filled.is_set():
                await asyncio.sleep(0.01)
        return rows

    monkeypatch.setattr(MessageStore, "messages_of", messages_of)
    response = start(c1, f"[gate] {token} Summarise the paper.", files=[paper["id"]])
    assert response.status_code == 200, response.text
    wid = response.json()["id"]
    readers = [stream(server, wid)]
    try:
        with server.client("k1") as other:
            # Held until the paper is read (up to 120 s below on a loaded machine), longer than a client's 30 s.
            other.timeout = httpx.Timeout(150)
            answers: list[dict[str, Any]] = []
            loading = threading.Thread(target=lambda: answers.append(other.get(f"/api/workflows/{wid}").json()))
            loading.start()
            wait_for(held.is_set, 30, "the page's load to have read the messages")
            wait_for(lambda: readers[0].of("update"), 120, "the paper to be read")
            filled.set()
            loading.join(150)
        whole = answers[0]
        user = whole["messages"][0]
        assert readers[0].error is None  # the paper's paragraph separators (U+2029) cut no event (test_event_data)
        assert user["role"] == "user" and user["documents"][0]["contents"] == [], \
            "the messages must have been read before the paper was for this test to mean anything"
        assert all(entry["updatedMessageId"] is None for entry in whole["logs"])
        # Followed on from the answer's last ids, the stream brings the message filled in.
        readers.append(stream(server, wid, messageId=whole["messages"][-1]["id"], logId=whole["logs"][-1]["id"]))
        wait_for(lambda: readers[1].of("update"), 30, "the update after the page's load")
        update = readers[1].of("update")[0]
        assert update["id"] == user["id"] and update["documents"][0]["contents"]
    finally:
        filled.set()
        model.gates.setdefault(token, threading.Event()).set()  # planning may not have begun yet
    until_status(readers[0], "completed")
    for reader in readers:
        reader.close()


def test_cursors_in_the_query_start_after_them(server, c1, model):
    wid, token = start_gated(c1, model)
    model.gates[token].set()
    wait_status(c1, wid, "completed")
    messages, logs = poll_all(c1, wid, "messages"), poll_all(c1, wid, "logs")
    reader = stream(server, wid, messageId=messages[2]["id"], logId=logs[3]["id"])
    until_status(reader, "completed")
    reader.close()
    assert reader.of("message") == messages[3:]
    assert reader.of("log") == logs[4:]


def test_an_idle_stream_sends_heartbeats(server, c1, model):
    wid, token = start_gated(c1, model)
    model.gates[token].set()
    wait_status(c1, wid, "completed")
    reader = stream(server, wid)
    until_status(reader, "completed")
    count = len(reader.snapshot())
    wait_for(lambda: len(reader.comments) >= 2, 30, "two heartbeats")
    assert set(reader.comments) == {"keepalive"} and len(reader.snapshot()) == count
    reader.close()


def test_deleting_the_workflow_ends_its_stream(server, c1, model):
    wid, _ = start_gated(c1, model)
    reader = stream(server, wid)
    until_status(reader, "running")
    assert c1.delete(f"/api/workflows/{wid}").status_code == 200
    wait_for(lambda: reader.ended, 30, "the stream to end")
    assert reader.error is None


def test_another_users_workflow_is_404_and_no_key_is_401(server, c1, c2, model):
    wid, token = start_gated(c1, model)
    model.gates[token].set()
    check_error(c2.get(f"/api/workflows/{wid}/events"), 404)
    check_error(httpx.get(f"{server.url}/api/workflows/{wid}/events"), 401)
    check_error(c2.get(f"/api/workflows/{uuid.uuid4()}/events"), 404)


def test_bad_cursors_are_400(server, c1, model):
    wid, token = start_gated(c1, model)
    model.gates[token].set()
    check_error(c1.get(f"/api/workflows/{wid}/events", headers={"Last-Event-ID": "yesterday"}), 400, "bad_event_id")
    check_error(c1.get(f"/api/workflows/{wid}/events", params={"messageId": 10**9}), 400, "bad_cursor")
    check_error(c1.get(f"/api/workflows/{wid}/events", params={"logId": "x"}), 400)
