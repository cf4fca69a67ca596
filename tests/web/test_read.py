"""Reading workflows: list, the whole object, status with ETag, polling by id cursor."""

from __future__ import annotations

from datetime import datetime
from typing import Any

import pytest

from tests.harness import upload, wait_for, wait_status
from tests.web.conftest import check_error, items, run_round, start

WORKFLOW_FIELDS = {"id", "mandateId", "userId", "name", "startedAt", "status", "lastActivity", "dataStats",
                   "currentRound", "messageIds", "messages", "logs"}
STATS_FIELDS = {"bytesSent", "bytesReceived", "tokensUsed", "processingTime"}
MESSAGE_FIELDS = {"id", "workflowId", "parentMessageId", "startedAt", "finishedAt", "sequenceNo", "status", "role",
                  "dataStats", "documents", "content", "agentName"}
LOG_FIELDS = {"id", "workflowId", "message", "type", "timestamp", "agentName", "status", "progress", "mandateId",
              "userId"}
DOCUMENT_FIELDS = {"id", "fileId", "name", "ext", "contents"}
CONTENT_FIELDS = {"sequenceNr", "name", "ext", "contentType", "data", "dataExtracted", "metadata", "summary"}


def aware(stamp: str) -> datetime:
    """An ISO 8601 timestamp that names its time zone."""
    parsed = datetime.fromisoformat(stamp.replace("Z", "+00:00"))
    assert parsed.tzinfo is not None, stamp
    return parsed


@pytest.fixture(scope="module")
def done(server) -> dict[str, Any]:
    """A completed workflow of user 1 with one attached document, and the file."""
    with server.client("k1") as client:
        [info] = upload(client, "testCSV.csv")
        status = run_round(client, "Look at the figures", [info["id"]])
        return {"id": status["id"], "file": info}


def test_list_is_newest_activity_first_without_messages_and_logs(c1, c2):
    older = run_round(c1, "Older")["id"]
    newer = run_round(c1, "Newer")["id"]
    listed = c1.get("/api/workflows")
    assert listed.status_code == 200
    ids = [w["id"] for w in listed.json()["items"]]
    assert ids.index(newer) < ids.index(older)
    for workflow in listed.json()["items"]:
        assert not {"messages", "logs", "messageIds"} & workflow.keys()
        assert WORKFLOW_FIELDS - {"messages", "logs", "messageIds"} <= workflow.keys()
    stamps = [aware(w["lastActivity"]) for w in listed.json()["items"]]
    assert stamps == sorted(stamps, reverse=True)

    run_round(c1, "Bring the older one back", workflow_id=older)
    ids = [w["id"] for w in c1.get("/api/workflows").json()["items"]]
    assert ids.index(older) < ids.index(newer)
    assert not {older, newer} & {w["id"] for w in c2.get("/api/workflows").json()["items"]}


