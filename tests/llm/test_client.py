"""OpenAIModel against the stub over real HTTP: retries, budgets, timeouts, cancellation, cost."""

from __future__ import annotations

import asyncio
import json
import socket
from collections.abc import Callable

import openai
import pytest
import uvloop

from agents.model import (
    CallScope,
    Model,
    ModelBudgetError,
    ModelError,
    ModelRequest,
)
from app.llm.client import OpenAIModel
from tests.harness import wait_for
from tests.openai_stub import BrokenBody, Drop, Hang, Hold, Linger, OpenAIStub, Reply, Status, StreamError

ASK = ModelRequest(purpose="task", messages=[{"role": "user", "content": "Say hello."}])
Make = Callable[..., OpenAIModel]


async def test_plain_reply_with_cost(openai_stub: OpenAIStub, make_model: Make) -> None:
    openai_stub.script([Reply("hello there", usage=(11, 4))])
    model = make_model()
    assert isinstance(model, Model) and model.offline is False
    response = await model.complete(ASK)
    assert (response.text, response.data, response.model) == ("hello there", None, "stub-model")
    usage = response.usage
    assert (usage.prompt_tokens, usage.completion_tokens, usage.calls) == (11, 4, 1)
    assert usage.seconds > 0
    assert (usage.bytes_sent, usage.bytes_received) == openai_stub.bytes_total
    assert usage.bytes_sent > 0 and usage.bytes_received > 0


async def test_a_request_is_the_one_the_sdks_own_post_sends(openai_stub: OpenAIStub, make_model: Make) -> None:
    """The request built once and copied per call carries what the SDK's `post` would send: the
    same path, headers (key, user agent, platform) and body, call after call."""
    model = make_model()
    for _ in range(2):
        assert (await model.complete(ASK)).text
    body = openai_stub.records[-1]
    payload = json.dumps(body.body).encode()
    stream = await model._client.post("/chat/completions", content=payload, cast_to=object, stream=True,
                                      stream_cls=openai.AsyncStream[object])
    async for _chunk in stream:
        pass
    ours, sdks = openai_stub.records[-2], openai_stub.records[-1]
    assert ours.path == sdks.path and ours.body == sdks.body
    assert ours.headers["authorization"] == "Bearer test-key"
    assert {k: v for k, v in ours.headers.items() if k != "content-length"} == \
        {k: v for k, v in sdks.headers.items() if k != "content-length"}


async def test_429_then_success_counts_both_calls(openai_stub: OpenAIStub, make_model: Make) -> None:
    openai_stub.script([Status(429, retry_after=0), Reply("ok", usage=(5, 2))])
    response = await make_model().complete(ASK)
    assert response.text == "ok"
    assert len(openai_stub.requests) == 2
    assert response.usage.calls == 2
    assert (response.usage.prompt_tokens, response.usage.completion_tokens) == openai_stub.usage_total
    assert (response.usage.bytes_sent, response.usage.bytes_received) == openai_stub.bytes_total


async def test_dropped_connection_and_garbage_body_are_retried(openai_stub: OpenAIStub,
                                                               make_model: Make) -> None:
    openai_stub.script([Drop(), BrokenBody(), Status(502), Reply("fine")])
    response = await make_model().complete(ASK)
    assert response.text == "fine"
    assert response.usage.calls == 4 == len(openai_stub.requests)


async def test_500s_stop_when_the_round_budget_is_spent(openai_stub: OpenAIStub,
                                                        make_model: Make) -> None:
    openai_stub.script([Status(500)] * 20)
    model = make_model(max_retries=10)
    with CallScope.entered(retries=2) as scope, pytest.raises(ModelBudgetError) as caught:
        await model.complete(ASK)
    assert scope.budget is not None and scope.budget.retries_left == 0
    assert len(openai_stub.requests) == 3  # the first try and two retries
    assert caught.value.usage.calls == 3
    assert CallScope.current().budget is None


async def test_budget_is_shared_by_tasks_of_one_round(openai_stub: OpenAIStub, make_model: Make) -> None:
    openai_stub.script([Status(503)] * 20)
    model = make_model(max_retries=10)
    with CallScope.entered(retries=3):
        results = await asyncio.gather(*(model.complete(ASK) for _ in range(3)), return_exceptions=True)
    assert all(isinstance(r, ModelError) for r in results)
    assert len(openai_stub.requests) == 3 + 3  # three first tries, three retries between them


