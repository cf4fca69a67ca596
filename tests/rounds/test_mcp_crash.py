"""SIGKILL of the service between two MCP tool tasks: the finished tool call is not made again on resume."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.harness import wait_for, wait_status
from tests.mcp_servers import calls, stdio_entry
from tests.openai_stub import Reply
from tests.rounds.test_crash import Service

pytestmark = pytest.mark.heavy


@pytest.fixture
def service(tmp_path, openai_stub, database_url):
    svc = Service(tmp_path, openai_stub.base_url, database_url)
    svc.env["MCP_SERVERS"] = json.dumps([stdio_entry(tmp_path / "calls.jsonl")])
    yield svc
    svc.stop()


def test_killed_between_two_tool_tasks_the_finished_call_is_not_made_again(service, openai_stub, tmp_path: Path):
    log = tmp_path / "calls.jsonl"
    plan = {"userLanguage": "en", "objUserResponse": "Adding, then waiting.", "objFinalDocuments": [],
            "objWorkplan": [
                {"id": "t1", "agent": "calc.add", "instructions": "Add 2 and 3.", "inputs": [], "outputs": [],
                 "dependsOn": []},
                {"id": "t2", "agent": "calc.slow", "instructions": "Wait.", "inputs": [], "outputs": [],
                 "dependsOn": ["t1"]}]}
    openai_stub.script([Reply(plan), Reply({"a": 2, "b": 3}), Reply({"seconds": 300})])
    service.start()
    client = service.client()
    wid = client.post("/api/workflows/start", json={"prompt": "Use calc.add, then calc.slow."}).json()["id"]
    wait_for(lambda: [c for c in calls(log) if c["tool"] == "slow"], 60, "the second tool call")
    service.kill()

    openai_stub.script([Reply({"seconds": 0.1}), Reply("Added and waited.")])
    service.start()
    status = wait_status(client, wid, "completed", "failed", timeout=90)
    assert status["status"] == "completed"
    made = [c["tool"] for c in calls(log) if "event" not in c]
    assert made.count("add") == 1  # the finished tool task was read back from the journal, not called again
    assert made.count("slow") == 2  # the interrupted one ran again
    messages = client.get(f"/api/workflows/{wid}/messages").json()["items"]
    assert [m["status"] for m in messages] == ["first", "step", "step", "step", "last"]
    assert "The sum of 2 and 3 is 5." in messages[2]["content"] and "Waited 0.1 s." in messages[3]["content"]


def test_approved_arguments_survive_kills_while_waiting_and_mid_call(service, openai_stub, tmp_path: Path):
    """The arguments the model made before the approval are the ones approved and called, across a SIGKILL
    while the round waits and another between the approval and the call's outcome: no new model call."""
    log, hold = tmp_path / "calls.jsonl", tmp_path / "hold"
    entry = stdio_entry(log)
    entry["env"]["MCP_TEST_HOLD"] = str(hold)
    service.env["MCP_SERVERS"] = json.dumps([entry])
    plan = {"userLanguage": "en", "objUserResponse": "Launching.", "objFinalDocuments": [],
            "objWorkplan": [{"id": "t1", "agent": "calc.launch", "instructions": "Launch the probe.", "inputs": [],
                             "outputs": [], "dependsOn": []}]}
    openai_stub.script([Reply(plan), Reply({"target": "probe-7"})])  # afterwards: the stub's default answers
    service.start()
    client = service.client()
    wid = client.post("/api/workflows/start", json={"prompt": "Use calc.launch."}).json()["id"]
    wait = wait_status(client, wid, "waiting", "completed", "failed", timeout=90)["waitingFor"]
    assert wait["kind"] == "tool" and wait["tool"]["arguments"] == {"target": "probe-7"}
    service.kill()

    service.start()
    status = client.get(f"/api/workflows/{wid}/status").json()
    assert status["status"] == "waiting" and status["waitingFor"] == wait  # the same wait, the same arguments
    hold.touch()
    assert client.post(f"/api/workflows/{wid}/review", json={"decision": "approve"}).status_code == 200
    wait_for(lambda: [c for c in calls(log) if c["tool"] == "launch"], 60, "the approved call")
    service.kill()  # mid-call: approved, called, no outcome written

    hold.unlink()
    openai_stub.script([Reply("The probe is launched.")])
    service.start()
    assert wait_status(client, wid, "completed", "failed", timeout=90)["status"] == "completed"
    assert [c["target"] for c in calls(log) if c["tool"] == "launch"] == ["probe-7", "probe-7"]
    made = [r for r in openai_stub.requests if "arguments of one call of the tool calc.launch" in json.dumps(r)]
    assert len(made) == 1  # made once, before the wait; never again
    messages = client.get(f"/api/workflows/{wid}/messages").json()["items"]
    [step] = [m for m in messages if m["metadata"].get("taskId") == "t1" and "approval" not in m["metadata"]]
    assert "Launched probe-7." in step["content"] and step["metadata"]["arguments"] == {"target": "probe-7"}
