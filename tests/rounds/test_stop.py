"""Stop is immediate: the model call in flight is aborted and the round writes nothing more."""

from __future__ import annotations

import json

from dbos import DBOS

from app.rounds.workflow import round_id
from tests.harness import LiveServer, plan_of, settings_for, wait_for, wait_status
from tests.openai_stub import Hold, Reply


def test_stop_aborts_the_model_call_and_nothing_follows_the_stop_log(tmp_path, database_url, openai_stub):
    openai_stub.script([Reply(plan_of(2, chain=True)), Hold(then="too late")])
    settings = settings_for(tmp_path, database_url, openai_base_url=openai_stub.base_url, openai_api_key="test")
    with LiveServer(settings) as server, server.client() as client:
        wid = client.post("/api/workflows/start", json={"prompt": "Analyse this"}).json()["id"]
        assert openai_stub.wait_requests(2, timeout=30), "the first task never called the model"

        stopped = client.post(f"/api/workflows/{wid}/stop")
        assert stopped.status_code == 200 and stopped.json()["status"] == "stopped"
        assert openai_stub.wait_disconnected(timeout=10), "the model call was not aborted"
        # The answer does not wait for DBOS; its record of the round still ends cancelled, so no
        # restart would resume the round.
        wait_for(lambda: DBOS.get_workflow_status(round_id(wid, 1)).status == "CANCELLED", 30,
                 "DBOS to record the round's cancel")
        openai_stub.release()

        # A second round is a barrier: once it completes, a straggler of round 1 would have shown.
        openai_stub.script([Reply(plan_of(0))])
        assert client.post(f"/api/workflows/start?id={wid}", json={"prompt": "Again"}).status_code == 200
        wait_status(client, wid, "completed", "failed")

        logs = client.get(f"/api/workflows/{wid}/logs").json()["items"]
        first_round = [entry for entry in logs if entry["round"] == 1]
        assert first_round[-1]["message"] == "Workflow stopped by user"
        assert first_round[-1]["progress"] == 100 and first_round[-1]["status"] == "stopped"
        messages = client.get(f"/api/workflows/{wid}/messages").json()["items"]
        round_one = [m for m in messages if m["round"] == 1]
        assert [m["status"] for m in round_one] == ["first", "step"]  # the user's and the plan, no task
        bodies = [json.dumps(r) for r in openai_stub.requests]
        assert sum("Question: Look at part 1" in b for b in bodies) == 1  # the aborted call was not retried
        assert not any("Question: Look at part 2" in b for b in bodies)  # and the task after it never ran

        again = client.post(f"/api/workflows/{wid}/stop")
        assert again.status_code == 409  # round 2 completed: nothing to stop


def test_stopping_a_stopped_workflow_answers_200_again(tmp_path, openai_stub):
    openai_stub.script([Hold()])
    settings = settings_for(tmp_path, openai_base_url=openai_stub.base_url, openai_api_key="test")
    with LiveServer(settings) as server, server.client() as client:
        wid = client.post("/api/workflows/start", json={"prompt": "Plan this"}).json()["id"]
        assert openai_stub.wait_requests(1, timeout=30)
        assert client.post(f"/api/workflows/{wid}/stop").json()["status"] == "stopped"
        openai_stub.release()
        assert client.post(f"/api/workflows/{wid}/stop").status_code == 200
        logs = [e["message"] for e in client.get(f"/api/workflows/{wid}/logs").json()["items"]]
        assert logs.count("Workflow stopped by user") == 1
