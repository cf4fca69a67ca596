"""Tool calls through OpenAIModel against the stub over real HTTP: the request's `tools` and
`tool_choice`, streamed `delta.tool_calls` pieces assembled, the `<tool_call>` text form, a server
that refuses tools; and an agent's task offered `ask_user` (AGENT_QUESTIONS) that calls it."""

from __future__ import annotations

from collections.abc import Callable

from agents.base import TaskContext, TaskSpec
from agents.model import CallScope, ModelRequest, Tool, ToolCall
from agents.registry import build_registry
from agents.tasks.questions import ASK_USER, MAX_QUESTIONS
from agents.tasks.run import run_task
from app.llm.client import OpenAIModel
from app.llm.tools import CallPieces
from tests.openai_stub import CallTools, OpenAIStub, RejectTools, Reply

Make = Callable[..., OpenAIModel]
LOOKUP = Tool("lookup", "Look a word up.", {"type": "object", "properties": {"word": {"type": "string"}},
                                            "required": ["word"]})


def asking(*tools: Tool, choice: str = "auto") -> ModelRequest:
    return ModelRequest(purpose="task", messages=[{"role": "user", "content": "Sum up the year."}],
                        tools=tools, tool_choice=choice)


async def test_a_streamed_tool_call_is_assembled_from_its_pieces(openai_stub: OpenAIStub, make_model: Make) -> None:
    arguments = {"question": "Which fiscal year, the one ending in March or in December?", "choices": ["2023", "2024"]}
    openai_stub.script([CallTools((("ask_user", arguments), ("lookup", {"word": "fiscal"})))])
    response = await make_model().complete(asking(ASK_USER, LOOKUP))
    assert response.tool_calls == (ToolCall("ask_user", arguments, "call_0"), ToolCall("lookup", {"word": "fiscal"},
                                                                                        "call_1"))
    assert (response.text, response.finish_reason) == ("", "tool_calls")
    body = openai_stub.requests[-1]
    assert [t["function"]["name"] for t in body["tools"]] == ["ask_user", "lookup"]
    assert body["tools"][0] == {"type": "function", "function": {
        "name": "ask_user", "description": ASK_USER.description, "parameters": dict(ASK_USER.parameters)}}
    assert body["tool_choice"] == "auto"
    assert response.usage.completion_tokens > 0  # the call's arguments are what the model wrote


async def test_text_and_a_call_in_one_answer(openai_stub: OpenAIStub, make_model: Make) -> None:
    openai_stub.script([CallTools((("lookup", {"word": "year"}),), content="Let me look that up.")])
    response = await make_model().complete(asking(LOOKUP))
    assert response.text == "Let me look that up." and [c.name for c in response.tool_calls] == ["lookup"]


async def test_a_tool_named_as_the_choice_is_forced(openai_stub: OpenAIStub, make_model: Make) -> None:
    openai_stub.script([CallTools((("ask_user", {"question": "Which year?"}),))])
    await make_model().complete(asking(ASK_USER, choice="ask_user"))
    assert openai_stub.requests[-1]["tool_choice"] == {"type": "function", "function": {"name": "ask_user"}}


async def test_a_request_without_tools_sends_none(openai_stub: OpenAIStub, make_model: Make) -> None:
    response = await make_model().complete(asking())
    assert response.tool_calls == () and response.text == "stub reply"
    assert "tools" not in openai_stub.requests[-1] and "tool_choice" not in openai_stub.requests[-1]


