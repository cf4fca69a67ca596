"""A task that waits for the user, over real HTTP on SQLite and PostgreSQL: an agent's question
(kind "question") and a task whose agent needs approval before it runs (kind "tool")."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from agents.base import Prepared, TaskContext, TaskResult, TaskSpec
from agents.model import ModelRequest, ModelResponse, ToolCall, Usage
from agents.registry import Registry, build_registry
from tests.harness import LiveServer, settings_for, wait_for, wait_status
from tests.scripted import ScriptedModel
from tests.web.conftest import check_error


def task(tid: str, agent: str, deps: list[str] | None = None) -> dict[str, Any]:
    return {"id": tid, "agent": agent, "instructions": f"Do {tid}.", "inputs": [], "outputs": [],
            "dependsOn": deps or []}


def plan(*tasks: dict[str, Any]) -> dict[str, Any]:
    return {"userLanguage": "en", "objUserResponse": "Here is the plan.", "objFinalDocuments": [],
            "objWorkplan": list(tasks)}


class Publisher:
    """A test agent that changes something outside Foreman: each task waits for the user's approval."""

    name = "publisher"
    description = "Publishes a page on the team's wiki."
    needs_approval = True

    def __init__(self) -> None:
        self.runs: list[str] = []

    async def run(self, task: TaskSpec, context: TaskContext) -> TaskResult:
        self.runs.append(task.id)
        return TaskResult(text=f"Published the page for {task.id}.")

    def describe_call(self, task: TaskSpec) -> dict[str, Any]:
        return {"arguments": {"page": "Sales 2024"}}


class Mailer:
    """A test agent that needs approval and makes its call ready first (`prepare`): the user approves
    exactly what it will send, and the run sends that."""

    name = "mailer"
    description = "Sends an e-mail to the team."
    needs_approval = True

    def __init__(self) -> None:
        self.prepared = 0
        self.sent: list[dict[str, Any]] = []

    async def prepare(self, task: TaskSpec, context: TaskContext) -> Prepared:
        self.prepared += 1  # a second preparation would show: its subject changes
        return Prepared({"to": "team@example.org", "subject": f"Draft {self.prepared} for {task.id}"},
                        Usage(3, 4, calls=1))

    def describe_call(self, task: TaskSpec, prepared: dict[str, Any]) -> dict[str, Any]:
        return {"arguments": prepared}

    async def run(self, task: TaskSpec, context: TaskContext) -> TaskResult:
        assert context.prepared is not None
        self.sent.append(context.prepared)
        return TaskResult(text=f"Sent \"{context.prepared['subject']}\".")


class Clerk:
    """A test agent that needs a fact only the user has: it asks which year, then works with the answer."""

    name = "clerk"
    description = "Looks up the figures of one year."

    def __init__(self) -> None:
        self.seen: list[list[tuple[str, str]]] = []

    async def run(self, task: TaskSpec, context: TaskContext) -> TaskResult:
        self.seen.append(list(context.answers))
        if not context.answers:
            return TaskResult(text="", question="Which year do you mean?")
        if "again" in context.answers[-1][1]:
            return TaskResult(text="", question="Which month, then?")
        return TaskResult(text=f"The figures of {context.answers[-1][1]}.")


class PlanPerPrompt(ScriptedModel):
    """Plans by a word of the request (`scripts`), answers tasks with the agent's name."""

    def __init__(self) -> None:
        super().__init__(answer_all=True)
        self.scripts: dict[str, dict[str, Any]] = {}
        self.revisions: dict[str, dict[str, Any]] = {}  # by a word of a revision's request, before `scripts`

    async def complete(self, request: Any) -> Any:
        text = str(request.messages)
        if request.purpose in ("plan", "repair"):
            revising = "A work plan for this request was run" in text
            self.plan = next((p for k, p in self.revisions.items() if revising and k in text), None) or \
                next(p for k, p in self.scripts.items() if k in text)
        if request.purpose == "task" and "Look at the year in question." in text:
            self.requests.append(request)  # a model offered to ask (AGENT_QUESTIONS) asks, then works with the answer
            if "ask_user" in [t.name for t in request.tools] and "The user answered" not in text:
                return ModelResponse(text="", tool_calls=(ToolCall("ask_user", {"question": "Which fiscal year?"}),),
                                     usage=Usage(calls=1), model=self.name)
            said = text.split("The user answered: ", 1)[-1][:4]
            return ModelResponse(text=f"The year in question is {said}.", usage=Usage(calls=1), model=self.name)
        return await super().complete(request)


