"""Agents against a real model: SmolLM2 on a local llama.cpp server (skipped when not installed)."""

from __future__ import annotations

import pytest

from agents.base import Plan, TaskSpec
from agents.registry import build_registry
from agents.tasks.run import run_task, task_context
from app.llm.client import OpenAIModel
from tests.agents.conftest import RecordingModel, load_document

pytestmark = pytest.mark.realmodel


async def test_a_document_longer_than_the_context_is_summarised_by_map_reduce(llama_server: str) -> None:
    doc = load_document("sample-french-1.txt")
    async with OpenAIModel(base_url=llama_server, api_key="none", model="smollm2", timeout=180,
                           max_retries=1, context_tokens=2048) as client:  # the server runs with --n_ctx 2048
        model = RecordingModel(client)
        task = TaskSpec("t1", "summarizer", "Summarise the document.", [doc.name])
        plan = Plan(language="en", answer="", tasks=[task])
        context = task_context(plan, task, prompt="Summarise this.", uploads=[doc], results={}, outputs={}, model=model)
        result = await run_task(build_registry(entry_points=False), task, context)
    purposes = [request.purpose for request, _ in model.calls]
    # The server would refuse any request over its context window; none was refused.
    assert purposes.count("map") >= 2 and purposes[-1] == "reduce"
    assert result.text.strip() and result.offline is False and result.model == "smollm2"
    assert result.usage == model.total() and result.usage.bytes_sent > 0
