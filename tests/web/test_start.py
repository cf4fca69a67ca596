"""Starting workflows and rounds: validation, conflicts while running, idempotent retries."""

from __future__ import annotations

import threading
import uuid
from concurrent.futures import ThreadPoolExecutor

from tests.harness import upload, wait_for, wait_status
from tests.web.conftest import check_error, items, run_round, start, start_held


def test_start_answers_at_once_with_the_running_round(c1):
    response = start(c1, "What is in the news?")
    assert response.status_code == 200
    body = response.json()
    assert set(body) == {"id", "status", "currentRound", "queued"} and body["queued"] is False
    assert body["status"] == "running" and body["currentRound"] == 1
    wait_status(c1, body["id"], "completed")


def test_empty_prompt_without_files_is_400(c1):
    for prompt in ("", "   \n"):
        check_error(start(c1, prompt), 400)
    check_error(c1.post("/api/workflows/start", json={}), 400)
    assert "body is missing" in check_error(c1.post("/api/workflows/start"), 400)["detail"]


def test_a_prompt_over_the_limit_is_400_and_starts_nothing(c1):
    before = c1.get("/api/workflows").json()
    body = check_error(start(c1, "word " * 20_001), 400, "prompt_too_long")  # 100,004 characters after strip
    assert "100,004 characters" in body["detail"] and "100,000" in body["detail"]
    assert "file" in body["detail"]
    assert c1.get("/api/workflows").json() == before
    response = start(c1, "word " * 19_999)  # just under the limit: accepted
    assert response.status_code == 200
    wait_status(c1, response.json()["id"], "completed")


def test_files_alone_are_enough_to_start(c1):
    [info] = upload(c1, "testCSV.csv")
    response = start(c1, "", [info["id"]])
    assert response.status_code == 200
    wait_status(c1, response.json()["id"], "completed")


def test_unknown_file_ids_are_400_and_named(c1):
    [info] = upload(c1, "simple.json")
    body = check_error(start(c1, "Read these", [info["id"], 987654321]), 400)
    assert "987654321" in body["detail"]


def test_malformed_json_is_400(c1):
    for raw in (b"{", b"{\"prompt\": \"hi\",}", b"not json", b"\xff\xfe"):
        response = c1.post("/api/workflows/start", content=raw, headers={"content-type": "application/json"})
        assert "JSON" in check_error(response, 400)["detail"]


def test_wrong_types_are_400(c1):
    for body in ({"prompt": 5}, {"prompt": None}, {"prompt": "hi", "listFileId": "1"},
                 {"prompt": "hi", "listFileId": ["one"]}, {"prompt": "hi", "listFileId": [1.5]},
                 {"prompt": "hi", "passwords": ["x"]}, ["hi"], "hi", 3):
        check_error(c1.post("/api/workflows/start", json=body), 400)


def test_unknown_workflow_id_is_404(c1):
    check_error(start(c1, "Go on", workflow_id=str(uuid.uuid4())), 404)
    check_error(start(c1, "Go on", workflow_id="not-a-uuid"), 404)


def test_start_while_running_is_409_and_changes_nothing(c1, model):
    held = start_held(c1, model)
    wid = held["id"]
    before = c1.get(f"/api/workflows/{wid}").json()

    conflict = check_error(start(c1, "And another thing", workflow_id=wid), 409)
    assert conflict["status"] == "running" and conflict["currentRound"] == 1

    after = c1.get(f"/api/workflows/{wid}").json()
    assert after["currentRound"] == before["currentRound"] == 1
    assert after["messageIds"] == before["messageIds"]
    assert [m["content"] for m in after["messages"] if m["role"] == "user"] == \
        [m["content"] for m in before["messages"] if m["role"] == "user"]
    assert len(after["logs"]) == len(before["logs"])
    assert c1.post(f"/api/workflows/{wid}/stop").status_code == 200


def test_idempotency_key_returns_the_first_answer_and_starts_one_round(c1):
    key = uuid.uuid4().hex
    count = len(c1.get("/api/workflows").json()["items"])
    first = start(c1, "Plan the launch", key=key)
    again = start(c1, "Plan the launch", key=key)
    assert first.status_code == again.status_code == 200
    assert again.json() == first.json()
    wid = first.json()["id"]
    wait_status(c1, wid, "completed")
    assert start(c1, "Plan the launch", key=key).json() == first.json()
    assert len(c1.get("/api/workflows").json()["items"]) == count + 1
    assert c1.get(f"/api/workflows/{wid}/status").json()["currentRound"] == 1

    next_key = uuid.uuid4().hex
    second = start(c1, "Now the budget", workflow_id=wid, key=next_key)
    assert second.json() == {"id": wid, "status": "running", "currentRound": 2, "queued": False}
    assert start(c1, "Now the budget", workflow_id=wid, key=next_key).json() == second.json()
    wait_status(c1, wid, "completed")
    third = start(c1, "Now the budget", workflow_id=wid, key=uuid.uuid4().hex)
    assert third.status_code == 200 and third.json()["currentRound"] == 3
    wait_status(c1, wid, "completed")
    user_messages = [m for m in items(c1, wid, "messages") if m["status"] == "first"]
    assert [m["round"] for m in user_messages] == [1, 2, 3]


def test_an_idempotency_key_reused_for_another_request_is_refused(c1):
    key = uuid.uuid4().hex
    first = start(c1, "Plan the launch", key=key)
    wid = first.json()["id"]
    for other in (dict(prompt="Plan the party"), dict(prompt="Plan the launch", workflow_id=wid)):
        reused = start(c1, key=key, **other)
        assert reused.status_code == 422, reused.text
        body = reused.json()
        assert body["code"] == "idempotency_key_reused" and "different request" in body["detail"]
    wait_status(c1, wid, "completed")
    assert start(c1, "Plan the launch", key=key).json() == first.json()  # the same request still answers
    assert c1.get(f"/api/workflows/{wid}/status").json()["currentRound"] == 1