@pytest.fixture(scope="module")
def agents(module_database_url: str) -> tuple[Publisher, Clerk, PlanPerPrompt, Mailer]:
    return Publisher(), Clerk(), PlanPerPrompt(), Mailer()


@pytest.fixture(scope="module")
def client(tmp_path_factory: pytest.TempPathFactory, module_database_url: str,
           agents: tuple[Publisher, Clerk, PlanPerPrompt, Mailer]) -> Iterator[httpx.Client]:
    publisher, clerk, model, mailer = agents
    registry = build_registry(entry_points=False)
    registry.add(publisher)
    registry.add(clerk)
    registry.add(mailer)
    settings = settings_for(Path(tmp_path_factory.mktemp("asking")), module_database_url, max_concurrent_rounds=1,
                            agent_questions=True)
    with LiveServer(settings, model, registry) as server, server.client() as c:
        yield c


def start(client: httpx.Client, model: PlanPerPrompt, key: str, the_plan: dict[str, Any]) -> dict[str, Any]:
    model.scripts[key] = the_plan
    response = client.post("/api/workflows/start", json={"prompt": f"{key}: the sales report."})
    assert response.status_code == 200, response.text
    return wait_status(client, response.json()["id"], "waiting", "completed", "failed", timeout=240)


def items(client: httpx.Client, workflow_id: str, what: str = "messages") -> list[dict[str, Any]]:
    return client.get(f"/api/workflows/{workflow_id}/{what}").json()["items"]


def review(client: httpx.Client, workflow_id: str, **body: Any) -> httpx.Response:
    return client.post(f"/api/workflows/{workflow_id}/review", json=body)


def task_ids(client: httpx.Client, workflow_id: str) -> list[str]:
    return [m["metadata"]["taskId"] for m in items(client, workflow_id) if m["metadata"].get("taskId")]


def test_a_task_that_needs_approval_waits_and_runs_once_approved(client: httpx.Client, agents: Any) -> None:
    publisher, _, model, _ = agents
    status = start(client, model, "approve-me", plan(task("t1", "analyst"), task("t2", "publisher", ["t1"]),
                                                     task("t3", "writer", ["t2"])))
    wid, wait = status["id"], status["waitingFor"]
    assert status["status"] == "waiting" and wait["kind"] == "tool" and wait["decisions"] == ["approve", "reject"]
    assert wait["taskId"] == "t2" and wait["agent"] == "publisher"
    assert wait["tool"]["name"] == "publisher" and wait["tool"]["arguments"] == {"page": "Sales 2024"}
    assert wait["tool"]["instructions"] == "Do t2."
    asked = next(m for m in items(client, wid) if m["id"] == wait["messageId"])
    assert asked["metadata"]["approval"]["state"] == "pending" and "needs your approval" in asked["content"]
    assert task_ids(client, wid) == ["t1"] and publisher.runs == []  # what came before ran; t2 did not
    check_error(review(client, wid, decision="answer", answer="yes"), 409, "decision_does_not_fit")

    assert review(client, wid, decision="approve", messageId=wait["messageId"]).status_code == 200
    assert wait_status(client, wid, "completed", timeout=240)["waitingFor"] is None
    assert task_ids(client, wid) == ["t1", "t2", "t3"] and publisher.runs == ["t2"]
    approved = next(m for m in items(client, wid) if m["id"] == wait["messageId"])
    assert approved["metadata"]["approval"]["state"] == "approved"
    assert any(e["message"] == "Task t2 approved by user" for e in items(client, wid, "logs"))
    assert review(client, wid, decision="approve").json()["status"] == "completed"  # repeated: same answer


