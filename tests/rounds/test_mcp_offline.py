"""The offline model and MCP tools, end to end: a request that names a tool (with its arguments as JSON)
gets a task for it; the tool's answer is the task's message (its own module: one Foreman runtime per process)."""

from __future__ import annotations

from tests.harness import LiveServer, settings_for, wait_status
from tests.mcp_servers import calls, stdio_entry


def test_the_offline_model_calls_a_tool_the_request_names(tmp_path):
    log = tmp_path / "calls.jsonl"
    with LiveServer(settings_for(tmp_path, mcp_servers=(stdio_entry(log),))) as live, live.client() as client:
        wid = client.post("/api/workflows/start", json={"prompt": 'Use calc.add with {"a": 2, "b": 3}.'}).json()["id"]
        assert wait_status(client, wid, "completed", "failed", timeout=90)["status"] == "completed"
        messages = client.get(f"/api/workflows/{wid}/messages").json()["items"]
    [step] = [m for m in messages if m["agentName"] == "calc.add"]
    assert "The sum of 2 and 3 is 5." in step["content"] and step["metadata"]["offline"]
    assert [(c["tool"], c["a"], c["b"]) for c in calls(log)] == [("add", 2, 3)]
