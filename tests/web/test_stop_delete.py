"""Stopping and deleting workflows."""

from __future__ import annotations

import uuid

from tests.corpus import CORPUS
from tests.harness import upload, wait_for, wait_status
from tests.web.conftest import check_error, items, run_round, start, start_held

STATUS_FIELDS = {"id", "status", "lastActivity", "currentRound", "progress", "lastMessageId", "lastLogId", "waitingFor"}


def test_stop_a_running_round_in_the_middle_of_a_model_call(c1, model):
    held = start_held(c1, model)
    wid = held["id"]
    stopped = c1.post(f"/api/workflows/{wid}/stop")
    assert stopped.status_code == 200
    body = stopped.json()
    assert set(body) == STATUS_FIELDS
    assert body["id"] == wid and body["status"] == "stopped" and body["progress"] == 100
    assert c1.get(f"/api/workflows/{wid}/status").json()["status"] == "stopped"

    wait_for(lambda: not model.holding(held["token"]), 10, "the held model call to be cancelled")
    logs = items(c1, wid, "logs")
    assert logs[-1]["message"] == "Workflow stopped by user"
    assert logs[-1]["progress"] == 100
    assert sum(entry["message"] == "Workflow stopped by user" for entry in logs) == 1
    assert body["lastLogId"] == logs[-1]["id"]
    messages = items(c1, wid, "messages")
    assert [m["status"] for m in messages] == ["first"]
    assert body["lastMessageId"] == messages[-1]["id"]

    again = c1.post(f"/api/workflows/{wid}/stop")
    assert again.status_code == 200 and again.json()["status"] == "stopped"
    assert [entry["id"] for entry in items(c1, wid, "logs")] == [entry["id"] for entry in logs]


def test_stop_a_completed_workflow_is_409(c1):
    wid = run_round(c1)["id"]
    check_error(c1.post(f"/api/workflows/{wid}/stop"), 409)
    assert c1.get(f"/api/workflows/{wid}/status").json()["status"] == "completed"


def test_stop_an_unknown_workflow_is_404(c1):
    check_error(c1.post(f"/api/workflows/{uuid.uuid4()}/stop"), 404)


def test_delete_removes_the_workflow_and_the_files_only_it_used(c1):
    only_mine, shared = upload(c1, "testCSV.csv", "simple.json")
    wid = run_round(c1, "Compare these", [only_mine["id"], shared["id"]])["id"]
    other = run_round(c1, "Read this", [shared["id"]])["id"]
    message_id = items(c1, wid, "messages")[0]["id"]

    deleted = c1.delete(f"/api/workflows/{wid}")
    assert deleted.status_code == 200

    for response in (c1.get(f"/api/workflows/{wid}"), c1.get(f"/api/workflows/{wid}/status"),
                     c1.get(f"/api/workflows/{wid}/messages"), c1.get(f"/api/workflows/{wid}/logs"),
                     c1.get(f"/api/workflows/{wid}/messages", params={"id": message_id}),
                     c1.post(f"/api/workflows/{wid}/stop"), start(c1, "More", workflow_id=wid),
                     c1.delete(f"/api/workflows/{wid}"), c1.delete(f"/api/workflows/{wid}/messages/{message_id}")):
        check_error(response, 404)
    assert wid not in [w["id"] for w in c1.get("/api/workflows").json()["items"]]

    check_error(c1.get(f"/api/files/{only_mine['id']}"), 404)
    check_error(c1.get(f"/api/files/{only_mine['id']}/content"), 404)
    assert c1.get(f"/api/files/{shared['id']}").status_code == 200
    content = c1.get(f"/api/files/{shared['id']}/content")
    assert content.status_code == 200 and content.content == (CORPUS / "simple.json").read_bytes()
    assert c1.get(f"/api/workflows/{other}").json()["messages"][0]["documents"][0]["fileId"] == shared["id"]


def test_delete_a_running_workflow_stops_it(c1, model):
    held = start_held(c1, model)
    assert c1.delete(f"/api/workflows/{held['id']}").status_code == 200
    wait_for(lambda: not model.holding(held["token"]), 10, "the held model call to be cancelled")
    check_error(c1.get(f"/api/workflows/{held['id']}/status"), 404)



def test_a_failed_round_cannot_be_stopped_but_can_be_resumed(c1):
    response = start(c1, f"[fail] {uuid.uuid4().hex} Summarise the quarter.")
    assert response.status_code == 200
    wid = response.json()["id"]
    status = wait_status(c1, wid, "failed", "completed")
    assert status["status"] == "failed" and status["progress"] == 100
    last = items(c1, wid, "logs")[-1]
    assert last["type"] == "error" and last["progress"] == 100

    check_error(c1.post(f"/api/workflows/{wid}/stop"), 409)
    assert c1.get(f"/api/workflows/{wid}/status").json()["status"] == "failed"

    again = start(c1, "Try again", workflow_id=wid)
    assert again.json() == {"id": wid, "status": "running", "currentRound": 2, "queued": False}
    assert wait_status(c1, wid, "completed", "failed")["status"] == "completed"
