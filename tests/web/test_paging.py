"""The workflow list by cursor, poll cursors after deletes, message links, and ids never given twice."""

from __future__ import annotations

import base64

from tests.harness import upload
from tests.web.conftest import check_error, items, run_round


def test_workflow_list_pages_by_cursor(c2):
    made = [run_round(c2, f"Compare the figures, part {i}.")["id"] for i in range(5)]
    whole = c2.get("/api/workflows", params={"limit": 500}).json()
    assert whole["hasMore"] is False and whole["cursor"] is None
    seen, cursor = [], None
    while True:
        page = c2.get("/api/workflows", params={"limit": 2, **({"cursor": cursor} if cursor else {})}).json()
        assert len(page["items"]) <= 2
        seen += [w["id"] for w in page["items"]]
        if not page["hasMore"]:
            assert page["cursor"] is None
            break
        cursor = page["cursor"]
    assert seen == [w["id"] for w in whole["items"]]
    assert set(made) <= set(seen) and len(seen) == len(set(seen))
    check_error(c2.get("/api/workflows", params={"cursor": "not-a-cursor"}), 400, "bad_cursor")
    check_error(c2.get("/api/workflows", params={"limit": 0}), 400)


def b64(text: str) -> str:
    return base64.urlsafe_b64encode(text.encode()).decode().rstrip("=")


def test_a_cursor_the_server_did_not_give_is_a_400(c2):
    for part in (1, 2):
        run_round(c2, f"Compare the figures, part {part}.")
    first = c2.get("/api/workflows", params={"limit": 1}).json()
    issued = base64.urlsafe_b64decode(first["cursor"] + "==").decode()
    stamp, _, workflow_id = issued.partition("|")
    forged = [
        "MjAyNi0xMS0yNXwx",  # "2026-11-25|1": a date without a time zone, an id that is no workflow's (was a 500)
        b64(f"{stamp[:-6]}|{workflow_id}"),  # the issued time without its zone
        b64(f"{stamp}|1"),  # an id that is no workflow's
        b64(f"{stamp}|{workflow_id}|x"),
        b64(f"{stamp.replace('+00:00', '+02:00')}|{workflow_id}"),
        first["cursor"] + "A",
        "\u00e9t\u00e9",
    ]
    for cursor in forged:
        check_error(c2.get("/api/workflows", params={"cursor": cursor}), 400, "bad_cursor")
    assert c2.get("/api/workflows", params={"cursor": first["cursor"]}).status_code == 200


def test_poll_cursor_reaches_status_after_the_last_message_is_deleted(c1):
    wid = run_round(c1, "Compare the figures.")["id"]
    messages = items(c1, wid, "messages")
    last, before = messages[-1]["id"], messages[-2]["id"]
    assert c1.delete(f"/api/workflows/{wid}/messages/{last}").json() == {
        "deleted": "message", "workflowId": wid, "messageId": last, "fileId": None}
    status = c1.get(f"/api/workflows/{wid}/status").json()
    page = c1.get(f"/api/workflows/{wid}/messages", params={"id": before}).json()
    assert page["items"] == [] and page["hasMore"] is False
    assert page["lastId"] == status["lastMessageId"] == last
    again = c1.get(f"/api/workflows/{wid}/messages", params={"id": page["lastId"]}).json()
    assert again == {"items": [], "lastId": last, "hasMore": False}
    logs = c1.get(f"/api/workflows/{wid}/logs").json()
    assert logs["lastId"] == status["lastLogId"]


def test_assistant_messages_answer_their_rounds_user_message(c1):
    wid = run_round(c1, "Compare the figures.")["id"]
    run_round(c1, "And once more.", workflow_id=wid)
    messages = items(c1, wid, "messages")
    users = {m["round"]: m["id"] for m in messages if m["role"] == "user"}
    assert len(users) == 2
    for message in messages:
        expected = None if message["role"] == "user" else users[message["round"]]
        assert message["parentMessageId"] == expected, message


def test_every_log_has_a_progress(c1):
    wid = run_round(c1, "Compare the figures.", [f["id"] for f in upload(c1, "testCSV.csv")])["id"]
    for entry in items(c1, wid, "logs"):
        assert isinstance(entry["progress"], int) and 0 <= entry["progress"] <= 100, entry


def test_ids_are_never_given_again_after_a_delete(c1):
    kept = upload(c1, "simple.json")[0]
    newest = upload(c1, "testCSV.csv")[0]
    wid = run_round(c1, "Compare the figures.", [newest["id"]])["id"]
    old_messages = [m["id"] for m in items(c1, wid, "messages")]
    old_logs = [e["id"] for e in items(c1, wid, "logs")]
    assert c1.delete(f"/api/workflows/{wid}").json()["deleted"] == "workflow"
    check_error(c1.get(f"/api/files/{newest['id']}"), 404)  # only that workflow used it: gone with it
    again = upload(c1, "testCSV.csv")[0]
    assert again["id"] > newest["id"] > kept["id"]
    wid2 = run_round(c1, "Compare the figures.", [again["id"]])["id"]
    assert min(m["id"] for m in items(c1, wid2, "messages")) > max(old_messages)
    assert min(e["id"] for e in items(c1, wid2, "logs")) > max(old_logs)
    check_error(c1.get(f"/api/workflows/{wid}"), 404)
