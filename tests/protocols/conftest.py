"""A live server per protocol test module: the offline model on real documents, except that a round whose
prompt says "[hold] <token>" waits in its first model call until it is stopped."""

from __future__ import annotations

import asyncio
import json
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from agents.model import Model, ModelRequest, ModelResponse
from agents.offline import OfflineModel
from tests.harness import LiveServer, settings_for
from tests.web.conftest import HOLD_TOKEN, KEYS


class HoldingOffline(Model):
    """The offline model; a call that names a "[hold] <token>" not seen before waits until cancelled."""

    name = "offline"
    offline = True
    extractive = True
    can_call_tools = False

    def __init__(self) -> None:
        self.inner = OfflineModel()
        self.context_tokens = self.inner.context_tokens
        self.in_process_below = self.inner.in_process_below
        self._lock = threading.Lock()
        self._seen: set[str] = set()
        self._held: set[str] = set()

    async def complete(self, request: ModelRequest) -> ModelResponse:
        text = json.dumps(request.messages, ensure_ascii=False)
        with self._lock:
            fresh = [t for t in HOLD_TOKEN.findall(text) if t not in self._seen]
            self._seen.update(fresh)
            self._held.update(fresh)
        if fresh:
            try:
                await asyncio.Event().wait()  # until the round is stopped
            finally:
                with self._lock:
                    self._held.difference_update(fresh)
        return await self.inner.complete(request)

    def holding(self, token: str) -> bool:
        with self._lock:
            return token in self._held


@pytest.fixture(scope="module")
def model() -> HoldingOffline:
    return HoldingOffline()


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory, module_database_url: str,  # noqa: F811
           model: HoldingOffline) -> Iterator[LiveServer]:
    """Keys k1 (user 1) and k2 (user 2) of mandate 1."""
    tmp = Path(tmp_path_factory.mktemp("protocols"))
    with LiveServer(settings_for(tmp, module_database_url, api_keys=KEYS), model) as live:
        yield live