async def test_retries_per_call_are_bounded_without_a_budget(openai_stub: OpenAIStub,
                                                            make_model: Make) -> None:
    openai_stub.script([Status(500)] * 10)
    with pytest.raises(ModelError, match="after 3 attempts") as caught:
        await make_model(max_retries=2).complete(ASK)
    assert not isinstance(caught.value, ModelBudgetError)
    assert len(openai_stub.requests) == 3


@pytest.mark.parametrize("status", [400, 401, 403, 404])
async def test_client_errors_are_not_retried(openai_stub: OpenAIStub, make_model: Make, status: int) -> None:
    openai_stub.script([Status(status, message="nope"), Reply("never")])
    with pytest.raises(ModelError, match=f"HTTP {status}: nope") as caught:
        await make_model().complete(ASK)
    assert len(openai_stub.requests) == 1
    assert caught.value.usage.calls == 1 and caught.value.usage.bytes_received > 0


async def test_a_hang_past_the_timeout_fails_clearly(openai_stub: OpenAIStub, make_model: Make) -> None:
    openai_stub.script([Hang(), Hang()])
    with pytest.raises(ModelError, match="no answer within 0.2s") as caught:
        await make_model(timeout=0.2, max_retries=1).complete(ASK)
    assert len(openai_stub.requests) == 2 and caught.value.usage.calls == 2
    assert openai_stub.wait_disconnected(5)


async def test_a_hang_then_an_answer_succeeds(openai_stub: OpenAIStub, make_model: Make) -> None:
    openai_stub.script([Hang(), Reply("late but fine")])
    # Long enough that the real answer fits on a loaded machine; the hang still times out.
    response = await make_model(timeout=1.5).complete(ASK)
    assert response.text == "late but fine" and response.usage.calls == 2


async def test_an_error_the_server_sends_mid_answer_fails_the_call_with_its_message(
        openai_stub: OpenAIStub, make_model: Make) -> None:
    openai_stub.script([StreamError("This model's maximum context length is 4096 tokens", code=400)])
    with pytest.raises(ModelError, match="reported an error while answering: This model's maximum context length"):
        await make_model().complete(ASK)
    assert len(openai_stub.requests) == 1  # a client error is not retried


async def test_a_server_error_sent_mid_answer_is_retried(openai_stub: OpenAIStub, make_model: Make) -> None:
    openai_stub.script([StreamError("engine overloaded", code=503), Reply("second time lucky")])
    response = await make_model().complete(ASK)
    assert response.text == "second time lucky" and response.usage.calls == 2


async def test_calls_reuse_one_connection(openai_stub: OpenAIStub, make_model: Make) -> None:
    model = make_model()
    for n in range(3):
        assert (await model.complete(ASK)).text
    # Each answer was read to the end of its body, so the next call found the connection free.
    assert len({r.client_port for r in openai_stub.records}) == 1 and openai_stub.open_connections == 1


async def test_an_answer_whose_body_stays_open_after_done_is_kept(openai_stub: OpenAIStub,
                                                                  make_model: Make) -> None:
    openai_stub.script([Linger("complete answer"), Reply("next")])
    model = make_model(timeout=30)
    assert (await model.complete(ASK)).text == "complete answer"  # not a timeout 30 s later
    assert await openai_stub.until_disconnected(5)  # that connection was closed, not reused
    assert (await model.complete(ASK)).text == "next"
    assert openai_stub.records[0].client_port != openai_stub.records[1].client_port


async def test_cancelling_the_caller_closes_the_connection(openai_stub: OpenAIStub,
                                                           make_model: Make) -> None:
    openai_stub.script([Hold()])
    task = asyncio.create_task(make_model().complete(ASK))
    assert await openai_stub.until_requests(1)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert await openai_stub.until_disconnected(5)
    assert openai_stub.records[0].disconnected


async def test_a_held_request_answers_when_released(openai_stub: OpenAIStub, make_model: Make) -> None:
    openai_stub.script([Hold(then="released")])
    task = asyncio.create_task(make_model().complete(ASK))
    assert await openai_stub.until_requests(1)
    openai_stub.release()
    assert (await task).text == "released"


async def test_agent_models_pick_the_served_model(openai_stub: OpenAIStub, make_model: Make) -> None:
    model = make_model(agent_models={"writer": "big-model"})
    await model.complete(ModelRequest(purpose="task", messages=ASK.messages, agent="writer"))
    await model.complete(ModelRequest(purpose="task", messages=ASK.messages, agent="other"))
    assert [r["model"] for r in openai_stub.requests] == ["big-model", "stub-model"]