def test_get_is_the_whole_workflow_in_camel_case(c1, done):
    response = c1.get(f"/api/workflows/{done['id']}")
    assert response.status_code == 200
    workflow = response.json()
    assert workflow.keys() >= WORKFLOW_FIELDS
    assert workflow["id"] == done["id"] and workflow["mandateId"] == 1 and workflow["userId"] == 1
    assert workflow["status"] == "completed" and workflow["currentRound"] == 1
    assert workflow["name"] == "Look at the figures"
    assert workflow["dataStats"].keys() >= STATS_FIELDS and workflow["dataStats"]["tokensUsed"] > 0
    assert aware(workflow["startedAt"]) <= aware(workflow["lastActivity"])
    assert workflow["messageIds"] == [m["id"] for m in workflow["messages"]]

    for message in workflow["messages"]:
        assert message.keys() >= MESSAGE_FIELDS
        assert message["workflowId"] == done["id"]
        assert message["status"] in ("first", "step", "last") and message["role"] in ("user", "assistant", "system")
        assert message["dataStats"].keys() >= STATS_FIELDS
        aware(message["startedAt"])
        if message["finishedAt"] is not None:
            aware(message["finishedAt"])
    first = workflow["messages"][0]
    assert first["status"] == "first" and first["role"] == "user"
    [document] = first["documents"]
    assert document.keys() >= DOCUMENT_FIELDS and document["fileId"] == done["file"]["id"]
    assert document.get("data") is None
    assert document["contents"] and document["contents"][0].keys() >= CONTENT_FIELDS
    assert {"isText", "base64Encoded"} <= document["contents"][0]["metadata"].keys()
    assert workflow["messages"][-1]["status"] == "last"

    for entry in workflow["logs"]:
        assert entry.keys() >= LOG_FIELDS
        assert entry["type"] in ("info", "warning", "error")
        assert entry["progress"] is None or 0 <= entry["progress"] <= 100
        assert (entry["mandateId"], entry["userId"]) == (1, 1)
        aware(entry["timestamp"])
    assert workflow["logs"][-1]["progress"] == 100


def test_unknown_workflow_is_404_everywhere(c1):
    for path in ("", "/status", "/messages", "/logs"):
        check_error(c1.get(f"/api/workflows/00000000-0000-0000-0000-000000000000{path}"), 404)


def test_status_has_an_etag_and_answers_304_when_unchanged(c1, done):
    response = c1.get(f"/api/workflows/{done['id']}/status")
    assert response.status_code == 200
    status = response.json()
    assert set(status) == {"id", "status", "lastActivity", "currentRound", "progress", "lastMessageId", "lastLogId", "waitingFor"}
    assert status["status"] == "completed" and status["progress"] == 100
    aware(status["lastActivity"])
    etag = response.headers["etag"]
    assert etag

    unchanged = c1.get(f"/api/workflows/{done['id']}/status", headers={"If-None-Match": etag})
    assert unchanged.status_code == 304 and unchanged.content == b""
    assert c1.get(f"/api/workflows/{done['id']}/status", headers={"If-None-Match": '"stale"'}).status_code == 200


def test_status_etag_changes_with_the_workflow(c1):
    wid = run_round(c1, "Before")["id"]
    before = c1.get(f"/api/workflows/{wid}/status")
    assert start(c1, "After", workflow_id=wid).status_code == 200
    wait_status(c1, wid, "completed")
    after = c1.get(f"/api/workflows/{wid}/status", headers={"If-None-Match": before.headers["etag"]})
    assert after.status_code == 200
    assert after.headers["etag"] != before.headers["etag"]
    assert after.json()["currentRound"] == 2
    assert after.json()["lastMessageId"] > before.json()["lastMessageId"]


@pytest.mark.parametrize("kind", ["messages", "logs"])
def test_polling_from_the_start_and_from_the_last_id(c1, done, kind):
    response = c1.get(f"/api/workflows/{done['id']}/{kind}")
    assert response.status_code == 200
    page = response.json()
    assert set(page) == {"items", "lastId", "hasMore"}
    assert page["items"] and page["hasMore"] is False
    ids = [item["id"] for item in page["items"]]
    assert ids == sorted(ids) and page["lastId"] == ids[-1]
    whole = c1.get(f"/api/workflows/{done['id']}").json()
    assert ids == [item["id"] for item in whole[kind]]

    tail = c1.get(f"/api/workflows/{done['id']}/{kind}", params={"id": page["lastId"]}).json()
    assert tail == {"items": [], "lastId": page["lastId"], "hasMore": False}
    middle = c1.get(f"/api/workflows/{done['id']}/{kind}", params={"id": ids[0]}).json()
    assert [item["id"] for item in middle["items"]] == ids[1:]


