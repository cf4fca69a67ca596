"""Live text across replicas on one PostgreSQL database: the drafts of a round run by one process
reach a stream served by another (in batches over NOTIFY), and when the writing process dies its
draft is discarded there and the round's takeover writes the message again."""

from __future__ import annotations

import json
import signal
import threading

from tests.harness import LiveServer, Replica, plan_of, settings_for
from tests.live_text import LiveText, done, read
from tests.openai_stub import Pace, request_schema


def _model(stub, words: int) -> None:
    stub.default = lambda body: json.dumps(plan_of(1, agent="writer")) if request_schema(body) else " ".join(
        f"word{n}" for n in range(words)) + "."


def test_deltas_of_a_round_on_one_replica_reach_a_stream_on_another(tmp_path, postgres_url, openai_stub):
    _model(openai_stub, words=120)
    openai_stub.pace = Pace(chars=5, delay=0.01)
    writer = Replica(tmp_path, postgres_url, "a", OPENAI_BASE_URL=openai_stub.base_url, OPENAI_API_KEY="t").start()
    try:
        writer.wait_ready(timeout=180)
        with LiveServer(settings_for(tmp_path, postgres_url, executor_id="b")) as b, writer.client() as client:
            wid = client.post("/api/workflows/start", json={"prompt": "One note."}).json()["id"]
            text = LiveText()
            read(f"{b.url}/api/workflows/{wid}/events", text, threading.Event(), until=done)
            text.check()
            task = next(m for m in text.messages.values() if m["metadata"].get("taskId"))
            pieces = [e for n, e in text.events if n == "delta" and e["messageId"] == task["metadata"]["draftId"]]
            assert len(pieces) > 3, "the task's text reached B in batches, not whole with its message"
            # The copy on B knows what the draft will be, as the writer's own process does.
            assert (pieces[0]["offset"], pieces[0]["agentName"], pieces[0]["kind"], pieces[0]["taskId"]) == (
                0, "writer", "step", task["metadata"]["taskId"])
    finally:
        writer.stop()


def test_a_draft_whose_writer_dies_is_discarded_and_the_takeover_writes_the_message(tmp_path, postgres_url,
                                                                                  openai_stub):
    _model(openai_stub, words=300)
    openai_stub.pace = Pace(chars=4, delay=0.03)
    writer = Replica(tmp_path, postgres_url, "a", OPENAI_BASE_URL=openai_stub.base_url, OPENAI_API_KEY="t",
                     HEARTBEAT_TIMEOUT_SECONDS="4").start()
    try:
        # A server started and closed before B in this process, as in a test session: its close stops
        # DBOS's queue from dequeuing, and B's engine must undo that, or B never takes the round over.
        with LiveServer(settings_for(tmp_path / "earlier")):
            pass
        writer.wait_ready(timeout=180)
        settings = settings_for(tmp_path, postgres_url, executor_id="b", openai_base_url=openai_stub.base_url,
                                openai_api_key="t", heartbeat_timeout_seconds=4)
        with LiveServer(settings) as b, writer.client() as client:
            wid = client.post("/api/workflows/start", json={"prompt": "One note."}).json()["id"]
            text, stop = LiveText(), threading.Event()
            url = f"{b.url}/api/workflows/{wid}/events"
            read(url, text, stop, until=lambda t: len(t.messages) >= 2 and any(len(v) > 40 for v in t.drafts.values()))
            lost = set(text.drafts)
            writer.signal(signal.SIGKILL)
            read(url, text, stop, until=done, timeout=180)
            assert lost <= set(text.discarded), "the dead writer's draft was discarded"
            text.check()  # every message, the taken-over task's too, is its (new) draft's deltas joined
            assert text.status["status"] == "completed"
    finally:
        writer.stop()