async def test_calls_written_as_text_are_read_for_offered_tools_only(openai_stub: OpenAIStub,
                                                                     make_model: Make) -> None:
    """llama-cpp-python's server renders the tools into Qwen's template and sends the `<tool_call>`
    block the model writes back as content: it is a call, and no part of the answer's text."""
    openai_stub.script([CallTools((("ask_user", {"question": "Which sheet?"}),), content="Hm. ", as_text="tagged"),
                        CallTools((("lookup", {"word": "x"}),), as_text="tagged"),
                        CallTools((("ask_user", {"question": "Which year?"}),), as_text="bare"),
                        CallTools((("ask_user", {"question": "Which year?"}),), content="So: ", as_text="bare"),
                        Reply('{"name": "ask_user", "arguments": {"question": "Which quarter?"'),
                        Reply('```json\n{"name": "get_revenue", "arguments": {"question": "Which year?", '
                              '"choices": ["2023"]}}\n```'),
                        Reply('```json\n{"name": "get_revenue", "arguments": {"year": 2023}}\n```'),
                        Reply('{"name": "ask_user", "arguments": {}}')])
    model = make_model()
    response = await model.complete(asking(ASK_USER))
    assert response.tool_calls == (ToolCall("ask_user", {"question": "Which sheet?"}),) and response.text == "Hm."
    other = await model.complete(asking(ASK_USER))  # `lookup` was not offered: its block stays text
    assert other.tool_calls == () and other.text.startswith("<tool_call>")
    bare = await model.complete(asking(ASK_USER))  # Qwen2.5's tags are special tokens the server leaves out
    assert bare.tool_calls == (ToolCall("ask_user", {"question": "Which year?"}),) and bare.text == ""
    inside = await model.complete(asking(ASK_USER))  # a bare object is a call only as the whole answer
    assert inside.tool_calls == () and inside.text.startswith("So: {")
    cut = await model.complete(asking(ASK_USER))  # a small model may leave out the last braces
    assert cut.tool_calls == (ToolCall("ask_user", {"question": "Which quarter?"}),)
    made_up = await model.complete(asking(ASK_USER))  # the one tool offered, its arguments under another name
    assert made_up.tool_calls == (ToolCall("ask_user", {"question": "Which year?", "choices": ["2023"]}),)
    unfit = await model.complete(asking(ASK_USER))  # ... but not arguments that do not fit it
    assert unfit.tool_calls == () and unfit.text.startswith("```json")
    plain = await model.complete(asking())  # nothing offered: an answer that looks like a call is text
    assert plain.tool_calls == () and plain.text == '{"name": "ask_user", "arguments": {}}'


def test_a_calls_name_is_the_first_its_pieces_give() -> None:
    """llama-cpp-python repeats a forced call's name in every streamed piece; OpenAI names it once."""
    pieces = CallPieces()
    for part in ('{"question": ', '"Which year?"}'):
        pieces.feed([{"index": 0, "id": "call_1", "function": {"name": "ask_user", "arguments": part}}])
    assert pieces.calls() == [ToolCall("ask_user", {"question": "Which year?"}, "call_1")]


async def test_a_server_that_refuses_tools_is_asked_without_them_from_then_on(openai_stub: OpenAIStub,
                                                                               make_model: Make) -> None:
    openai_stub.script([RejectTools(), Reply("The year was good.")])
    model = make_model()
    with CallScope.entered(retries=0):  # no retry is spent on it: the same call, without what was refused
        response = await model.complete(asking(ASK_USER))
        assert response.text == "The year was good." and response.tool_calls == ()
        assert await model.complete(asking(ASK_USER))
    first, again, later = openai_stub.requests
    assert "tools" in first and "tools" not in again and "tools" not in later
    assert first["messages"] == again["messages"]


def _task_context(model: OpenAIModel, answers: list[tuple[str, str]] | None = None) -> TaskContext:
    context = TaskContext(prompt="Sum up the year.", language="en", documents={}, predecessors={}, model=model,
                          answers=list(answers or []))
    context.may_ask = True
    return context


async def test_a_task_whose_model_calls_ask_user_waits_with_the_question(openai_stub: OpenAIStub,
                                                                         make_model: Make) -> None:
    """The writer's call carries `ask_user`; the call to it ends the task with its question (its
    choices shown), and what the call cost stays the task's."""
    openai_stub.script([CallTools((("ask_user", {"question": "Which year?", "choices": ["2023", "2024"]}),))])
    task = TaskSpec(id="t1", agent="writer", instructions="Write a short note on the year.")
    result = await run_task(build_registry(entry_points=False), task, _task_context(make_model()))
    assert result.question == "Which year? (2023 / 2024)" and result.text == ""
    assert result.usage.calls == 1 and result.usage.completion_tokens > 0
    body = openai_stub.requests[-1]
    assert [t["function"]["name"] for t in body["tools"]] == ["ask_user"]


async def test_the_answers_reach_the_task_and_a_fourth_question_is_not_offered(openai_stub: OpenAIStub,
                                                                               make_model: Make) -> None:
    task = TaskSpec(id="t1", agent="writer", instructions="Write a short note on the year.")
    registry = build_registry(entry_points=False)
    result = await run_task(registry, task, _task_context(make_model(), [("Which year?", "2024")]))
    assert result.question == "" and result.text
    said = str(openai_stub.requests[-1]["messages"])
    assert "You asked the user: Which year?" in said and "The user answered: 2024" in said
    assert "tools" in openai_stub.requests[-1]
    await run_task(registry, task, _task_context(make_model(), [("Which year?", "2024")] * MAX_QUESTIONS))
    assert "tools" not in openai_stub.requests[-1]
    unasked = _task_context(make_model())
    unasked.may_ask = False  # AGENT_QUESTIONS off
    await run_task(registry, task, unasked)
    assert "tools" not in openai_stub.requests[-1]