async def test_every_request_has_a_bounded_token_count(openai_stub: OpenAIStub, make_model: Make) -> None:
    await make_model(max_tokens=64).complete(ASK)
    await make_model().complete(ModelRequest(purpose="task", messages=ASK.messages, max_tokens=9))
    assert [r.get("max_tokens") for r in openai_stub.requests] == [64, 9]
    assert openai_stub.records[0].headers["authorization"] == "Bearer test-key"


async def test_a_spent_token_budget_stops_further_calls(openai_stub: OpenAIStub, make_model: Make) -> None:
    openai_stub.script([Reply("one", usage=(30, 10))])
    model = make_model()
    with CallScope.entered(retries=5, tokens=40) as scope:
        await model.complete(ASK)
        assert scope.budget is not None and scope.budget.tokens_spent == 40
        with pytest.raises(ModelBudgetError, match="token budget"):
            await model.complete(ASK)
    assert len(openai_stub.requests) == 1


async def test_a_refused_connection_is_a_connection_failure_not_a_timeout(make_model: Make) -> None:
    with socket.socket() as closed:  # bound, never listening: connecting is refused
        closed.bind(("127.0.0.1", 0))
        url = f"http://127.0.0.1:{closed.getsockname()[1]}/v1"
        model = make_model(base_url=url, api_key="sk-do-not-show", max_retries=1)
        with pytest.raises(ModelError, match="connection failed: ConnectionRefusedError") as caught:
            await model.complete(ASK)
    assert caught.value.usage.calls == 2 and "sk-do-not-show" not in str(caught.value)


async def test_the_pool_holds_max_connections(openai_stub: OpenAIStub, make_model: Make) -> None:
    openai_stub.script([Hold(then=str(n)) for n in range(5)])
    model = make_model(max_connections=2)
    calls = [asyncio.create_task(model.complete(ASK)) for _ in range(5)]
    assert await openai_stub.until_requests(2)
    openai_stub.release()
    assert sorted(r.text for r in await asyncio.gather(*calls)) == ["0", "1", "2", "3", "4"]
    # Five calls at once on a pool of two: the three later ones waited for a free connection.
    assert len({r.client_port for r in openai_stub.records}) == 2


async def test_closing_the_client_closes_its_connections(openai_stub: OpenAIStub, make_model: Make) -> None:
    model = make_model()
    await asyncio.gather(model.complete(ASK), model.complete(ASK))
    assert openai_stub.open_connections == 2  # kept alive for the next calls
    await model.aclose()
    await asyncio.to_thread(wait_for, lambda: openai_stub.open_connections == 0, 5, "the connections closed")


@pytest.mark.parametrize("loop", [asyncio.new_event_loop, uvloop.new_event_loop], ids=["asyncio", "uvloop"])
@pytest.mark.parametrize("url", ["https://api.openai.com/v1", "http://10.255.255.1:8080/v1"])
def test_the_guard_refuses_remote_providers(url: str, loop: Callable[[], asyncio.AbstractEventLoop]) -> None:
    # uvloop looks names up and connects without the socket module; the service runs on it.
    async def call() -> None:
        async with OpenAIModel(base_url=url, api_key="test-key", model="stub-model", max_retries=0) as model:
            with pytest.raises(ModelError, match="connection failed: OSError: test guard"):
                await model.complete(ASK)

    with asyncio.Runner(loop_factory=loop) as runner:
        runner.run(call())


async def test_agents_size_their_prompts_to_the_configured_context_window() -> None:
    from agents.tasks.calls import context_tokens
    from app.config import from_env
    from app.main import build_model

    env = {"OPENAI_BASE_URL": "http://127.0.0.1:9/v1", "LLM_MODEL": "gpt-4o", "LLM_MODEL_WRITER": "llama-3-8b"}
    known = build_model(from_env(env))
    configured = build_model(from_env({**env, "LLM_CONTEXT_TOKENS": "2048"}))
    try:
        # Without a setting each agent's window is the known size of the model that serves it.
        assert context_tokens(known, "summarizer") == 128_000 and context_tokens(known, "writer") == 8192
        assert context_tokens(configured, "summarizer") == context_tokens(configured, "writer") == 2048
    finally:
        await known.aclose()
        await configured.aclose()
