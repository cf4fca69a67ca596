"""`OfflineModel`: the `Model` used when no provider is configured."""

from __future__ import annotations

import json
from typing import Any

from agents.model import Model, ModelRequest, ModelResponse, Usage
from agents.offline import work
from agents.offline.planner import plan_offline
from agents.phrases import say
from agents.requests import (
    AnswerHints,
    ExtractHints,
    FinalHints,
    ModelHints,
    PlanHints,
    SummaryHints,
    TranslateHints,
    WriteHints,
)
from agents.toolkit.cpu import off_gil, off_loop
from agents.toolkit.tokens import count_tokens

# A request without hints is read as the kind its purpose names, with nothing said of it.
BY_PURPOSE: dict[str, ModelHints] = {"summary": SummaryHints(), "answer": AnswerHints(), "translate": TranslateHints(),
                                     "extract": ExtractHints(), "write": WriteHints(), "final": FinalHints()}


class OfflineModel(Model):
    """Deterministic, no network: plans by keywords, quotes and extracts from the documents."""

    name = "offline"
    # Above this many characters an answer is milliseconds to seconds of CPU (a summary of a chunk,
    # a quote found in a document): in a worker process. A thread of this process would hold the
    # GIL that long, and every hop of the loop (a poll, a stop) would wait for it.
    in_process_below = 2_000
    offline = True
    extractive = True
    can_call_tools = False

    def __init__(self, context_tokens: int | None = 8192) -> None:
        self.context_tokens = context_tokens  # the budget agents chunk long documents against

    async def complete(self, request: ModelRequest) -> ModelResponse:
        size = sum(len(m.get("content", "")) for m in request.messages)
        return await (off_gil if size >= self.in_process_below else off_loop)(self._complete, request)

    def _complete(self, request: ModelRequest) -> ModelResponse:
        data = self._answer(request)
        text = data if isinstance(data, str) else json.dumps(data, ensure_ascii=False)
        prompt = "\n".join(m.get("content", "") for m in request.messages)
        usage = Usage(prompt_tokens=count_tokens(prompt), completion_tokens=count_tokens(text), calls=1)
        return ModelResponse(text=text, data=None if isinstance(data, str) else data,
                             usage=usage, model=self.name, offline=True)

    def _answer(self, request: ModelRequest) -> str | dict[str, Any]:
        hints = request.hints
        if request.purpose in ("plan", "repair") or isinstance(hints, PlanHints):
            return plan_offline(hints if isinstance(hints, PlanHints) else PlanHints())
        if hints is None:  # asked by its purpose alone
            hints = BY_PURPOSE.get(request.purpose)
        if isinstance(hints, SummaryHints):
            return work.summary(request.purpose, hints)
        if isinstance(hints, AnswerHints):
            return work.answer(request.purpose, hints)
        if isinstance(hints, TranslateHints):
            return work.translate(hints)
        if isinstance(hints, ExtractHints):
            return work.extract(hints)
        if isinstance(hints, WriteHints):
            return work.write(hints)
        if isinstance(hints, FinalHints):
            return work.final(hints)
        # A request this model was not written for (a plug-in's own purpose): say so plainly.
        return say("offline_plan", (hints.language if hints is not None else "") or "en")
