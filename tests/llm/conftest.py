"""Fixtures for the model-client tests: a loopback-only network and a client on the stub."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from typing import Any

import pytest

from app.llm.client import OpenAIModel
from tests.openai_stub import OpenAIStub, no_remote_network, openai_stub  # noqa: F401 (fixtures)


@pytest.fixture(autouse=True)
def _loopback_only(no_remote_network: None) -> None:
    """Every test here fails loudly if anything dials a host other than 127.0.0.1."""


@pytest.fixture
async def make_model(openai_stub: OpenAIStub) -> AsyncIterator[Callable[..., OpenAIModel]]:
    """Build clients on the stub with test-sized backoff; all are closed after the test."""
    made: list[OpenAIModel] = []

    def make(**overrides: Any) -> OpenAIModel:
        options: dict[str, Any] = dict(base_url=openai_stub.base_url, api_key="test-key",
                                       model="stub-model", timeout=5.0, max_retries=3,
                                       backoff_base=0.01, backoff_max=0.05)
        options.update(overrides)
        model = OpenAIModel(**options)
        made.append(model)
        return model

    yield make
    for model in made:
        await model.aclose()
