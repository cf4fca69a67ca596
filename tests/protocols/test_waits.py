"""Rounds that wait for the user (a plan review, an agent's question, a tool call to approve) through
each protocol, with its real client: the `openai` SDK (the completion ends with what the round waits
for; the next turn of the chat answers it), the `mcp` SDK (read_round shows waitingFor, review_round
takes every kind's decisions) and AG-UI (an interrupt, resumed by the next run)."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import openai
import pytest
from ag_ui.core import RunAgentInput

from agents.registry import build_registry
from tests.harness import LiveServer, settings_for, wait_status
from tests.protocols.test_agui import run, run_input
from tests.protocols.test_mcp import connect
from tests.rounds.test_asking import Clerk, PlanPerPrompt, Publisher, plan, task
from tests.web.conftest import KEYS


class Waits:
    def __init__(self, live: LiveServer, model: PlanPerPrompt, clerk: Clerk, publisher: Publisher) -> None:
        self.live, self.model, self.clerk, self.publisher = live, model, clerk, publisher

    def key(self, *tasks: dict[str, Any]) -> str:
        """A word that makes the model plan `tasks` for the request that names it."""
        word = "job" + uuid.uuid4().hex[:12]
        self.model.scripts[word] = plan(*tasks)
        return word

    def chat(self) -> openai.OpenAI:
        return openai.OpenAI(base_url=self.live.url + "/v1", api_key="k1", max_retries=0, timeout=120)


@pytest.fixture(scope="module")
def waits(tmp_path_factory: pytest.TempPathFactory, module_database_url: str) -> Iterator[Waits]:  # noqa: F811
    clerk, publisher, model = Clerk(), Publisher(), PlanPerPrompt()
    registry = build_registry(entry_points=False)
    registry.add(publisher)
    registry.add(clerk)
    settings = settings_for(Path(tmp_path_factory.mktemp("waits")), module_database_url, api_keys=KEYS,
                            agent_questions=True)
    with LiveServer(settings, model, registry) as live:
        yield Waits(live, model, clerk, publisher)


def status(waits: Waits, workflow: str) -> dict[str, Any]:
    with waits.live.client("k1") as rest:
        return rest.get(f"/api/workflows/{workflow}/status").json()


def streamed(chunks: Any) -> tuple[str, list[str | None]]:
    parts = [c for c in chunks if c.choices]
    return "".join(c.choices[0].delta.content or "" for c in parts), [c.choices[0].finish_reason for c in parts]


# OpenAI-compatible chat


def found_again(waits: Waits, history: list[dict[str, Any]], answer: str) -> str:
    """The workflow the conversation's next turn continues, on a process that never saw it (as another
    replica, or after a restart): found from the history, its turns that answered waits included."""
    waits.live.app.state.openai_chat.conversations._known.clear()
    word = waits.key(task("t1", "clerk"))
    turn = [*history, {"role": "assistant", "content": answer}, {"role": "user", "content": f"{word}: and now?"}]
    return waits.chat().chat.completions.with_raw_response.create(model="foreman", messages=turn).headers[
        "x-foreman-workflow"]


def test_openai_a_question_ends_the_completion_and_the_next_turn_answers_it(waits):
    word = waits.key(task("t1", "clerk"))
    chat = waits.chat()
    history: list[dict[str, Any]] = [{"role": "user", "content": f"{word}: the sales report."}]
    first = chat.chat.completions.with_raw_response.create(model="foreman", messages=history)
    workflow = first.headers["x-foreman-workflow"]
    answer = first.parse()
    text = answer.choices[0].message.content
    assert answer.choices[0].finish_reason == "stop"
    assert "**The clerk agent asks (task `t1`):** Which year do you mean?" in text
    assert "Reply with your answer" in text
    assert status(waits, workflow)["waitingFor"]["kind"] == "question"

    history += [{"role": "assistant", "content": text}, {"role": "user", "content": "2024"}]
    stream = chat.chat.completions.with_streaming_response.create(model="foreman", stream=True, messages=history)
    with stream as response:
        assert response.headers["x-foreman-workflow"] == workflow  # the same conversation
        rest, finishes = streamed(response.parse())
    assert "The figures of 2024." in rest and finishes[-1] == "stop"
    assert "Which year" not in rest  # the completion goes on from the answer
    after = status(waits, workflow)
    assert (after["status"], after["currentRound"], after["waitingFor"]) == ("completed", 1, None)  # the same round
    assert found_again(waits, history, rest) == workflow


def test_openai_a_tool_call_waits_streamed_and_a_yes_approves_it(waits):
    word = waits.key(task("t1", "publisher"))
    chat = waits.chat()
    history: list[dict[str, Any]] = [{"role": "user", "content": f"{word}: publish the sales report."}]
    stream = chat.chat.completions.with_streaming_response.create(
        model="foreman", stream=True, stream_options={"include_usage": True}, messages=history)
    with stream as response:
        workflow = response.headers["x-foreman-workflow"]
        chunks = list(response.parse())
    text, finishes = streamed(chunks)
    assert "**The publisher agent waits for your approval to run (task `t1`):**" in text
    assert "`publisher` with the arguments" in text and '"page": "Sales 2024"' in text
    assert "Reply *yes* to approve" in text
    assert finishes[-1] == "stop" and chunks[-1].usage is not None
    assert status(waits, workflow)["status"] == "waiting"  # the completion ended; the round was not stopped
    assert "t1" not in waits.publisher.runs

    history += [{"role": "assistant", "content": text}, {"role": "user", "content": "Yes."}]
    done = chat.chat.completions.with_raw_response.create(model="foreman", messages=history)
    assert done.headers["x-foreman-workflow"] == workflow
    assert "Published the page for t1." in done.parse().choices[0].message.content
    assert status(waits, workflow)["status"] == "completed" and waits.publisher.runs.count("t1") == 1
    assert found_again(waits, history, done.parse().choices[0].message.content) == workflow  # "Yes." left no message


def test_openai_a_plan_review_revised_then_approved_in_the_chat(waits):
    word = waits.key(task("t1", "clerk"))
    chat = waits.chat()
    history: list[dict[str, Any]] = [{"role": "user", "content": f"{word}: the sales report."}]
    first = chat.chat.completions.with_raw_response.create(model="foreman", messages=history,
                                                           metadata={"foreman_review": "plan"})
    workflow = first.headers["x-foreman-workflow"]
    text = first.parse().choices[0].message.content
    assert "**clerk** `t1`" in text and "The plan above waits for your review" in text  # the plan, then how to answer
    waited = status(waits, workflow)["waitingFor"]
    assert waited["kind"] == "plan"

    history += [{"role": "assistant", "content": text}, {"role": "user", "content": "Mention the region too."}]
    second = chat.chat.completions.create(model="foreman", messages=history)  # a revision: a new plan, waiting
    again = status(waits, workflow)["waitingFor"]
    assert again["kind"] == "plan" and again["messageId"] != waited["messageId"]
    assert "The plan above waits for your review" in second.choices[0].message.content

    history += [{"role": "assistant", "content": second.choices[0].message.content},
                {"role": "user", "content": "ok"}]
    third = chat.chat.completions.create(model="foreman", messages=history)  # approved: the clerk asks
    assert "Which year do you mean?" in third.choices[0].message.content
    history += [{"role": "assistant", "content": third.choices[0].message.content},
                {"role": "user", "content": "2019"}]
    fourth = chat.chat.completions.create(model="foreman", messages=history)
    assert "The figures of 2019." in fourth.choices[0].message.content
    assert status(waits, workflow)["status"] == "completed"

    with pytest.raises(openai.BadRequestError) as caught:
        chat.chat.completions.create(model="foreman", messages=[{"role": "user", "content": "Hi"}],
                                     metadata={"foreman_review": "later"})
    assert caught.value.body["code"] == "bad_review_mode"


# MCP


async def test_mcp_review_round_takes_each_kinds_decisions_and_read_round_shows_waiting_for(waits):
    word = waits.key(task("t1", "clerk"))
    async with connect(waits.live) as mcp:
        started = await mcp.call_tool("start_round", {"prompt": f"{word}: the sales report.", "review": "plan"})
        workflow = started.structured_content["workflowId"]
        read = await mcp.call_tool("read_round", {"workflow_id": workflow, "wait_seconds": 60})
        body = read.structured_content
        assert body["status"] == "waiting" and body["waitingFor"]["kind"] == "plan", body
        assert body["waitingFor"]["decisions"] == ["approve", "revise", "edit", "reject"]
        assert "Decide with review_round" in read.content[0].text

        bad = await mcp.call_tool("review_round", {"workflow_id": workflow, "decision": "edit", "plan": {
            "tasks": [task("t1", "nobody")], "finalDocuments": []}})
        assert bad.is_error and "invalid_plan" in bad.content[0].text  # nothing changed
        wrong = await mcp.call_tool("review_round", {"workflow_id": workflow, "decision": "answer", "answer": "x"})
        assert wrong.is_error and "409" in wrong.content[0].text

        revised = await mcp.call_tool("review_round", {"workflow_id": workflow, "decision": "revise",
                                                       "feedback": "Mention the region too."})
        assert not revised.is_error, revised.content
        read = await mcp.call_tool("read_round", {"workflow_id": workflow, "wait_seconds": 60})
        again = read.structured_content["waitingFor"]
        assert again["kind"] == "plan" and again["messageId"] != body["waitingFor"]["messageId"]

        edited = await mcp.call_tool("review_round", {"workflow_id": workflow, "decision": "edit",
                                                      "message_id": again["messageId"], "plan": {
                                                          "tasks": [task("t9", "clerk")], "finalDocuments": []}})
        assert not edited.is_error, edited.content
        read = await mcp.call_tool("read_round", {"workflow_id": workflow, "wait_seconds": 60})
        question = read.structured_content["waitingFor"]
        assert question["kind"] == "question" and question["question"] == "Which year do you mean?"
        assert question["taskId"] == "t9" and question["decisions"] == ["answer", "reject"]

        answered = await mcp.call_tool("review_round", {"workflow_id": workflow, "decision": "answer",
                                                        "answer": "2021"})
        assert not answered.is_error, answered.content
        read = await mcp.call_tool("read_round", {"workflow_id": workflow, "wait_seconds": 60})
        assert read.structured_content["status"] == "completed" and read.structured_content["waitingFor"] is None
        assert any("The figures of 2021." in m["content"] for m in read.structured_content["messages"])

        tool_word = waits.key(task("t1", "publisher"))
        started = await mcp.call_tool("start_round", {"prompt": f"{tool_word}: publish it."})
        other = started.structured_content["workflowId"]
        read = await mcp.call_tool("read_round", {"workflow_id": other, "wait_seconds": 60})
        wait = read.structured_content["waitingFor"]
        assert wait["kind"] == "tool" and wait["tool"]["arguments"] == {"page": "Sales 2024"}
        assert wait["decisions"] == ["approve", "reject"]
        runs = len(waits.publisher.runs)
        # A rejection fails the task with the user's reason, and re-planning may plan the call again,
        # which asks again (at most MAX_REPLANS times): each is refused, the tool never runs, and the
        # round, with nothing delivered, fails.
        for _ in range(4):
            if read.structured_content["status"] != "waiting":
                break
            assert read.structured_content["waitingFor"]["kind"] == "tool"
            rejected = await mcp.call_tool("review_round", {"workflow_id": other, "decision": "reject",
                                                            "feedback": "Not today."})
            assert not rejected.is_error, rejected.content
            read = await mcp.call_tool("read_round", {"workflow_id": other, "wait_seconds": 60})
        assert read.structured_content["status"] == "failed" and read.structured_content["waitingFor"] is None
        assert any("rejected by user" in e["message"] for e in read.structured_content["logs"])
        assert len(waits.publisher.runs) == runs
        bad = await mcp.call_tool("review_round", {"workflow_id": other, "decision": "maybe"})
        assert bad.is_error and "decision must be one of" in bad.content[0].text


# AG-UI


def _resume(thread: str, interrupt_id: str, payload: dict[str, Any]) -> dict[str, Any]:
    body = run_input(thread, "unused")
    body["messages"], body["resume"] = [], [{"interruptId": interrupt_id, "status": "resolved", "payload": payload}]
    RunAgentInput.model_validate(body)
    return body


def test_agui_a_question_and_a_tool_call_are_interrupts_resumed_by_the_next_run(waits):
    thread = "ask-" + uuid.uuid4().hex
    word = waits.key(task("t1", "clerk"), task("t2", "publisher", ["t1"]))
    with waits.live.client("k1") as client:
        first = run(client, run_input(thread, f"{word}: the sales report."))
        assert first[-1].type.value == "RUN_FINISHED" and first[-1].outcome.type == "interrupt"
        [question] = first[-1].outcome.interrupts
        assert question.reason == "agent_question" and question.message == "Which year do you mean?"
        assert question.metadata["kind"] == "question"
        assert question.response_schema["properties"]["decision"]["enum"] == ["answer", "reject"]
        workflow = question.metadata["workflowId"]

        second = run(client, _resume(thread, question.id, {"decision": "answer", "answer": "2020"}))
        assert second[-1].outcome.type == "interrupt"  # the clerk's task ran on; the publisher waits
        assert "The figures of 2020." in "".join(e.delta for e in second if e.type.value == "TEXT_MESSAGE_CONTENT")
        [approval] = second[-1].outcome.interrupts
        assert approval.reason == "tool_approval" and approval.metadata["tool"]["arguments"] == {"page": "Sales 2024"}
        assert approval.response_schema["properties"]["decision"]["enum"] == ["approve", "reject"]

        third = run(client, _resume(thread, approval.id, {"decision": "approve"}))
        assert third[-1].type.value == "RUN_FINISHED" and third[-1].outcome is None
        assert third[-1].result == {"workflowId": workflow, "round": 1}  # the same round, to its end
        assert "Published the page for t2." in "".join(e.delta for e in third
                                                       if e.type.value == "TEXT_MESSAGE_CONTENT")
        assert wait_status(client, workflow, "completed")["status"] == "completed"


def test_a_chat_reply_decides_as_meant_and_a_history_with_answers_continues_its_workflow():
    from app.protocols.chat_waits import continues, reply_decision

    assert reply_decision("plan", "Go ahead!").decision == "approve"
    assert (reply_decision("plan", "No.").decision, reply_decision("plan", "No.").feedback) == ("reject", None)
    assert (reply_decision("plan", "Add a chart.").decision, reply_decision("plan", "Add a chart.").feedback) == (
        "revise", "Add a chart.")
    assert (reply_decision("question", "yes").decision, reply_decision("question", "yes").answer) == ("answer", "yes")
    assert reply_decision("tool", "ok").decision == "approve"
    assert (reply_decision("tool", "Not today.").decision, reply_decision("tool", "Not today.").feedback) == (
        "reject", "Not today.")
    assert continues(["a", "2024"], ["a", "2024"]) and continues(["a", "b"], ["a", "Yes.", "b", "no"])
    assert not continues(["a"], ["a", "something else"]) and not continues(["a", "b"], ["a"])