@pytest.mark.parametrize("kind", ["messages", "logs"])
def test_polling_pages_with_limit(c1, done, kind):
    ids = [item["id"] for item in items(c1, done["id"], kind)]
    seen: list[int] = []
    cursor: dict[str, Any] = {}
    while True:
        page = c1.get(f"/api/workflows/{done['id']}/{kind}", params={"limit": 2, **cursor}).json()
        seen += [item["id"] for item in page["items"]]
        assert page["lastId"] == seen[-1]
        if not page["hasMore"]:
            break
        assert len(page["items"]) == 2
        cursor = {"id": page["lastId"]}
    assert seen == ids
    assert len(ids) > 2


@pytest.mark.parametrize("kind", ["messages", "logs"])
def test_polling_rejects_bad_limits_and_cursors(c1, done, kind):
    other = run_round(c1, "Another one")["id"]
    foreign = items(c1, other, kind)[0]["id"]
    url = f"/api/workflows/{done['id']}/{kind}"
    for params in ({"limit": 0}, {"limit": 501}, {"limit": -1}, {"limit": "ten"}, {"id": foreign},
                   {"id": "abc"}, {"id": "1.5"}, {"id": -1}, {"id": 2**63}, {"id": 10**30}, {"id": "²"},
                   {"limit": "²"}, {"id": " 1"}, {"id": "0x10"}, {"id": "9" * 5000}, {"limit": "1" * 5000}):
        check_error(c1.get(url, params=params), 400)
    assert len(c1.get(url, params={"limit": 500}).json()["items"]) == len(items(c1, done["id"], kind))


def test_a_poller_sees_every_item_exactly_once_while_the_round_runs(c1):
    wid = start(c1, "Poll me while you work").json()["id"]
    seen: dict[str, list[int]] = {"messages": [], "logs": []}
    cursors: dict[str, dict[str, int]] = {"messages": {}, "logs": {}}

    def poll() -> bool:
        finished = c1.get(f"/api/workflows/{wid}/status").json()["status"] == "completed"
        for kind in seen:
            while True:  # after `finished`, drain: the status was read before these pages
                page = c1.get(f"/api/workflows/{wid}/{kind}", params={"limit": 3, **cursors[kind]}).json()
                seen[kind] += [item["id"] for item in page["items"]]
                cursors[kind] = {"id": page["lastId"]}
                if not page["hasMore"]:
                    break
        return finished

    wait_for(poll, 60, "the round to complete while polling")
    for kind, ids in seen.items():
        assert ids == [item["id"] for item in items(c1, wid, kind)]
        assert len(ids) == len(set(ids))


def test_ids_beyond_the_database_range_are_400_on_every_backend(c1, done):
    # Ids are 32-bit INTEGER columns on PostgreSQL: a larger id must be refused, not overflow into a 500.
    too_big = 2**63
    for kind in ("messages", "logs"):
        check_error(c1.get(f"/api/workflows/{done['id']}/{kind}", params={"id": too_big}), 400)
    check_error(c1.get(f"/api/files/{too_big}"), 400)
    check_error(c1.get(f"/api/files/{too_big}/content"), 400)
    check_error(c1.delete(f"/api/workflows/{done['id']}/messages/{too_big}"), 400)
    check_error(c1.delete(f"/api/workflows/{done['id']}/messages/1/files/{too_big}"), 400)
    check_error(start(c1, "Read it", [too_big]), 400)
    assert c1.get(f"/api/files/{2**63 - 1}").status_code == 404


def test_include_data_returns_document_bytes_as_base64(c1, done):
    import base64

    from tests.corpus import CORPUS

    expected = base64.b64encode((CORPUS / "testCSV.csv").read_bytes()).decode()
    whole = c1.get(f"/api/workflows/{done['id']}", params={"includeData": "true"}).json()
    assert whole["messages"][0]["documents"][0]["data"] == expected
    page = c1.get(f"/api/workflows/{done['id']}/messages", params={"includeData": "true"}).json()
    assert page["items"][0]["documents"][0]["data"] == expected
