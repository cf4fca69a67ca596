"""The official AG-UI TypeScript client (@ag-ui/client, run by Node.js) against /api/ag-ui over real HTTP.

The client is installed from npm into tests/protocols/agui_client/node_modules by `.ci/run` (`npm ci`
from the committed lock file); without Node.js or that install the test skips and says why.
"""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest

from tests.corpus import CORPUS

CLIENT = Path(__file__).parent / "agui_client"


def node_client() -> str:
    node = shutil.which("node")
    if node is None:
        pytest.skip("Node.js is not installed: the AG-UI TypeScript client cannot run")
    if not (CLIENT / "node_modules" / "@ag-ui" / "client").is_dir():
        pytest.skip("@ag-ui/client is not installed: run `npm ci --prefix tests/protocols/agui_client` (.ci/run does)")
    return node


def test_the_official_client_runs_a_round_on_two_documents_and_a_follow_up_on_its_thread(server):
    node = node_client()
    done = subprocess.run([node, str(CLIENT / "run.mjs"), server.url, "k1", str(CORPUS / "docx_comments.docx"),
                           str(CORPUS / "sample-french-1.txt")], capture_output=True, text=True, timeout=600,
                          cwd=CLIENT)
    assert done.returncode == 0, done.stderr
    parsed = json.loads(done.stdout)
    first, second = parsed["runs"]
    for n, run in enumerate((first, second), 1):
        assert run["failed"] is None
        assert run["started"] == [{"threadId": parsed["threadId"], "runId": f"run-{n}"}]
        assert run["types"][0] == "RUN_STARTED" and run["types"][-1] == "RUN_FINISHED"
        assert run["state"]["status"] == "completed" and run["state"]["progress"] == 100
        assert run["result"]["round"] == n
        assert [m["role"] for m in run["newMessages"]].count("assistant") >= 2  # the client built the messages
    assert first["result"]["workflowId"] == second["result"]["workflowId"]  # one thread, one workflow
    assert first["steps"] and all(s.split(" ")[0] in {"summarizer", "analyst"} for s in first["steps"])
    assert "docx_comments.docx" in first["text"] and "sample-french-1.txt" in first["text"]
    assert [t["agent"] for t in first["state"]["plan"]]  # the plan, applied from the state deltas
    assert "This is a sample reviewer comment on the first paragraph." in second["text"]


def test_the_official_client_gets_a_human_nodes_interrupt_and_resumes_it(server):
    from tests.protocols.flows import gated, publish

    node = node_client()
    with server.client("k1") as rest:
        flow_id = publish(rest, gated("Gated for the TypeScript client"))
    done = subprocess.run([node, str(CLIENT / "flow.mjs"), server.url, "k1", str(flow_id), "send"],
                          capture_output=True, text=True, timeout=600, cwd=CLIENT)
    assert done.returncode == 0, done.stderr
    first, second = json.loads(done.stdout)["runs"]
    assert first["failed"] is None and first["types"][-1] == "RUN_FINISHED"
    assert first["outcome"]["type"] == "interrupt"
    [interrupt] = first["outcome"]["interrupts"]
    assert interrupt["reason"] == "human_node" and interrupt["message"].startswith("Send it?")
    assert {n["nodeId"]: n["status"] for n in first["nodes"]}["ask"] == "waiting"  # the state the client applied
    assert second is not None and second["failed"] is None and second["types"][-1] == "RUN_FINISHED"
    assert "sent it" in second["text"]
    assert {n["nodeId"]: n["status"] for n in second["nodes"]}["send"] == "succeeded"