def test_a_rejected_task_fails_with_the_users_reason_and_the_plan_is_revised_around_it(client: httpx.Client,
                                                                                      agents: Any) -> None:
    publisher, _, model, _ = agents
    before = list(publisher.runs)
    model.revisions["not on the wiki"] = plan(task("t3", "writer"))  # the revision: the writer, without t2
    status = start(client, model, "reject-me", plan(task("t1", "analyst"), task("t2", "publisher"),
                                                    task("t3", "writer", ["t2"])))
    wid = status["id"]
    # A chat post that is not a clear yes rejects the task, with the post as why.
    post = client.post("/api/workflows/start", params={"id": wid}, json={"prompt": "No, not on the wiki."})
    assert post.status_code == 200 and post.json()["currentRound"] == 1, post.text
    done = wait_status(client, wid, "completed", "failed", timeout=240)
    assert done["status"] == "completed" and publisher.runs == before
    messages = items(client, wid)
    refused = next(m for m in messages if m["metadata"].get("taskId") == "t2")
    assert refused["metadata"]["failed"] and refused["metadata"]["notApproved"]
    assert refused["metadata"]["error"] == "you did not approve it: No, not on the wiki."
    assert refused["content"] == "Task 2/3 (publisher) failed: you did not approve it: No, not on the wiki."
    assert any(m["role"] == "user" and m["content"] == "No, not on the wiki." for m in messages)
    # A failed task like any other: the manager revised the plan, told why the task failed.
    [revision] = [m for m in messages if m["metadata"].get("revision")]
    assert "task t2 failed (you did not approve it: No, not on the wiki)" in revision["metadata"]["revision"]["why"]
    asked = [r for r in model.requests if r.purpose == "plan" and "not on the wiki" in str(r.messages)]
    assert asked and "Task t2 failed: you did not approve it: No, not on the wiki." in str(asked[-1].messages)
    assert next(m for m in messages if m["metadata"].get("taskId") == "t3-r1")["content"].endswith("Done by writer.")
    logs = [e["message"] for e in items(client, wid, "logs")]
    assert "Task t2 rejected by user: it is not run and fails with the user's reason" in logs
    assert any(text.startswith("Work plan revised (1 of at most 2)") for text in logs)
    assert logs[-1] == "Workflow completed: 2 of 3 planned tasks delivered"


def test_a_rejection_without_a_reason_says_the_user_did_not_approve_it(client: httpx.Client, agents: Any) -> None:
    _, _, model, _ = agents
    model.revisions["refuse-bare"] = plan()  # the revision plans nothing more (else: the same task, asked again)
    status = start(client, model, "refuse-bare", plan(task("t1", "publisher")))
    assert review(client, status["id"], decision="reject").status_code == 200
    done = wait_status(client, status["id"], "completed", "failed", timeout=240)
    assert done["status"] == "failed"  # its only task failed: nothing was delivered
    refused = next(m for m in items(client, status["id"]) if m["metadata"].get("taskId") == "t1")
    assert refused["metadata"]["error"] == "you did not approve it" and refused["metadata"]["failed"]


def test_what_an_agent_prepares_is_shown_stored_and_run_as_approved(client: httpx.Client, agents: Any) -> None:
    _, _, model, mailer = agents
    status = start(client, model, "mail-me", plan(task("t1", "analyst"), task("t2", "mailer", ["t1"])))
    wid, wait = status["id"], status["waitingFor"]
    made = {"to": "team@example.org", "subject": "Draft 1 for t2"}
    assert wait["kind"] == "tool" and wait["tool"]["arguments"] == made and mailer.prepared == 1
    asked = next(m for m in items(client, wid) if m["id"] == wait["messageId"])
    assert asked["metadata"]["approval"]["prepared"] == made and asked["dataStats"]["tokensUsed"] == 7
    assert 'It will be called with: {"to": "team@example.org"' in asked["content"] and mailer.sent == []
    assert review(client, wid, decision="approve", messageId=wait["messageId"]).status_code == 200
    assert wait_status(client, wid, "completed", timeout=240)["status"] == "completed"
    assert mailer.sent == [made] and mailer.prepared == 1  # exactly what was approved; not prepared again
    sent = next(m for m in items(client, wid) if m["metadata"].get("taskId") == "t2")
    assert sent["content"] == 'Sent "Draft 1 for t2".'
    approved = next(m for m in items(client, wid) if m["id"] == wait["messageId"])
    assert approved["metadata"]["approval"]["state"] == "approved" and approved["metadata"]["approval"]["prepared"] == made


def test_an_agent_asks_and_goes_on_with_the_answer(client: httpx.Client, agents: Any) -> None:
    _, clerk, model, _ = agents
    status = start(client, model, "ask-me", plan(task("t1", "clerk"), task("t2", "writer", ["t1"])))
    wid, wait = status["id"], status["waitingFor"]
    assert wait["kind"] == "question" and wait["decisions"] == ["answer", "reject"]
    assert wait["question"] == "Which year do you mean?" and wait["taskId"] == "t1" and wait["agent"] == "clerk"
    asked = next(m for m in items(client, wid) if m["id"] == wait["messageId"])
    assert asked["agentName"] == "clerk" and asked["content"] == "Which year do you mean?"
    assert task_ids(client, wid) == []  # the question is not the task's outcome
    check_error(review(client, wid, decision="approve"), 409, "decision_does_not_fit")
    check_error(review(client, wid, decision="answer"), 400, "answer_required")

    assert review(client, wid, decision="answer", answer="2024").status_code == 200
    assert wait_status(client, wid, "completed", timeout=240)["waitingFor"] is None
    messages = items(client, wid)
    t1 = next(m for m in messages if m["metadata"].get("taskId") == "t1")
    assert t1["content"] == "The figures of 2024." and task_ids(client, wid) == ["t1", "t2"]
    assert clerk.seen[-1] == [("Which year do you mean?", "2024")]
    answered = next(m for m in messages if m["id"] == wait["messageId"])
    assert answered["metadata"]["question"]["state"] == "answered"
    assert answered["metadata"]["question"]["answer"] == "2024"
    assert any(m["role"] == "user" and m["content"] == "2024" for m in messages)


