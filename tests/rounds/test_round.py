"""A whole round through real HTTP: the frontend's view of the contract."""

from __future__ import annotations

from tests.harness import LiveServer, plan_of, settings_for, upload, wait_status
from tests.scripted import ScriptedModel


def test_round_delivers_first_step_last_and_completes(tmp_path, database_url):
    model = ScriptedModel(plan=plan_of(3))
    with LiveServer(settings_for(tmp_path, database_url), model) as server, server.client() as client:
        files = upload(client, "testWORD.docx")
        started = client.post("/api/workflows/start", json={"prompt": "Look at this", "listFileId": [files[0]["id"]]})
        assert started.status_code == 200
        body = started.json()
        assert body["status"] == "running" and body["currentRound"] == 1
        status = wait_status(client, body["id"], "completed")
        assert status["progress"] == 100

        messages = client.get(f"/api/workflows/{body['id']}/messages").json()["items"]
        assert [m["status"] for m in messages] == ["first", "step", "step", "step", "step", "last"]
        first = messages[0]
        assert first["role"] == "user" and first["content"] == "Look at this"
        assert first["documents"][0]["fileId"] == files[0]["id"]
        assert any("sample Microsoft Word" in c["data"] for c in first["documents"][0]["contents"])
        assert [m["agentName"] for m in messages[2:5]] == ["analyst"] * 3
        assert [m["sequenceNo"] for m in messages] == list(range(1, 7))

        logs = client.get(f"/api/workflows/{body['id']}/logs").json()["items"]
        progress = [entry["progress"] for entry in logs if entry["progress"] is not None]
        assert progress == sorted(progress) and progress[0] == 0 and progress[-1] == 100
        texts = [entry["message"] for entry in logs]
        assert "Analyzing request and planning work" in texts and "Workflow completed successfully" in texts
        assert sum(t.startswith("Running task") for t in texts) == 3

        workflow = client.get(f"/api/workflows/{body['id']}").json()
        used = sum(m["dataStats"]["tokensUsed"] for m in workflow["messages"])
        assert used == workflow["dataStats"]["tokensUsed"] == model.usage.total_tokens * len(model.requests)



def test_each_task_logs_its_start_once_when_it_starts(tmp_path, database_url):
    """t1 and t3 start with the plan (their start is written with it); t2 waits for t1 and logs its
    own start after t1 is done: the log reads in the order things happened."""
    plan = plan_of(3)
    plan["objWorkplan"][1]["dependsOn"] = ["t1"]
    with LiveServer(settings_for(tmp_path, database_url), ScriptedModel(plan=plan)) as server, server.client() as client:
        body = client.post("/api/workflows/start", json={"prompt": "Look at this"}).json()
        wait_status(client, body["id"], "completed")
        texts = [e["message"] for e in client.get(f"/api/workflows/{body['id']}/logs").json()["items"]]
    starts = [t for t in texts if t.startswith("Running task")]
    assert starts == ["Running task 1/3: analyst", "Running task 3/3: analyst", "Running task 2/3: analyst"]
    assert texts.index("Work plan created: 3 tasks") < texts.index(starts[0])
    assert texts.index(starts[1]) < texts.index("Task 1/3 done: analyst") < texts.index(starts[2])
    assert texts.index(starts[2]) < texts.index("Task 2/3 done: analyst")
    # The final answer is written once every task is done, and says so once.
    assert texts.count("Creating final response") == 1
    assert max(texts.index(f"Task {n}/3 done: analyst") for n in (1, 2, 3)) < texts.index("Creating final response")

def test_next_round_resumes_the_same_workflow(tmp_path, database_url):
    with LiveServer(settings_for(tmp_path, database_url), ScriptedModel(plan=plan_of(1))) as server, \
            server.client() as client:
        first = client.post("/api/workflows/start", json={"prompt": "One"}).json()
        wait_status(client, first["id"], "completed")
        again = client.post(f"/api/workflows/start?id={first['id']}", json={"prompt": "Two"})
        assert again.status_code == 200 and again.json()["currentRound"] == 2
        wait_status(client, first["id"], "completed")
        logs = [e["message"] for e in client.get(f"/api/workflows/{first['id']}/logs").json()["items"]]
        assert "Resuming workflow, round 2" in logs
        rounds = [m["round"] for m in client.get(f"/api/workflows/{first['id']}/messages").json()["items"]]
        assert rounds.count(1) == rounds.count(2) == 4


def test_rounds_beyond_the_concurrency_limit_wait_their_turn_and_say_so(tmp_path, openai_stub):
    from tests.harness import wait_for
    from tests.openai_stub import Hold

    openai_stub.default = lambda body: plan_of(0) if "response_format" in body else "Done."
    openai_stub.script([Hold()])
    settings = settings_for(tmp_path, openai_base_url=openai_stub.base_url, openai_api_key="test",
                            max_concurrent_rounds=1)
    with LiveServer(settings) as server, server.client() as client:
        first = client.post("/api/workflows/start", json={"prompt": "First"}).json()["id"]
        assert openai_stub.wait_requests(1, timeout=30)
        second = client.post("/api/workflows/start", json={"prompt": "Second"}).json()["id"]

        def waiting() -> bool:
            logs = client.get(f"/api/workflows/{second}/logs").json()["items"]
            return any(e["message"].startswith("Waiting for a free slot") for e in logs)

        wait_for(waiting, 30, "the second round to say it waits")
        assert len(openai_stub.requests) == 1  # the second round has not called the model
        openai_stub.release()
        assert wait_status(client, first, "completed")["status"] == "completed"
        assert wait_status(client, second, "completed")["status"] == "completed"
