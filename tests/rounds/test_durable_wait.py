"""A waiting round survives a SIGKILL, a restart and the death of its replica; it expires when nobody decides."""

from __future__ import annotations

import signal
from collections import Counter
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.harness import LiveServer, Replica, plan_of, settings_for, upload, wait_status
from tests.openai_stub import CallTools, default_reply, request_schema
from tests.scripted import ScriptedModel

pytestmark = pytest.mark.heavy


def start_waiting(client: httpx.Client) -> dict[str, Any]:
    files = [f["id"] for f in upload(client, "stanley-cups.tsv")]
    response = client.post("/api/workflows/start", json={"prompt": "Summarise the sales and write a short report.",
                                                         "listFileId": files, "review": "plan"})
    assert response.status_code == 200, response.text
    return wait_status(client, response.json()["id"], "waiting", timeout=240)


def ran_once(client: httpx.Client, workflow_id: str) -> list[str]:
    """The tasks whose message the round wrote, each exactly once, and each started once."""
    items = client.get(f"/api/workflows/{workflow_id}/messages").json()["items"]
    tasks = [m["metadata"]["taskId"] for m in items if m["metadata"].get("taskId")]
    assert all(n == 1 for n in Counter(tasks).values()), tasks
    logs = [e["message"] for e in client.get(f"/api/workflows/{workflow_id}/logs").json()["items"]]
    started = [m for m in logs if m.startswith("Running task")]
    assert len(started) == len(set(started)) == len(tasks), logs
    return tasks


def test_sigkill_while_waiting_then_approve_after_the_restart(tmp_path: Path, database_url: str) -> None:
    replica = Replica(tmp_path, database_url, "waiter").start()
    try:
        with replica.wait_ready(240).client() as client:
            status = start_waiting(client)
        replica.signal(signal.SIGKILL)
        replica.process.wait(30)
        replica.start()
        with replica.wait_ready(240).client() as client:
            after = client.get(f"/api/workflows/{status['id']}/status").json()
            assert after["status"] == "waiting" and after["waitingFor"] == status["waitingFor"]
            answer = client.post(f"/api/workflows/{status['id']}/review", json={"decision": "approve"})
            assert answer.status_code == 200, answer.text
            wait_status(client, status["id"], "completed", timeout=240)
            assert ran_once(client, status["id"])
    finally:
        replica.stop()


def test_a_replica_killed_while_its_round_waits_another_takes_the_decision(tmp_path: Path,
                                                                            postgres_url: str) -> None:
    first = Replica(tmp_path, postgres_url, "first").start()
    second = Replica(tmp_path, postgres_url, "second").start()
    try:
        with first.wait_ready(240).client() as client:
            status = start_waiting(client)
        first.signal(signal.SIGKILL)
        with second.wait_ready(240).client() as client:
            answer = client.post(f"/api/workflows/{status['id']}/review", json={"decision": "approve"})
            assert answer.status_code == 200, answer.text
            wait_status(client, status["id"], "completed", timeout=240)
            assert ran_once(client, status["id"])
    finally:
        first.stop()
        second.stop()


def test_a_review_nobody_answers_expires_and_the_round_stops(tmp_path: Path, database_url: str) -> None:
    settings = settings_for(tmp_path, database_url, review_timeout_seconds=1.0)
    with LiveServer(settings, ScriptedModel(plan=plan_of(1))) as server, server.client() as client:
        response = client.post("/api/workflows/start", json={"prompt": "Look.", "review": "plan"})
        wid = response.json()["id"]
        stopped = wait_status(client, wid, "stopped", timeout=30)
        assert stopped["waitingFor"] is None
        last = client.get(f"/api/workflows/{wid}/logs").json()["items"][-1]
        assert last["message"].startswith("The plan review expired") and last["status"] == "stopped"
        assert last["progress"] == 100
        late = client.post(f"/api/workflows/{wid}/review", json={"decision": "approve"})
        assert late.status_code == 409 and late.json()["code"] == "decision_does_not_fit"


def asking_model(body: dict[str, Any]) -> Any:
    """The stub's answers: one plan of one task; the task's model, offered to ask, asks until answered."""
    schema = request_schema(body) or {}
    if "objWorkplan" in schema.get("properties", {}):
        return plan_of(1)
    said = " ".join(str(m.get("content", "")) for m in body.get("messages", []))
    offered = [t["function"]["name"] for t in body.get("tools", [])]
    if "ask_user" in offered and "The user answered" not in said:
        return CallTools((("ask_user", {"question": "Which year do you mean?"}),))
    if "The user answered: 2024" in said:
        return "The figures of 2024."
    return default_reply(body)


def test_sigkill_while_an_agent_asks_then_the_answer_after_the_restart(tmp_path: Path, database_url: str,
                                                                        openai_stub: Any) -> None:
    openai_stub.default = asking_model
    replica = Replica(tmp_path, database_url, "asker", OPENAI_BASE_URL=openai_stub.base_url,
                      OPENAI_API_KEY="test", AGENT_QUESTIONS="true").start()
    try:
        with replica.wait_ready(240).client() as client:
            response = client.post("/api/workflows/start", json={"prompt": "Look at it, please."})
            status = wait_status(client, response.json()["id"], "waiting", "completed", "failed", timeout=240)
            assert status["status"] == "waiting" and status["waitingFor"]["kind"] == "question", status
        replica.signal(signal.SIGKILL)
        replica.process.wait(30)
        replica.start()
        with replica.wait_ready(240).client() as client:
            after = client.get(f"/api/workflows/{status['id']}/status").json()
            assert after["status"] == "waiting" and after["waitingFor"] == status["waitingFor"]
            answer = client.post(f"/api/workflows/{status['id']}/review", json={"decision": "answer", "answer": "2024"})
            assert answer.status_code == 200, answer.text
            wait_status(client, status["id"], "completed", timeout=240)
            assert ran_once(client, status["id"]) == ["t1"]
            items = client.get(f"/api/workflows/{status['id']}/messages").json()["items"]
            assert next(m for m in items if m["metadata"].get("taskId") == "t1")["content"] == "The figures of 2024."
    finally:
        replica.stop()
