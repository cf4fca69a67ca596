"""Deleting a message and removing a file from a message."""

from __future__ import annotations

from tests.harness import upload
from tests.web.conftest import check_error, items, run_round


def test_delete_message_hides_it_and_keeps_its_id_as_a_cursor(c1):
    wid = run_round(c1, "Three parts")["id"]
    messages = items(c1, wid, "messages")
    victim = messages[1]

    deleted = c1.delete(f"/api/workflows/{wid}/messages/{victim['id']}")
    assert deleted.status_code == 200

    remaining = [m["id"] for m in items(c1, wid, "messages")]
    assert victim["id"] not in remaining and len(remaining) == len(messages) - 1
    workflow = c1.get(f"/api/workflows/{wid}").json()
    assert victim["id"] not in workflow["messageIds"]
    assert victim["id"] not in [m["id"] for m in workflow["messages"]]

    after = c1.get(f"/api/workflows/{wid}/messages", params={"id": victim["id"]})
    assert after.status_code == 200
    assert [m["id"] for m in after.json()["items"]] == [m["id"] for m in messages[2:]]

    check_error(c1.delete(f"/api/workflows/{wid}/messages/{victim['id']}"), 404)
    check_error(c1.delete(f"/api/workflows/{wid}/messages/999999999"), 404)


def test_delete_message_of_another_workflow_is_404(c1):
    first = run_round(c1, "One")["id"]
    second = run_round(c1, "Two")["id"]
    foreign = items(c1, second, "messages")[0]["id"]
    check_error(c1.delete(f"/api/workflows/{first}/messages/{foreign}"), 404)
    assert foreign in [m["id"] for m in items(c1, second, "messages")]


def test_remove_a_file_from_a_message(c1):
    kept, removed = upload(c1, "testCSV.csv", "simple.json")
    wid = run_round(c1, "Both files", [kept["id"], removed["id"]])["id"]
    first = items(c1, wid, "messages")[0]
    assert {d["fileId"] for d in first["documents"]} == {kept["id"], removed["id"]}

    response = c1.delete(f"/api/workflows/{wid}/messages/{first['id']}/files/{removed['id']}")
    assert response.status_code == 200

    first = items(c1, wid, "messages")[0]
    assert [d["fileId"] for d in first["documents"]] == [kept["id"]]
    whole = c1.get(f"/api/workflows/{wid}").json()["messages"][0]
    assert [d["fileId"] for d in whole["documents"]] == [kept["id"]]

    check_error(c1.delete(f"/api/workflows/{wid}/messages/{first['id']}/files/{removed['id']}"), 404)
    check_error(c1.delete(f"/api/workflows/{wid}/messages/{first['id']}/files/999999999"), 404)
