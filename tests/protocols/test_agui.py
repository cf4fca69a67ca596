"""AG-UI at /api/ag-ui over real HTTP: every event validated against the `ag-ui-protocol` package's models."""

from __future__ import annotations

import base64
import json
import threading
import uuid
from typing import Any

import httpx
import pydantic
from ag_ui.core import Event, RunAgentInput

from tests.corpus import CORPUS
from tests.harness import wait_for, wait_status
from tests.web.conftest import HOLD, check_error

EVENTS = pydantic.TypeAdapter(Event)


def document(name: str) -> dict[str, Any]:
    data = base64.b64encode((CORPUS / name).read_bytes()).decode()
    return {"type": "document", "source": {"type": "data", "value": data, "mimeType": "application/octet-stream"},
            "metadata": {"filename": name}}


def run_input(thread: str, content: Any, run: str | None = None) -> dict[str, Any]:
    body = {"threadId": thread, "runId": run or uuid.uuid4().hex, "state": {}, "tools": [], "context": [],
            "forwardedProps": {}, "messages": [{"id": uuid.uuid4().hex, "role": "user", "content": content}]}
    RunAgentInput.model_validate(body)  # what we send is the protocol's input
    return body


def run(client: httpx.Client, body: dict[str, Any]) -> list[Any]:
    """POST a run; every `data:` line parsed as one of the package's events."""
    with client.stream("POST", "/api/ag-ui", json=body, headers={"Accept": "text/event-stream"}, timeout=180) as r:
        assert r.status_code == 200, r.read()
        assert r.headers["content-type"].startswith("text/event-stream")
        return [EVENTS.validate_json(line[len("data: "):]) for line in r.iter_lines() if line.startswith("data: ")]


def test_a_run_on_two_documents_then_a_follow_up_on_the_same_thread(server):
    thread = "thread-" + uuid.uuid4().hex
    with server.client("k1") as client:
        first = run(client, run_input(thread, [{"type": "text", "text": "Summarize these documents."},
                                               document("docx_comments.docx"), document("sample-french-1.txt")],
                                      run="run-1"))
        kinds = [e.type.value for e in first]
        assert kinds[0] == "RUN_STARTED" and (first[0].thread_id, first[0].run_id) == (thread, "run-1")
        assert kinds[1] == "STATE_SNAPSHOT" and kinds[-1] == "RUN_FINISHED" and first[-1].outcome is None
        deltas = [op for e in first if e.type.value == "STATE_DELTA"
                  for op in json.loads(e.model_dump_json(by_alias=True))["delta"]]
        [plan] = [op["value"] for op in deltas if op["path"] == "/plan"]
        steps = [f"{t['agent']} ({t['id']})" for t in plan]
        assert [e.step_name for e in first if e.type.value == "STEP_STARTED"] == steps  # one per task, by agent
        assert sorted(e.step_name for e in first if e.type.value == "STEP_FINISHED") == sorted(steps)
        texts = "".join(e.delta for e in first if e.type.value == "TEXT_MESSAGE_CONTENT")
        assert "docx_comments.docx" in texts and "sample-french-1.txt" in texts
        assert kinds.count("TEXT_MESSAGE_START") == kinds.count("TEXT_MESSAGE_END") >= 3
        assert {"op": "replace", "path": "/progress", "value": 100} in deltas
        assert first[-1].usage[0].total_tokens > 0
        workflow = first[-1].result["workflowId"]

        follow_up = run(client, run_input(thread, "What does the reviewer's comment say?"))
        assert follow_up[-1].type.value == "RUN_FINISHED" and follow_up[-1].result == {"workflowId": workflow,
                                                                                       "round": 2}
        answer = "".join(e.delta for e in follow_up if e.type.value == "TEXT_MESSAGE_CONTENT")
        assert "This is a sample reviewer comment on the first paragraph." in answer

    with server.client("k2") as other:  # the same threadId from another caller is another workflow
        assert other.get(f"/api/workflows/{workflow}").status_code == 404
        events = run(other, run_input(thread, "What does the reviewer's comment say?"))
        assert events[-1].result["workflowId"] != workflow and events[-1].result["round"] == 1


def test_a_stopped_run_finishes_cancelled_and_bad_input_is_a_400(server, model):
    token = uuid.uuid4().hex
    with server.client("k1") as client:
        body = run_input("thread-" + token, f"{HOLD} {token} Summarise.")
        with client.stream("POST", "/api/ag-ui", json=body, timeout=60) as response:
            lines = response.iter_lines()
            started = EVENTS.validate_json(next(line for line in lines if line.startswith("data: "))[6:])
            assert started.type.value == "RUN_STARTED"
            wait_for(lambda: model.holding(token), 60, "the round's model call to be held")
            workflow = response.headers["x-foreman-workflow"]
            assert client.post(f"/api/workflows/{workflow}/stop").status_code == 200
            rest = [EVENTS.validate_json(line[6:]) for line in lines if line.startswith("data: ")]
        assert rest[-1].type.value == "RUN_FINISHED" and rest[-1].outcome.type == "cancelled"
        assert wait_status(client, workflow, "stopped")["status"] == "stopped"

        check_error(client.post("/api/ag-ui", json={"threadId": "t"}), 400, "invalid_body")
        check_error(client.post("/api/ag-ui", json=run_input("t", [
            {"type": "document", "source": {"type": "url", "value": "https://example.org/a.pdf"}}])),
            400, "unsupported_source")
    with httpx.Client(base_url=server.url) as anonymous:
        check_error(anonymous.post("/api/ag-ui", json=run_input("t", "Hello")), 401, "missing_key")


