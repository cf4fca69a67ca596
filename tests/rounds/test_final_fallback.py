"""A round whose final review call fails writes the offline review as its final message and ends as its tasks
earned: completed with the partial count when some delivered (issue 28, item 8)."""

from __future__ import annotations

import json

from agents.model import ModelError, ModelRequest, ModelResponse
from tests.harness import LiveServer, plan_of, settings_for, wait_status
from tests.scripted import ScriptedModel


class FailingReviewer(ScriptedModel):
    """The scripted model; the task on part 2 and the final review fail for good."""

    async def complete(self, request: ModelRequest) -> ModelResponse:
        if request.purpose == "final" or (request.purpose not in ("plan", "repair")
                                          and "part 2" in json.dumps(request.messages)):
            raise ModelError("the provider refused the request")
        return await super().complete(request)


def test_a_partly_delivered_round_whose_review_fails_completes_with_the_offline_review(tmp_path, database_url):
    with LiveServer(settings_for(tmp_path, database_url), FailingReviewer(plan=plan_of(2))) as server, \
            server.client() as client:
        wid = client.post("/api/workflows/start", json={"prompt": "Compare the figures."}).json()["id"]
        status = wait_status(client, wid, "completed", "failed")
        assert status["status"] == "completed" and status["progress"] == 100
        logs = client.get(f"/api/workflows/{wid}/logs").json()["items"]
        assert logs[-1]["message"] == "Workflow completed: 1 of 2 planned tasks delivered"
        assert any(e["type"] == "warning" and "offline review" in e["message"] for e in logs)
        last = client.get(f"/api/workflows/{wid}/messages").json()["items"][-1]
        assert last["status"] == "last" and last["metadata"]["offline"] is True
        assert "Completed steps" in last["content"] and "t1" in last["content"]


class FailingFinal(ScriptedModel):
    """The scripted model; only the final review call fails."""

    async def complete(self, request: ModelRequest) -> ModelResponse:
        if request.purpose == "final":
            raise ModelError("the provider refused the request")
        return await super().complete(request)


def test_a_review_written_in_place_of_the_model_does_not_say_the_round_ran_offline(tmp_path):
    with LiveServer(settings_for(tmp_path), FailingFinal(plan=plan_of(2))) as server, server.client() as client:
        wid = client.post("/api/workflows/start", json={"prompt": "Compare the figures."}).json()["id"]
        assert wait_status(client, wid, "completed", "failed")["status"] == "completed"
        last = client.get(f"/api/workflows/{wid}/messages").json()["items"][-1]
        assert last["status"] == "last"
        assert "ran offline" not in last["content"] and "without a language model" not in last["content"]
        assert last["content"].startswith("The language model could not write this review, so it was compiled "
                                          "from the plan and the results. All 2 planned steps are done.")
