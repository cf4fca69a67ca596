"""Shared parts of the benchmarks: a scripted model with a fixed delay, a runtime on a temp dir."""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from app.model import ModelRequest, ModelResponse, Usage  # noqa: E402


class DelayedModel:
    """Answers every call after `delay` seconds: plans of `tasks` independent tasks, short texts."""

    name = "bench"
    offline = False

    def __init__(self, tasks: int = 5, delay: float = 0.0) -> None:
        self.delay = delay
        self.plan = {
            "userLanguage": "en", "objUserResponse": "On it.", "objFinalDocuments": [],
            "objWorkplan": [{"id": f"t{i}", "agent": "analyst", "instructions": f"Check point {i}.", "inputs": [],
                             "outputs": [], "dependsOn": []} for i in range(1, tasks + 1)],
        }

    async def complete(self, request: ModelRequest) -> ModelResponse:
        if self.delay:
            await asyncio.sleep(self.delay)  # the provider's latency, simulated
        usage = Usage(prompt_tokens=10, completion_tokens=5, calls=1)
        if request.purpose in ("plan", "repair"):
            return ModelResponse(text=json.dumps(self.plan), data=self.plan, usage=usage, model=self.name)
        return ModelResponse(text="Checked.", usage=usage, model=self.name)


def median(values: list[float]) -> float:
    ordered = sorted(values)
    mid = len(ordered) // 2
    return ordered[mid] if len(ordered) % 2 else (ordered[mid - 1] + ordered[mid]) / 2
