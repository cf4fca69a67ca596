"""Plan review over real HTTP: a round waits after planning, then each decision, on SQLite and PostgreSQL."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.harness import LiveServer, plan_of, settings_for, wait_for, wait_status
from tests.scripted import ScriptedModel
from tests.sse import EventReader
from tests.web.conftest import check_error


@pytest.fixture(scope="module")
def model() -> ScriptedModel:
    return ScriptedModel(plan=plan_of(2, chain=True))


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory, module_database_url: str, model: ScriptedModel) -> Iterator[LiveServer]:
    # One round slot: a waiting round must not hold it (see the test of that).
    settings = settings_for(Path(tmp_path_factory.mktemp("review")), module_database_url, max_concurrent_rounds=1)
    with LiveServer(settings, model) as live:
        yield live


@pytest.fixture
def client(server: LiveServer) -> Iterator[httpx.Client]:
    with server.client() as c:
        yield c


def start_review(client: httpx.Client, prompt: str = "Compare the figures.", **extra: Any) -> dict[str, Any]:
    """Start a round whose plan waits for review; returns its status once it waits."""
    response = client.post("/api/workflows/start", json={"prompt": prompt, "review": "plan", **extra})
    assert response.status_code == 200, response.text
    return wait_status(client, response.json()["id"], "waiting", timeout=240)


def messages(client: httpx.Client, workflow_id: str) -> list[dict[str, Any]]:
    return client.get(f"/api/workflows/{workflow_id}/messages").json()["items"]


def logs(client: httpx.Client, workflow_id: str) -> list[dict[str, Any]]:
    return client.get(f"/api/workflows/{workflow_id}/logs").json()["items"]


def review(client: httpx.Client, workflow_id: str, **body: Any) -> httpx.Response:
    return client.post(f"/api/workflows/{workflow_id}/review", json=body)


def test_a_round_under_review_waits_with_its_plan_then_runs_once_approved(client: httpx.Client) -> None:
    status = start_review(client)
    wid, wait = status["id"], status["waitingFor"]
    assert wait["kind"] == "plan" and wait["decisions"] == ["approve", "revise", "edit", "reject"]
    assert wait["since"] < wait["expiresAt"]
    plan_message = next(m for m in messages(client, wid) if "plan" in m["metadata"])
    assert plan_message["id"] == wait["messageId"]
    assert plan_message["metadata"]["review"] == {"state": "pending"}
    assert plan_message["metadata"]["plan"]["tasks"][1]["dependsOn"] == ["t1"]
    assert not [m for m in messages(client, wid) if m["metadata"].get("taskId")]  # nothing ran
    whole = client.get(f"/api/workflows/{wid}").json()
    assert whole["status"] == "waiting" and whole["waitingFor"] == wait

    answer = review(client, wid, decision="approve", messageId=wait["messageId"])
    assert answer.status_code == 200, answer.text
    assert answer.json()["status"] == "running" and answer.json()["waitingFor"] is None
    done = wait_status(client, wid, "completed", timeout=240)
    assert done["waitingFor"] is None
    items = messages(client, wid)
    assert [m["metadata"].get("taskId") for m in items if m["metadata"].get("taskId")] == ["t1", "t2"]
    approved = next(m for m in items if m["id"] == wait["messageId"])
    assert approved["metadata"]["review"]["state"] == "approved"
    entries = logs(client, wid)
    decision_log = next(e for e in entries if e["message"] == "Plan approved by user")
    assert decision_log["updatedMessageId"] == wait["messageId"]
    # The same decision again answers as the first did; another decision now is a conflict.
    again = review(client, wid, decision="approve", messageId=wait["messageId"])
    assert again.status_code == 200 and again.json()["status"] == "completed"
    body = check_error(review(client, wid, decision="reject"), 409, "decision_does_not_fit")
    assert body["waitingFor"] is None and body["status"] == "completed"


def test_reject_stops_the_round_with_its_log(client: httpx.Client) -> None:
    wid = start_review(client)["id"]
    answer = review(client, wid, decision="reject", feedback="Not what I meant.")
    assert answer.status_code == 200 and answer.json()["status"] == "stopped"
    assert logs(client, wid)[-1]["message"] == "Plan rejected by user"
    assert messages(client, wid)[-1]["content"] == "Not what I meant."
    assert not [m for m in messages(client, wid) if m["metadata"].get("taskId")]


def test_revise_plans_again_and_waits_again_and_a_chat_post_is_a_revise(client: httpx.Client,
                                                                        model: ScriptedModel) -> None:
    status = start_review(client)
    wid, first = status["id"], status["waitingFor"]["messageId"]
    calls = len(model.requests)
    answer = review(client, wid, decision="revise", feedback="Also give me the table as Excel.")
    assert answer.status_code == 200, answer.text
    second = wait_for(lambda: (s := client.get(f"/api/workflows/{wid}/status").json())["status"] == "waiting"
                      and s["waitingFor"]["messageId"] != first and s, 240, "the revised plan")
    plans = [m for m in messages(client, wid) if "plan" in m["metadata"]]
    assert [p["metadata"]["review"]["state"] for p in plans] == ["revised", "pending"]
    # The model is shown the plan proposed and the feedback as a list of changes to make to it.
    asked = model.requests[calls].messages[-1]["content"]
    assert "The user asks for these changes to it:\n1. Also give me the table as Excel.\n" in asked
    proposed = asked.split("The work plan proposed for this request (it has not run):\n", 1)[1].split("\n", 1)[0]
    assert [t["id"] for t in json.loads(proposed)["objWorkplan"]] == [t["id"] for t in plans[0]["metadata"]["plan"]["tasks"]]
    assert "Write the complete new work plan" in asked
    # A stale messageId is a conflict naming what waits.
    body = check_error(review(client, wid, decision="approve", messageId=first), 409, "decision_does_not_fit")
    assert body["waitingFor"]["messageId"] == second["waitingFor"]["messageId"]
    # A chat post while waiting revises too, in the same round.
    post = client.post("/api/workflows/start", params={"id": wid}, json={"prompt": "Only the north."})
    assert post.status_code == 200 and post.json()["currentRound"] == 1, post.text
    third = wait_for(lambda: (s := client.get(f"/api/workflows/{wid}/status").json())["status"] == "waiting"
                     and s["waitingFor"]["messageId"] not in (first, second["waitingFor"]["messageId"]) and s,
                     30, "the plan revised by the chat post")
    assert review(client, wid, decision="approve").status_code == 200
    assert wait_status(client, wid, "completed", timeout=240)["currentRound"] == 1
    assert third["currentRound"] == 1


def test_an_edit_runs_the_users_plan_and_a_bad_one_lists_every_problem(client: httpx.Client) -> None:
    status = start_review(client)
    wid, wait = status["id"], status["waitingFor"]
    bad = {"tasks": [{"id": "a", "agent": "astrologer", "instructions": "Read the stars.", "inputs": ["x.pdf"],
                      "outputs": [], "dependsOn": ["b"]},
                     {"id": "b", "agent": "analyst", "instructions": "Look.", "inputs": [], "outputs": [],
                      "dependsOn": ["a"]}], "finalDocuments": []}
    body = check_error(review(client, wid, decision="edit", plan=bad), 400, "invalid_plan")
    assert any("unknown agent 'astrologer'" in p for p in body["problems"])
    assert any("cycle" in p for p in body["problems"])
    assert body["detail"].endswith("Nothing was changed.")
    assert client.get(f"/api/workflows/{wid}/status").json()["waitingFor"] == wait
    good = {"tasks": [{"id": "only", "agent": "writer", "instructions": "Write one line.", "inputs": [],
                       "outputs": [], "dependsOn": []}], "finalDocuments": []}
    assert review(client, wid, decision="edit", plan=good).status_code == 200
    wait_status(client, wid, "completed", timeout=240)
    items = messages(client, wid)
    assert [m["metadata"]["taskId"] for m in items if m["metadata"].get("taskId")] == ["only"]
    edited = next(m for m in items if m["id"] == wait["messageId"])
    assert edited["metadata"]["review"]["state"] == "edited"
    assert [t["id"] for t in edited["metadata"]["plan"]["tasks"]] == ["only"]
    assert [t["id"] for t in edited["metadata"]["proposedPlan"]["tasks"]] == ["t1", "t2"]


def test_stop_and_delete_work_while_waiting(client: httpx.Client) -> None:
    wid = start_review(client)["id"]
    stopped = client.post(f"/api/workflows/{wid}/stop")
    assert stopped.status_code == 200 and stopped.json()["status"] == "stopped"
    assert stopped.json()["waitingFor"] is None
    assert logs(client, wid)[-1]["message"] == "Workflow stopped by user"
    check_error(review(client, wid, decision="approve"), 409, "decision_does_not_fit")
    other = start_review(client)["id"]
    assert client.delete(f"/api/workflows/{other}").status_code == 200
    check_error(client.get(f"/api/workflows/{other}/status"), 404)


def test_a_workflow_default_makes_every_round_wait(client: httpx.Client) -> None:
    status = start_review(client, reviewDefault="plan")
    wid = status["id"]
    assert client.get(f"/api/workflows/{wid}").json()["review"] == "plan"
    review(client, wid, decision="approve")
    wait_status(client, wid, "completed", timeout=240)
    nxt = client.post("/api/workflows/start", params={"id": wid}, json={"prompt": "And the south?"})
    assert nxt.status_code == 200
    assert wait_status(client, wid, "waiting", timeout=240)["currentRound"] == 2
    review(client, wid, decision="approve")
    wait_status(client, wid, "completed", timeout=240)
    off = client.post("/api/workflows/start", params={"id": wid}, json={"prompt": "Again.", "review": "none"})
    assert off.status_code == 200
    assert wait_status(client, wid, "completed", timeout=240)["currentRound"] == 3


def test_decisions_that_are_malformed_are_400(client: httpx.Client) -> None:
    wid = start_review(client)["id"]
    check_error(review(client, wid, decision="revise"), 400, "feedback_required")
    check_error(review(client, wid, decision="edit"), 400, "plan_required")
    check_error(review(client, wid, decision="maybe"), 400)
    check_error(review(client, wid, decision="answer", answer="2023"), 409, "decision_does_not_fit")
    check_error(review(client, "nope", decision="approve"), 404)
    review(client, wid, decision="reject")


def test_a_waiting_round_holds_no_slot_and_the_stream_says_what_it_waits_for(server: LiveServer,
                                                                              client: httpx.Client) -> None:
    status = start_review(client)
    wid = status["id"]
    reader = EventReader(f"{server.url}/api/workflows/{wid}/events").start()
    try:
        wait_for(lambda: [e for e in reader.events if e.event == "status"], 240, "the first status event")
        first = [e.data for e in reader.events if e.event == "status"][0]
        assert first["status"] == "waiting" and first["waitingFor"] == status["waitingFor"]
        # MAX_CONCURRENT_ROUNDS is 1 here: another round runs to its end while this one waits.
        other = client.post("/api/workflows/start", json={"prompt": "Compare the figures."})
        wait_status(client, other.json()["id"], "completed", timeout=240)
        review(client, wid, decision="approve")
        wait_status(client, wid, "completed", timeout=240)
        wait_for(lambda: any(e.event == "status" and e.data["status"] == "completed" for e in reader.events), 30,
                 "the completed status event")
        statuses = [e.data for e in reader.events if e.event == "status"]
        assert [s["waitingFor"] is None for s in statuses if s["status"] != "waiting"] and all(
            s["waitingFor"] is None for s in statuses if s["status"] != "waiting")
        ids = [e.data["id"] for e in reader.events if e.event in ("message",)]
        assert len(ids) == len(set(ids)) == len(messages(client, wid))
        updated = [e.data for e in reader.events if e.event == "update"]
        assert updated and updated[-1]["metadata"]["review"]["state"] == "approved"
    finally:
        reader.close()
