"""Live text over real HTTP: drafts grow by deltas as the model (a streaming stub) writes, the
message is exactly the deltas joined, a reconnect resumes each draft exactly once, the project
manager's answer streams before its plan is written, and a stop discards the drafts."""

from __future__ import annotations

import json
import threading
from pathlib import Path

from tests.harness import LiveServer, plan_of, settings_for, wait_for
from tests.live_text import LiveText, done, read, read_with_drops
from tests.openai_stub import OpenAIStub, Pace, Reply, request_schema
from tests.sse import poll_all

ANSWER = "I will write four short notes, one for each part of your request."


def _plan(n: int) -> str:
    plan = plan_of(n, agent="writer")
    plan["objUserResponse"] = ANSWER
    return json.dumps(plan)  # objUserResponse before objWorkplan, as the schema orders them


def _server(tmp_path: Path, database_url: str, stub: OpenAIStub) -> LiveServer:
    settings = settings_for(tmp_path, database_url, openai_base_url=stub.base_url, openai_api_key="test-key",
                            event_heartbeat_seconds=1.0)
    return LiveServer(settings)


def _texts(stub: OpenAIStub, words: int = 40) -> None:
    # Plain English prose: every agent's result is checked for the requested language (and redone
    # once when it is not), so made-up words would be written twice.
    english = "the team wrote this note about the work that was done and what comes next for all of us".split()
    stub.default = lambda body: _plan(4) if request_schema(body) else " ".join(
        english[n % len(english)] for n in range(words)) + "."


def test_every_message_of_a_four_task_round_is_its_deltas_joined(tmp_path, database_url, openai_stub):
    _texts(openai_stub)
    openai_stub.pace = Pace(chars=6, delay=0.002)
    with _server(tmp_path, database_url, openai_stub) as live, live.client() as client:
        wid = client.post("/api/workflows/start", json={"prompt": "Four notes, please."}).json()["id"]
        text = LiveText()
        read(f"{live.url}/api/workflows/{wid}/events", text, threading.Event(), until=done)
        text.check()
        assistant = [m for m in text.messages.values() if m["role"] == "assistant"]
        assert len(assistant) == 6, [m["content"][:40] for m in assistant]  # plan, 4 tasks, final
        many = [d for d in text.finished if sum(1 for n, e in text.events
                                                if n == "delta" and e["messageId"] == d) > 1]
        assert len(many) >= 5, "the model's text arrives in pieces, not whole at the end"
        assert text.status["status"] == "completed"
        # A poller sees the same messages, and no draft.
        assert poll_all(client, wid, "messages") == sorted(text.messages.values(), key=lambda m: m["id"])
        # Each draft's first delta says who writes it and what its message will be (the page draws it so).
        for message in assistant:
            first = next(e for n, e in text.events if n == "delta" and e["messageId"] == message["metadata"]["draftId"]
                         and e["offset"] == 0)
            kind = "plan" if "plan" in message["metadata"] else "answer" if message["status"] == "last" else "step"
            assert (first["agentName"], first["kind"], first.get("taskId")) == (
                message["agentName"], kind, message["metadata"].get("taskId")), (first, message["metadata"])
            assert all(set(e) == {"messageId", "offset", "text"} for n, e in text.events
                       if n == "delta" and e["offset"] > 0)  # later deltas stay as small as the contract's


def test_a_reader_that_drops_ten_times_gets_every_draft_once(tmp_path, database_url, openai_stub):
    _texts(openai_stub, words=80)
    openai_stub.pace = Pace(chars=5, delay=0.01)
    with _server(tmp_path, database_url, openai_stub) as live, live.client() as client:
        wid = client.post("/api/workflows/start", json={"prompt": "Four notes, please."}).json()["id"]
        text = read_with_drops(f"{live.url}/api/workflows/{wid}/events", drops=10)
        text.check()
        assert text.status["status"] == "completed"
        assert sorted(text.messages) == [m["id"] for m in poll_all(client, wid, "messages")]
        resumed = [e for n, e in text.events if n == "delta" and e["offset"] > 0]
        assert resumed, "some draft was resumed from an offset"


def test_the_answer_streams_before_the_plan_is_written(tmp_path, database_url, openai_stub):
    _texts(openai_stub)
    # The stub writes the answer, then waits before the plan; the answer is on the stream meanwhile.
    openai_stub.pace = Pace(chars=8, delay=0.001, pause_after=ANSWER, pause_seconds=4.0)
    with _server(tmp_path, database_url, openai_stub) as live, live.client() as client:
        wid = client.post("/api/workflows/start", json={"prompt": "Four notes, please."}).json()["id"]
        text, stop = LiveText(), threading.Event()
        read(f"{live.url}/api/workflows/{wid}/events", text, stop, until=lambda t: ANSWER in "".join(
            t.drafts.values()))
        plan_call = openai_stub.records[0]
        assert plan_call.pieces[-1][1] < len(plan_call.text), "the plan was still being written"
        assert not [m for m in text.messages.values() if m["role"] == "assistant"]
        first = next(e for n, e in text.events if n == "delta")
        assert ANSWER.startswith(first["text"]) and first["offset"] == 0


def test_a_draft_stopped_mid_call_is_discarded_and_nothing_follows_the_stop(tmp_path, database_url, openai_stub):
    _texts(openai_stub, words=400)
    openai_stub.pace = Pace(chars=4, delay=0.02)
    with _server(tmp_path, database_url, openai_stub) as live, live.client() as client:
        openai_stub.script([Reply(_plan(1))])
        wid = client.post("/api/workflows/start", json={"prompt": "One long note."}).json()["id"]
        text, stop = LiveText(), threading.Event()
        url = f"{live.url}/api/workflows/{wid}/events"

        def writing(t: LiveText) -> bool:  # the task's draft has grown (the plan's message came)
            return len(t.messages) >= 2 and any(len(v) > 20 for v in t.drafts.values())

        read(url, text, stop, until=writing)
        partial = set(text.drafts)
        assert client.post(f"/api/workflows/{wid}/stop").status_code == 200
        read(url, text, stop, until=done)
        names = [n for n, _ in text.events]
        stopped = next(i for i, (n, e) in enumerate(text.events) if n == "log" and e["status"] == "stopped")
        assert "delta" not in names[stopped:], names[stopped:]
        assert partial <= set(text.discarded)
        assert not text.drafts and not text.errors
        wait_for(lambda: client.get(f"/api/workflows/{wid}/status").json()["status"] == "stopped", 10, "stopped")


def test_a_draft_whose_call_is_retried_is_discarded_and_the_retry_streams_anew(tmp_path, database_url,
                                                                               openai_stub):
    from tests.openai_stub import StreamError

    _texts(openai_stub)
    openai_stub.pace = Pace(chars=6, delay=0.002, pause_seconds=0.5)  # the half answer, a while before its error
    with _server(tmp_path, database_url, openai_stub) as live, live.client() as client:
        openai_stub.script([Reply(_plan(1)), StreamError(code=503)])  # the task's first answer breaks off
        wid = client.post("/api/workflows/start", json={"prompt": "One note."}).json()["id"]
        text = LiveText()
        read(f"{live.url}/api/workflows/{wid}/events", text, threading.Event(), until=done)
        text.check()
        assert text.status["status"] == "completed"
        broken = [e["messageId"] for n, e in text.events if n == "delta" and "Half an ans" in e["text"]]
        assert broken and broken[0] in text.discarded
        task = next(m for m in text.messages.values() if m["metadata"].get("taskId"))
        assert task["metadata"]["draftId"] != broken[0] and "Half an ans" not in task["content"]
