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