def test_json_of_events_is_the_packages_encoding(server):
    # One event as sent: camelCase keys and no nulls, as the package's encoder writes them.
    with server.client("k1") as client:
        with client.stream("POST", "/api/ag-ui", json=run_input("thread-" + uuid.uuid4().hex, "Hello")) as r:
            first = json.loads(next(line for line in r.iter_lines() if line.startswith("data: "))[6:])
    assert set(first) == {"type", "threadId", "runId"}


def test_first_runs_of_one_new_thread_at_once_start_one_round_and_answer_the_rest_a_conflict(server, model):
    token = uuid.uuid4().hex
    body = run_input("race-" + token, f"{HOLD} {token} Summarise.")
    answers: list[tuple[int, Any]] = []
    workflows: set[str] = set()
    answered = threading.Barrier(4, timeout=60)  # a run's stream stays open until all are answered

    def post() -> None:
        with server.client("k1") as client, client.stream("POST", "/api/ag-ui", json=body, timeout=60) as response:
            if response.status_code != 200:
                answers.append((response.status_code, json.loads(response.read())))
            else:
                workflows.add(response.headers["x-foreman-workflow"])
                lines = response.iter_lines()
                answers.append((200, EVENTS.validate_json(next(ln for ln in lines if ln.startswith("data: "))[6:])))
            answered.wait()

    threads = [threading.Thread(target=post) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(60)
    assert len(answers) == 4, answers
    assert sorted(status for status, _ in answers) == [200, 409, 409, 409], answers  # one round started, no 500
    assert {body["code"] for status, body in answers if status == 409} == {"round_running"}
    [workflow] = workflows
    with server.client("k1") as client:  # its client left: the round stops
        assert wait_status(client, workflow, "stopped", "completed", "failed")["status"] == "stopped"


def test_a_client_that_leaves_a_run_stops_its_round(server, model):
    token = uuid.uuid4().hex
    with server.client("k1") as client:
        with client.stream("POST", "/api/ag-ui", json=run_input("leave-" + token, f"{HOLD} {token} Summarise."),
                           timeout=60) as response:
            workflow = response.headers["x-foreman-workflow"]
            wait_for(lambda: model.holding(token), 60, "the round's model call to be held")
        # The connection is closed with the round running (as HttpAgent.abortRun does): the server stops it.
        assert wait_status(client, workflow, "stopped", "completed", "failed")["status"] == "stopped"


def test_a_plan_review_is_an_interrupt_and_the_next_run_resumes_it(server):
    thread = "review-" + uuid.uuid4().hex
    with server.client("k1") as client:
        body = run_input(thread, [{"type": "text", "text": "Summarize this document."},
                                  document("docx_comments.docx")])
        body["forwardedProps"] = {"review": "plan"}
        first = run(client, body)
        end = first[-1]
        assert end.type.value == "RUN_FINISHED" and end.outcome.type == "interrupt", end
        [interrupt] = end.outcome.interrupts
        assert interrupt.reason == "plan_review" and interrupt.message
        assert interrupt.response_schema["properties"]["decision"]["enum"] == ["approve", "revise", "edit", "reject"]
        workflow = interrupt.metadata["workflowId"]
        assert client.get(f"/api/workflows/{workflow}/status").json()["status"] == "waiting"
        assert "STEP_STARTED" not in [e.type.value for e in first]  # nothing ran before the review

        resume = run_input(thread, "unused")
        resume["messages"], resume["resume"] = [], [{"interruptId": interrupt.id, "status": "resolved",
                                                     "payload": {"decision": "approve"}}]
        RunAgentInput.model_validate(resume)
        second = run(client, resume)
        kinds = [e.type.value for e in second]
        assert kinds[-1] == "RUN_FINISHED" and second[-1].outcome is None and "STEP_STARTED" in kinds
        assert second[-1].result == {"workflowId": workflow, "round": 1}  # the same round, on after the review
        assert "docx_comments.docx" in "".join(e.delta for e in second if e.type.value == "TEXT_MESSAGE_CONTENT")

        again = run(client, resume)  # resolved: resuming it again decides nothing
        assert [e.type.value for e in again] == ["RUN_STARTED", "RUN_ERROR"] and again[-1].code == "interrupt_resolved"
        resume["resume"][0]["interruptId"] = "something-else"
        unknown = run(client, resume)
        assert [e.type.value for e in unknown] == ["RUN_STARTED", "RUN_ERROR"] and unknown[-1].code == "bad_resume"


def test_a_cancelled_interrupt_rejects_the_plan_and_the_run_finishes_cancelled(server):
    thread = "reject-" + uuid.uuid4().hex
    with server.client("k1") as client:
        body = run_input(thread, [{"type": "text", "text": "Summarize this document."},
                                  document("sample-french-1.txt")])
        body["forwardedProps"] = {"review": "plan"}
        [interrupt] = run(client, body)[-1].outcome.interrupts
        resume = run_input(thread, "unused")
        resume["messages"], resume["resume"] = [], [{"interruptId": interrupt.id, "status": "cancelled"}]
        events = run(client, resume)
        assert events[-1].type.value == "RUN_FINISHED" and events[-1].outcome.type == "cancelled"
        workflow = interrupt.metadata["workflowId"]
        assert client.get(f"/api/workflows/{workflow}/status").json()["status"] == "stopped"
