"""SIGKILL of the service between two MCP tool tasks: the finished tool call is not made again on resume."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.core.test_crash import Service
from tests.harness import wait_for, wait_status
from tests.mcp_servers import calls, stdio_entry
from tests.openai_stub import Reply


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