def test_an_idempotency_key_whose_workflow_was_deleted_starts_afresh(c1):
    key = uuid.uuid4().hex
    first = start(c1, "Plan the launch", key=key).json()
    wait_status(c1, first["id"], "completed")
    assert c1.delete(f"/api/workflows/{first['id']}").status_code == 200
    again = start(c1, "Plan the launch", key=key)
    assert again.status_code == 200 and again.json()["id"] != first["id"]
    assert wait_status(c1, again.json()["id"], "completed")["currentRound"] == 1
    assert start(c1, "Plan the launch", key=key).json() == again.json()


def test_idempotency_keys_belong_to_their_user(c1, c2):
    key = uuid.uuid4().hex
    mine = start(c1, "Mine", key=key).json()
    theirs = start(c2, "Theirs", key=key).json()
    assert theirs["id"] != mine["id"]
    wait_status(c1, mine["id"], "completed")
    wait_status(c2, theirs["id"], "completed")


def test_next_round_after_completion_and_after_stop(c1, model):
    status = run_round(c1, "First question")
    wid = status["id"]
    again = start(c1, "Second question", workflow_id=wid)
    assert again.json() == {"id": wid, "status": "running", "currentRound": 2, "queued": False}
    wait_status(c1, wid, "completed")

    start_held(c1, model, workflow_id=wid)
    assert c1.post(f"/api/workflows/{wid}/stop").json()["status"] == "stopped"
    resumed = start(c1, "Fourth question", workflow_id=wid)
    assert resumed.status_code == 200 and resumed.json()["currentRound"] == 4
    wait_status(c1, wid, "completed")


def test_out_of_range_file_ids_are_400_not_500(c1):
    for file_id in (-1, 0, 2**63, -(10**27)):
        check_error(start(c1, "Read it", [file_id]), 400)


def test_passwords_for_files_not_attached_are_400(c1):
    [info] = upload(c1, "simple.json")
    for key in ("7", "x", "²", "٣", str(info["id"]) + "0"):
        body = check_error(start(c1, "Open it", [info["id"]], passwords={key: "secret"}), 400)
        assert "passwords" in body["detail"].lower() or "password" in body["detail"].lower()


def test_nul_characters_are_400_or_404_on_every_backend(c1):
    # PostgreSQL refuses NUL in text; the API must say what is wrong, not fail with a 500.
    body = check_error(start(c1, "before\x00after"), 400)
    assert "NUL" in body["detail"]
    [info] = upload(c1, "simple.json")
    check_error(start(c1, "Open it", [info["id"]], passwords={str(info["id"]): "pass\x00word"}), 400)
    for response in (c1.get("/api/workflows/a%00b"), c1.get("/api/workflows/a%00b/status"),
                     c1.get("/api/workflows/a%00b/messages"), c1.get("/api/workflows/a%00b/logs"),
                     c1.post("/api/workflows/a%00b/stop"), c1.delete("/api/workflows/a%00b"),
                     c1.delete("/api/workflows/a%00b/messages/1"), start(c1, "Go on", workflow_id="a\x00b")):
        check_error(response, 404)


def test_concurrent_starts_of_the_next_round_start_it_once(c1, server, model):
    wid = run_round(c1, "First")["id"]
    token = uuid.uuid4().hex
    barrier = threading.Barrier(6)

    def attempt(_: int):
        with server.client("k1") as client:
            barrier.wait()
            return start(client, f"[hold] {token} Next", workflow_id=wid)

    with ThreadPoolExecutor(6) as pool:
        answers = list(pool.map(attempt, range(6)))
    assert sorted(a.status_code for a in answers) == [200] + [409] * 5
    for conflict in (a for a in answers if a.status_code == 409):
        body = check_error(conflict, 409)
        assert body["status"] == "running" and body["currentRound"] == 2
    wait_for(lambda: model.holding(token), 30, "the second round's model call to be held")
    workflow = c1.get(f"/api/workflows/{wid}").json()
    assert workflow["currentRound"] == 2
    assert sum(m["status"] == "first" for m in workflow["messages"]) == 2
    assert c1.post(f"/api/workflows/{wid}/stop").status_code == 200


def test_concurrent_retries_with_one_idempotency_key_start_one_workflow(c1, server):
    key = uuid.uuid4().hex
    before = {w["id"] for w in c1.get("/api/workflows").json()["items"]}
    barrier = threading.Barrier(6)

    def attempt(_: int):
        with server.client("k1") as client:
            barrier.wait()
            return start(client, "Double-clicked", key=key)

    with ThreadPoolExecutor(6) as pool:
        answers = list(pool.map(attempt, range(6)))
    assert {a.status_code for a in answers} == {200}
    assert len({a.text for a in answers}) == 1
    wid = answers[0].json()["id"]
    wait_status(c1, wid, "completed")
    after = {w["id"] for w in c1.get("/api/workflows").json()["items"]}
    assert after - before == {wid}


def test_passwords_open_protected_documents(c1):
    [locked] = upload(c1, "libreoffice-writer-password.pdf")
    wid = run_round(c1, "Read the protected one", [locked["id"]],
                    passwords={str(locked["id"]): "openpassword"})["id"]
    [document] = items(c1, wid, "messages")[0]["documents"]
    text = " ".join(c["data"] for c in document["contents"])
    assert "Lorem ipsum dolor sit amet" in text

    without = run_round(c1, "Read it without the password", [locked["id"]])["id"]
    [document] = items(c1, without, "messages")[0]["documents"]
    assert "Lorem ipsum" not in " ".join(c["data"] for c in document["contents"])
