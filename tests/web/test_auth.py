"""Auth and tenancy: keys, 401s, and someone else's objects looking exactly like missing ones."""

from __future__ import annotations

import uuid

import pytest

from tests.harness import upload
from tests.web.conftest import check_error, items, run_round, start


@pytest.fixture(scope="module")
def theirs(server):
    """User 1's completed workflow with a file, and one of its messages."""
    with server.client("k1") as client:
        [info] = upload(client, "testCSV.csv")
        wid = run_round(client, "Private figures", [info["id"]])["id"]
        return {"id": wid, "file": info["id"], "message": items(client, wid, "messages")[0]["id"]}


def test_health_and_ready_need_no_key(server):
    with server.client() as anonymous:
        assert anonymous.get("/health").status_code == 200
        assert anonymous.get("/ready").status_code == 200


@pytest.mark.parametrize("header", [None, "Bearer nope", "Basic k1", "Bearer", "k1", "Bearer k1x"])
def test_missing_or_unknown_key_is_401(server, header):
    headers = {"Authorization": header} if header is not None else {}
    with server.client() as client:
        for response in (client.get("/api/workflows", headers=headers),
                         client.post("/api/workflows/start", json={"prompt": "hi"}, headers=headers),
                         client.post("/api/files", files=[("files", ("a.txt", b"hi"))], headers=headers),
                         client.get("/api/files/1", headers=headers)):
            check_error(response, 401)


def test_another_users_workflow_is_404_like_a_missing_one(c2, c1, theirs):
    wid, missing = theirs["id"], str(uuid.uuid4())
    requests = [
        lambda w: c2.get(f"/api/workflows/{w}"),
        lambda w: c2.get(f"/api/workflows/{w}/status"),
        lambda w: c2.get(f"/api/workflows/{w}/messages"),
        lambda w: c2.get(f"/api/workflows/{w}/logs"),
        lambda w: c2.get(f"/api/workflows/{w}/messages", params={"id": theirs["message"]}),
        lambda w: c2.post(f"/api/workflows/{w}/stop"),
        lambda w: start(c2, "Let me in", workflow_id=w),
        lambda w: c2.delete(f"/api/workflows/{w}/messages/{theirs['message']}"),
        lambda w: c2.delete(f"/api/workflows/{w}/messages/{theirs['message']}/files/{theirs['file']}"),
        lambda w: c2.delete(f"/api/workflows/{w}"),
    ]
    for request in requests:
        foreign = check_error(request(wid), 404)
        absent = check_error(request(missing), 404)
        assert foreign["code"] == absent["code"]
        assert foreign["detail"].replace(wid, "X") == absent["detail"].replace(missing, "X")
    assert wid not in [w["id"] for w in c2.get("/api/workflows").json()["items"]]

    workflow = c1.get(f"/api/workflows/{wid}").json()
    assert workflow["status"] == "completed" and workflow["currentRound"] == 1
    assert theirs["message"] in workflow["messageIds"]
    assert workflow["messages"][0]["documents"][0]["fileId"] == theirs["file"]


def test_another_users_file_is_404_and_cannot_be_attached(c2, c1, theirs):
    fid = theirs["file"]
    missing = fid + 10**9
    for suffix in ("", "/content"):
        foreign = check_error(c2.get(f"/api/files/{fid}{suffix}"), 404)
        absent = check_error(c2.get(f"/api/files/{missing}{suffix}"), 404)
        assert foreign["code"] == absent["code"]
        assert foreign["detail"].replace(str(fid), "X") == absent["detail"].replace(str(missing), "X")
    check_error(start(c2, "Use their file", [fid]), 400, "unknown_files")
    assert c1.get(f"/api/files/{fid}").status_code == 200


def test_each_user_sees_only_their_own_uploads(c1, c2):
    [mine] = upload(c2, "simple.json")
    assert c2.get(f"/api/files/{mine['id']}").status_code == 200
    check_error(c1.get(f"/api/files/{mine['id']}"), 404)


def test_unknown_routes_and_methods_answer_json_errors(c1):
    check_error(c1.get("/api/nothing-here"), 404)
    check_error(c1.put("/api/workflows", json={}), 405)
    check_error(c1.patch("/api/files/1", json={}), 405)
