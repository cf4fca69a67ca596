"""Renaming a workflow (PATCH /api/workflows/{id}): the list's title, validated, only the owner's."""

from __future__ import annotations

from tests.harness import wait_status
from tests.web.conftest import check_error, run_round, start_held


def test_a_workflow_is_renamed_and_keeps_its_name_through_the_next_round(c1):
    wid = run_round(c1, "Compare the figures of the quarter.")["id"]
    before = c1.get(f"/api/workflows/{wid}").json()
    response = c1.patch(f"/api/workflows/{wid}", json={"name": "  Quarterly\tfigures \n"})
    assert response.status_code == 200, response.text
    body = response.json()
    assert body["id"] == wid and body["name"] == "Quarterly figures"  # one line, spaces folded
    assert body["lastActivity"] == before["lastActivity"]  # a rename is not activity: the list keeps its order
    assert "messages" not in body  # the list's view of a workflow
    assert c1.get(f"/api/workflows/{wid}").json()["name"] == "Quarterly figures"
    listed = {w["id"]: w["name"] for w in c1.get("/api/workflows").json()["items"]}
    assert listed[wid] == "Quarterly figures"
    run_round(c1, "And the year before?", workflow_id=wid)  # a later round keeps the given name
    assert c1.get(f"/api/workflows/{wid}").json()["name"] == "Quarterly figures"


def test_a_rename_while_a_round_runs_keeps_the_round_going(c1, model):
    held = start_held(c1, model)
    response = c1.patch(f"/api/workflows/{held['id']}", json={"name": "Held round"})
    assert response.status_code == 200, response.text
    assert c1.get(f"/api/workflows/{held['id']}/status").json()["status"] == "running"
    assert c1.post(f"/api/workflows/{held['id']}/stop").status_code == 200
    wait_status(c1, held["id"], "stopped")
    assert c1.get(f"/api/workflows/{held['id']}").json()["name"] == "Held round"


def test_a_bad_name_is_400_with_its_code_and_changes_nothing(c1):
    wid = run_round(c1, "Compare the figures.")["id"]
    cases = [({"name": ""}, "empty_name"), ({"name": " \n\t "}, "empty_name"),
             ({"name": "x" * 81}, "name_too_long"), ({"name": "a\x00b"}, "nul_character"),
             ({"title": "Figures"}, "bad_request"), ({}, "bad_request"), ({"name": 5}, "bad_request")]
    for body, code in cases:
        error = check_error(c1.patch(f"/api/workflows/{wid}", json=body), 400, code)
        assert error["detail"], body
    assert "81 characters" in check_error(c1.patch(f"/api/workflows/{wid}", json={"name": "y" * 81}), 400)["detail"]
    assert c1.patch(f"/api/workflows/{wid}", json={"name": "z" * 80}).status_code == 200  # the limit itself
    assert c1.get(f"/api/workflows/{wid}").json()["name"] == "z" * 80


def test_another_users_or_an_unknown_workflow_is_404(c1, c2):
    wid = run_round(c1, "Compare the figures.")["id"]
    check_error(c2.patch(f"/api/workflows/{wid}", json={"name": "Mine now"}), 404, "workflow_not_found")
    check_error(c1.patch("/api/workflows/no-such-workflow", json={"name": "Nothing"}), 404, "workflow_not_found")
    assert c1.get(f"/api/workflows/{wid}").json()["name"] == "Compare the figures."
