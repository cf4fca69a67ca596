"""Two processes on one PostgreSQL database: a poller on one sees what the other writes."""

from __future__ import annotations

from tests.harness import LiveServer, other_process, settings_for, wait_for, wait_status


def test_poll_on_one_process_sees_rounds_run_by_another(tmp_path, postgres_url):
    with LiveServer(settings_for(tmp_path, postgres_url, executor_id="a")) as a, a.client() as poller, \
            other_process(tmp_path, postgres_url) as b:
        wid = poller.post("/api/workflows/start", json={"prompt": "Summarise the request"}).json()["id"]
        wait_status(poller, wid, "completed")
        last = poller.get(f"/api/workflows/{wid}/status").json()["lastMessageId"]
        assert poller.get(f"/api/workflows/{wid}/messages", params={"id": last}).json()["items"] == []

        assert b.post(f"/api/workflows/start?id={wid}", json={"prompt": "And again"}).status_code == 200
        fresh = wait_for(lambda: poller.get(f"/api/workflows/{wid}/messages", params={"id": last})
                         .json()["items"], 30, "the other process's messages")
        assert fresh[0]["content"] == "And again" and fresh[0]["round"] == 2
        wait_status(b, wid, "completed")

        assert b.delete(f"/api/workflows/{wid}").status_code == 200
        wait_for(lambda: poller.get(f"/api/workflows/{wid}/messages", params={"id": last}).status_code == 404,
                 30, "the deletion to reach the first process")


def test_a_stop_said_to_one_process_aborts_the_model_call_in_the_other(tmp_path, postgres_url, openai_stub):
    from tests.openai_stub import Hold

    openai_stub.script([Hold()])
    settings = settings_for(tmp_path, postgres_url, executor_id="a", openai_base_url=openai_stub.base_url,
                            openai_api_key="test")
    with LiveServer(settings) as a, a.client() as client, other_process(tmp_path, postgres_url) as b:
        wid = client.post("/api/workflows/start", json={"prompt": "Plan this"}).json()["id"]
        assert openai_stub.wait_requests(1, timeout=30)
        assert b.post(f"/api/workflows/{wid}/stop").json()["status"] == "stopped"
        assert openai_stub.wait_disconnected(timeout=10), "the running process kept its model call"
        openai_stub.release()
        logs = [e["message"] for e in client.get(f"/api/workflows/{wid}/logs").json()["items"]]
        assert logs[-1] == "Workflow stopped by user"


def test_a_steer_posted_to_one_process_revises_the_round_another_runs(tmp_path, postgres_url):
    """The replica running the round reads the round's steering messages only once it has heard of one
    (the post announces itself in its transaction): a steer taken by another replica is heard, and the
    rest of the plan is revised with it."""
    import uuid

    from tests.rounds.test_steer import STEER, SteerModel, plan, task
    from tests.services.test_multitask import post

    model, token = SteerModel(), uuid.uuid4().hex
    model.first = plan(task("t1", f"[gate] {token} Look at the southern part of the request."),
                       task("t2", "Look at the eastern part of the request.", ["t1"]))
    with LiveServer(settings_for(tmp_path, postgres_url, executor_id="a"), model) as a, a.client() as client, \
            other_process(tmp_path, postgres_url) as b:
        wid = client.post("/api/workflows/start", json={"prompt": "Count the figures."}).json()["id"]
        wait_for(lambda: token in model.waiting, 120, "task t1 at its gate")
        answer = post(b, wid, STEER, "steer")
        assert answer.status_code == 200 and answer.json()["status"] == "running", answer.text
        wait_for(lambda: a.app.state.runtime.journal.steers.get(wid), 30, "the steer's announcement")
        model.open(token)
        wait_status(client, wid, "completed", timeout=120)
        items = client.get(f"/api/workflows/{wid}/messages").json()["items"]
        revised = [m for m in items if m["content"].startswith("Plan revised at your request")]
        assert len(revised) == 1, [m["content"][:80] for m in items]
        assert [t["id"] for t in revised[0]["metadata"]["plan"]["tasks"]] == ["t1", "n1"]
        assert model.task_calls("Look at the eastern part of the request.") == 0
