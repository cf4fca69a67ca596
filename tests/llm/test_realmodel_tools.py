"""Tool calls against a real llama.cpp server running Qwen2.5-Coder-0.5B (llama-cpp-python's server,
the model's own chat template): forced, the server's grammar makes the call and streams it in
`delta.tool_calls` (repeating the name in every piece). Under "auto" the model writes the call as its
answer's text, which the client reads back as the call: 5 of 6 answers to this request asked, the
sixth made up a tool with other arguments (2026-11-26), too few to assert on; the stub's tests cover
the text forms (`tests/llm/test_tool_calls.py`)."""

from __future__ import annotations

import pytest

from agents.model import ModelRequest
from agents.tasks.questions import ASK_USER, asked
from app.llm.client import OpenAIModel
from tests.realmodel import LlamaServer

pytestmark = pytest.mark.realmodel

SYSTEM = ("You are an analyst. Answer from the documents. Documents: sales.xlsx has the sheets FY2022, FY2023 "
          "and FY2024, each with the revenue per quarter.")


def request(choice: str) -> ModelRequest:
    return ModelRequest(purpose="task", tools=(ASK_USER,), tool_choice=choice, max_tokens=150,
                        messages=[{"role": "system", "content": SYSTEM},
                                  {"role": "user", "content": "Give me the revenue figures for the fiscal year."}])


async def test_a_forced_call_to_ask_user_comes_back_as_the_call(qwen_server: LlamaServer) -> None:
    async with OpenAIModel(base_url=qwen_server.base_url, api_key="none", model="qwen", timeout=300,
                           max_retries=1) as model:
        response = await model.complete(request("ask_user"))
    assert [c.name for c in response.tool_calls] == ["ask_user"], (response.text, response.tool_calls)
    assert asked(response).strip() and response.text == ""
