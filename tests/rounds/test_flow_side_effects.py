"""A rerun never repeats a side effect that succeeded: a flow's agent node that called an MCP tool is reused
by a rerun from a later node (the tool's own log counts its calls). Its own module: one Foreman runtime
per process, on the offline model with the test's MCP server."""

from __future__ import annotations

from tests.harness import LiveServer, settings_for, wait_status
from tests.mcp_servers import calls, stdio_entry
from tests.rounds.test_flow_rounds import e, n


def test_a_rerun_reuses_the_tool_call_that_succeeded(tmp_path):
    log = tmp_path / "calls.jsonl"
    definition = {"name": "tool then check", "inputs": {"ok": {"type": "string"}},
                  "nodes": [n("start", "start"),
                            n("sum", "agent", agent="calc.add", instructions='Use calc.add with {"a": 2, "b": 3}.'),
                            n("check", "code", code="if inputs['ok'] != 'yes':\n    raise ValueError('not yet')\n"
                                                    "result = nodes['sum']['output']"),
                            n("end", "end")],
                  "edges": [e("start", "sum"), e("sum", "check"), e("check", "end")],
                  "outputs": {"out": "{{ check.output }}"}}
    with LiveServer(settings_for(tmp_path, mcp_servers=(stdio_entry(log),))) as live, live.client() as client:
        flow_id = client.post("/api/flows", json=definition).json()["id"]
        wf = client.post("/api/workflows/start", json={"flow": {"id": flow_id, "version": "draft",
                                                                "inputs": {"ok": "no"}}}).json()["id"]
        assert wait_status(client, wf, "completed", "failed", timeout=90)["status"] == "failed"
        assert [c["tool"] for c in calls(log)] == ["add"]
        rerun = client.post(f"/api/workflows/{wf}/rerun", json={"fromNode": "check", "inputs": {"ok": "yes"}})
        assert rerun.status_code == 200, rerun.text
        assert wait_status(client, wf, "completed", "failed", timeout=90)["status"] == "completed"
        assert [c["tool"] for c in calls(log)] == ["add"]  # the tool was not called again
        runs = {r["path"]: r for r in client.get(f"/api/workflows/{wf}/nodes").json()["items"]}
        assert runs["sum"]["reusedFrom"] == 1 and runs["check"]["status"] == "succeeded"
        assert "5" in client.get(f"/api/workflows/{wf}/messages").json()["items"][-1]["content"]
