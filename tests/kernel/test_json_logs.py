"""LOG_FORMAT=json: the server log of a real process is one JSON object per line, each saying
when, how bad, who logged it and what, and which workflow, round and task it belongs to."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import httpx

from tests.harness import ROOT, free_port, plan_of, wait_for, wait_status
from tests.openai_stub import Reply, Status


def test_every_line_is_a_json_object_naming_where_it_happened(tmp_path, openai_stub):
    openai_stub.script([Reply(plan_of(1)), Status(400, message="context length exceeded")])
    openai_stub.default = lambda body: "Reviewed."
    port = free_port()
    env = {**os.environ, "DATA_DIR": str(tmp_path / "data"), "PORT": str(port), "LOG_FORMAT": "json",
           "OPENAI_BASE_URL": openai_stub.base_url, "OPENAI_API_KEY": "sk-test", "LLM_MAX_RETRIES": "0"}
    env.pop("API_KEYS", None)
    log_path = tmp_path / "server.log"
    with open(log_path, "wb") as log:
        server = subprocess.Popen([sys.executable, "-m", "app"], cwd=ROOT, env=env, stdout=log,
                                  stderr=subprocess.STDOUT)
        try:
            with httpx.Client(base_url=f"http://127.0.0.1:{port}", timeout=30) as client:
                wait_for(lambda: _ready(client, server), 60, "the server")
                wid = client.post("/api/workflows/start", json={"prompt": "One part"}).json()["id"]
                assert wait_status(client, wid, "completed", "failed")["status"] == "failed"  # its one task failed
        finally:
            server.terminate()
            server.wait(30)

    lines = [line for line in log_path.read_text().splitlines() if line.strip()]
    entries = [json.loads(line) for line in lines]  # every line: one JSON object
    assert entries and all(isinstance(e, dict) and {"time", "level", "logger", "message"} <= set(e) for e in entries)
    assert {"foreman", "uvicorn.error"} <= {e["logger"] for e in entries}
    assert all(e["level"] in ("debug", "info", "warning", "error", "critical") for e in entries)

    transitions = [e for e in entries if e["logger"] == "foreman.transitions"]
    assert [json.loads(e["message"])["event"] for e in transitions] == ["start", "fail"]
    assert all((e["workflowId"], e["round"]) == (wid, 1) for e in transitions)  # the start's line too
    [failed] = [e for e in entries if e["logger"] == "foreman.failures"]
    assert "context length exceeded" in failed["message"]
    assert (failed["workflowId"], failed["round"], failed["taskId"]) == (wid, 1, "t1")


def _ready(client: httpx.Client, server: subprocess.Popen) -> bool:
    assert server.poll() is None, "the server exited"
    try:
        return client.get("/ready").status_code == 200
    except httpx.HTTPError:
        return False
