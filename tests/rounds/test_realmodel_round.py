"""Whole rounds against a real model: SmolLM2 served by llama.cpp, through the openai SDK.

The model is far too small for its content to be judged: the assertions are about structure.
"""

from __future__ import annotations

import pytest

from tests.harness import LiveServer, settings_for, upload, wait_status

pytestmark = pytest.mark.realmodel


def test_a_round_on_a_real_model_completes_or_fails_clearly(tmp_path, llama_server):  # noqa: F811
    settings = settings_for(tmp_path, openai_base_url=llama_server, openai_api_key="none", llm_model="smollm2",
                            llm_timeout_seconds=300, llm_context_tokens=2048, max_tasks_per_plan=3)
    with LiveServer(settings) as server, server.client() as client:
        files = upload(client, "sample-french-1.txt")
        wid = client.post("/api/workflows/start",
                          json={"prompt": "Summarize this text.", "listFileId": [files[0]["id"]]}).json()["id"]
        status = wait_status(client, wid, "completed", "failed", timeout=900)
        workflow = client.get(f"/api/workflows/{wid}").json()
        logs = workflow["logs"]
        assert logs[-1]["progress"] == 100
        if status["status"] == "failed":
            reason = logs[-1]
            assert reason["type"] == "error" and len(reason["message"]) > 20
            assert "Traceback" not in reason["message"]
        else:
            statuses = [m["status"] for m in workflow["messages"]]
            assert statuses[0] == "first" and statuses[-1] == "last"
            plan = workflow["messages"][1]["metadata"]["plan"]
            registered = {"analyst", "summarizer", "writer", "translator", "data_extractor"}
            assert {task["agent"] for task in plan["tasks"]} <= registered
        stats = workflow["dataStats"]  # what the provider reported, also for calls of a plan that failed
        assert stats["tokensUsed"] > 0 and stats["bytesSent"] > 0 and stats["bytesReceived"] > 0