def test_a_chat_post_answers_a_question_and_a_second_question_waits_again(client: httpx.Client,
                                                                          agents: Any) -> None:
    _, _, model, _ = agents
    wid = start(client, model, "ask-twice", plan(task("t1", "clerk")))["id"]
    first = client.get(f"/api/workflows/{wid}/status").json()["waitingFor"]
    assert client.post("/api/workflows/start", params={"id": wid}, json={"prompt": "ask again"}).status_code == 200
    second = wait_for(lambda: (s := client.get(f"/api/workflows/{wid}/status").json())["status"] == "waiting"
                      and s["waitingFor"]["messageId"] != first["messageId"] and s, 240, "the second question")
    assert second["waitingFor"]["question"] == "Which month, then?"
    assert review(client, wid, decision="answer", answer="March").status_code == 200
    wait_status(client, wid, "completed", timeout=240)
    assert next(m for m in items(client, wid) if m["metadata"].get("taskId") == "t1")["content"] == \
        "The figures of March."


def test_rejecting_a_question_stops_the_round(client: httpx.Client, agents: Any) -> None:
    _, _, model, _ = agents
    wid = start(client, model, "ask-reject", plan(task("t1", "clerk")))["id"]
    answer = review(client, wid, decision="reject", feedback="Never mind.")
    assert answer.status_code == 200 and answer.json()["status"] == "stopped"
    last = items(client, wid, "logs")[-1]
    assert last["message"] == "Question rejected by user (task t1): the round stopped" and last["progress"] == 100
    assert task_ids(client, wid) == []


def test_a_real_model_behind_a_built_in_agent_asks_when_offered(client: httpx.Client, agents: Any) -> None:
    _, _, model, _ = agents
    the_plan = plan(task("t1", "analyst"))
    the_plan["objWorkplan"][0]["instructions"] = "Look at the year in question."
    status = start(client, model, "ask-model", the_plan)
    wid, wait = status["id"], status["waitingFor"]
    assert wait["kind"] == "question" and wait["question"] == "Which fiscal year?" and wait["agent"] == "analyst"
    assert review(client, wid, decision="answer", answer="2023").status_code == 200
    wait_status(client, wid, "completed", timeout=240)
    t1 = next(m for m in items(client, wid) if m["metadata"].get("taskId") == "t1")
    assert t1["content"].startswith("The year in question is 2023.")


def test_the_answers_always_reach_the_agent_and_only_task_prose_calls_are_offered_to_ask() -> None:
    from agents.tasks.questions import ASK_USER, asked, asked_task, offer, offering

    spec = TaskSpec(id="t1", agent="analyst", instructions="Sum it up.")
    context = TaskContext(prompt="", language="en", documents={}, predecessors={}, model=ScriptedModel())
    assert asked_task(spec, context) is spec
    context.answers = [("Which year?", "2024")]
    assert asked_task(spec, context).instructions == "Sum it up.\n\nYou asked the user: Which year?\nThe user answered: 2024"
    prose = ModelRequest(purpose="task", messages=[])
    assert offer(prose).tools == ()  # not while no task offers it
    with offering(True):
        assert offer(prose).tools == (ASK_USER,)
        assert offer(ModelRequest(purpose="map", messages=[])).tools == ()
        assert offer(ModelRequest(purpose="task", messages=[], schema={"type": "object"})).tools == ()
    call = lambda **a: ModelResponse(text="", tool_calls=(ToolCall("ask_user", a),))  # noqa: E731
    assert asked(call(question=" Which sheet? ", choices=["Q1", "Q2"])) == "Which sheet? (Q1 / Q2)"
    assert asked(call(question="")) == asked(call(choices=["a"])) == asked(ModelResponse(text="x")) == ""


def test_the_registration_flag_overrides_the_agents_own() -> None:
    registry = Registry()
    registry.add(Clerk(), needs_approval=True)
    registry.add(Publisher(), needs_approval=False)
    assert registry.needs_approval("clerk") and not registry.needs_approval("publisher")
    default = build_registry(entry_points=False)
    assert not any(default.needs_approval(n) for n in default.names())
