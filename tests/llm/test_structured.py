"""Structured output: format fallback remembered per endpoint, parsing, one repair, then failure."""

from __future__ import annotations

import asyncio
from collections.abc import Callable

import pytest

from agents.model import ModelOutputError, ModelRequest
from app.llm.client import OpenAIModel
from tests.openai_stub import Hang, Malformed, OpenAIStub, RejectJsonSchema, Reply, Truncated, response_format_type

PERSON = {
    "type": "object",
    "properties": {"name": {"type": "string"}, "age": {"type": "integer"},
                   "role": {"enum": ["author", "reviewer"]}},
    "required": ["name", "age"],
}
ASK = ModelRequest(purpose="plan", messages=[{"role": "user", "content": "Describe Ada."}],
                   schema=PERSON, schema_name="person")
EXAMPLE = {"name": "stub", "age": 1, "role": "author"}  # the stub's default answer for PERSON
Make = Callable[..., OpenAIModel]


def formats(stub: OpenAIStub) -> list[str]:
    return [response_format_type(body) for body in stub.requests]


async def test_json_schema_is_tried_first_and_parsed(openai_stub: OpenAIStub, make_model: Make) -> None:
    openai_stub.script([Reply({"name": "Ada", "age": 36, "role": "author"}, usage=(20, 9))])
    response = await make_model().complete(ASK)
    assert response.data == {"name": "Ada", "age": 36, "role": "author"}
    sent = openai_stub.requests[0]["response_format"]
    assert sent == {"type": "json_schema",
                    "json_schema": {"name": "person", "schema": PERSON, "strict": False}}
    assert (response.usage.prompt_tokens, response.usage.completion_tokens) == (20, 9)


@pytest.mark.parametrize("status", [400, 500])  # llama-cpp-python's server says 500
async def test_rejected_json_schema_falls_back_and_is_remembered(openai_stub: OpenAIStub,
                                                                 make_model: Make, status: int) -> None:
    openai_stub.reject_formats = {"json_schema"}
    openai_stub.reject_status = status
    model = make_model()
    first = await model.complete(ASK)
    second = await model.complete(ASK)
    assert first.data == second.data == EXAMPLE
    assert formats(openai_stub) == ["json_schema", "json_object", "json_object"]
    assert openai_stub.requests[1]["response_format"]["schema"] == PERSON
    assert first.usage.calls == 2 and second.usage.calls == 1
    assert model.modes == {"stub-model": "json_object"}


async def test_a_server_without_json_modes_gets_the_schema_in_the_prompt(openai_stub: OpenAIStub,
                                                                         make_model: Make) -> None:
    openai_stub.reject_formats = {"json_schema", "json_object"}
    openai_stub.default = lambda body: EXAMPLE  # a plain-text request gets no schema default
    model = make_model()
    await model.complete(ASK)
    response = await model.complete(ASK)
    assert formats(openai_stub) == ["json_schema", "json_object", "text", "text"]
    assert response.data == EXAMPLE
    # The schema goes into the system message, before the user's turn, never after it.
    sent = openai_stub.requests[-1]["messages"]
    assert sent[0]["role"] == "system" and '"required":["name","age"]' in sent[0]["content"]
    assert sent[-1] == {"role": "user", "content": "Describe Ada."}


async def test_a_one_off_rejection_is_not_retried_as_transient(openai_stub: OpenAIStub,
                                                               make_model: Make) -> None:
    openai_stub.script([RejectJsonSchema(500)])
    response = await make_model().complete(ASK)
    assert formats(openai_stub) == ["json_schema", "json_object"]
    assert response.data == EXAMPLE


async def test_fences_and_chatter_around_the_json_are_tolerated(openai_stub: OpenAIStub,
                                                                make_model: Make) -> None:
    openai_stub.script([Reply('Sure! Here it is:\n```json\n{"name": "Ada", "age": 36}\n```\nAnything else?')])
    response = await make_model().complete(ASK)
    assert response.data == {"name": "Ada", "age": 36}
    assert len(openai_stub.requests) == 1


@pytest.mark.parametrize("broken", [Malformed(), Truncated(), Reply({"name": "Ada", "age": "old"})],
                         ids=["malformed", "truncated", "invalid"])
async def test_bad_output_gets_one_repair_request(openai_stub: OpenAIStub, make_model: Make,
                                                  broken: object) -> None:
    openai_stub.script([broken, Reply({"name": "Ada", "age": 36})])
    response = await make_model().complete(ASK)
    assert response.data == {"name": "Ada", "age": 36}
    assert response.usage.calls == 2
    repair = openai_stub.requests[1]["messages"]
    assert repair[-2]["role"] == "assistant"
    assert "did not match the required JSON schema" in repair[-1]["content"]
    assert formats(openai_stub) == ["json_schema", "json_schema"]


async def test_repair_names_the_precise_errors(openai_stub: OpenAIStub, make_model: Make) -> None:
    openai_stub.script([Reply({"age": "old", "role": "boss"}), Reply({"name": "Ada", "age": 3})])
    await make_model().complete(ASK)
    feedback = openai_stub.requests[1]["messages"][-1]["content"]
    assert "$: missing required property 'name'" in feedback
    assert "$.age: expected integer, got string" in feedback
    assert '$.role: must be one of "author", "reviewer", got "boss"' in feedback


async def test_still_invalid_after_repair_is_an_output_error(openai_stub: OpenAIStub,
                                                             make_model: Make) -> None:
    openai_stub.script([Malformed(), Truncated(), Reply("never asked")])
    with pytest.raises(ModelOutputError, match="invalid person output") as caught:
        await make_model().complete(ASK)
    assert len(openai_stub.requests) == 2
    assert caught.value.usage.calls == 2
    assert caught.value.usage.total_tokens == sum(openai_stub.usage_total)
    assert "cut off at the token limit" not in openai_stub.requests[1]["messages"][-1]["content"]


async def test_truncation_is_named_in_the_repair(openai_stub: OpenAIStub, make_model: Make) -> None:
    openai_stub.script([Truncated(), Reply({"name": "Ada", "age": 36})])
    await make_model().complete(ASK)
    assert "cut off at the token limit" in openai_stub.requests[1]["messages"][-1]["content"]


async def test_concurrent_first_calls_share_one_json_schema_probe(openai_stub: OpenAIStub,
                                                                  make_model: Make) -> None:
    openai_stub.reject_formats = {"json_schema"}
    model = make_model()
    answers = await asyncio.gather(*(model.complete(ASK) for _ in range(4)))
    assert all(a.data == EXAMPLE for a in answers)
    # One refused json_schema attempt, then every call in the mode that works.
    assert formats(openai_stub) == ["json_schema"] + ["json_object"] * 4
    assert model.modes == {"stub-model": "json_object"}


async def test_a_stopped_call_closes_its_stream(openai_stub: OpenAIStub, make_model: Make) -> None:
    openai_stub.script([Hang()])
    model = make_model(timeout=30)
    call = asyncio.ensure_future(model.complete(ModelRequest(
        purpose="task", messages=[{"role": "user", "content": "Write a long story."}])))
    assert await openai_stub.until_requests(1)
    assert openai_stub.requests[0]["stream"] is True
    call.cancel()  # what stopping a round does to its model call
    assert await openai_stub.until_disconnected()
    with pytest.raises(asyncio.CancelledError):
        await call
