"""OpenAIModel against a real llama.cpp server running SmolLM2 (135M), on 127.0.0.1."""

from __future__ import annotations

import pytest

from agents.model import ModelOutputError, ModelRequest
from app.llm.client import OpenAIModel
from app.llm.jsonschema import validate

pytestmark = pytest.mark.realmodel

CITY = {
    "type": "object",
    "properties": {"city": {"type": "string"}, "country": {"type": "string"},
                   "population_millions": {"type": "number"}},
    "required": ["city", "country"],
}


async def test_structured_output_round_trip(llama_server: str) -> None:
    request = ModelRequest(
        purpose="task", schema=CITY, schema_name="city", max_tokens=120,
        messages=[{"role": "user", "content": "Give the capital of France as JSON with the "
                                              "fields city, country and population_millions."}])
    async with OpenAIModel(base_url=llama_server, api_key="none", model="smollm2",
                           timeout=120, max_retries=1) as model:
        try:
            response = await model.complete(request)
        except ModelOutputError as error:  # a 135M model may still answer badly: fail clearly
            pytest.fail(f"the real model gave invalid output, usage {error.usage}: {error}")
        # llama-cpp-python has no json_schema mode; json_object with a schema is its grammar.
        assert model.modes == {"smollm2": "json_object"}
        again = await model.complete(request)
    assert validate(response.data, CITY) == [] and validate(again.data, CITY) == []
    assert response.usage.prompt_tokens > 0 and response.usage.completion_tokens > 0
    assert response.usage.bytes_sent > 0 and response.usage.bytes_received > 0
    assert response.usage.calls >= 2 and again.usage.calls == 1  # the refused json_schema try counts


async def test_plain_text_round_trip(llama_server: str) -> None:
    async with OpenAIModel(base_url=llama_server, api_key="none", model="smollm2", timeout=120,
                           max_tokens=20) as model:
        response = await model.complete(ModelRequest(
            purpose="task", messages=[{"role": "user", "content": "Say hello."}]))
    assert response.text.strip() and response.data is None
    assert response.usage.completion_tokens > 0
