"""Fixtures for the agents tests: a scripted model, a recording model and corpus documents."""

from __future__ import annotations

import functools
import json
from dataclasses import dataclass, field
from typing import Any

import pytest

from agents.base import DocumentText, OutputFile, Plan, TaskResult
from agents.manager import FinalOutcome, PlanOutcome, RoundInput, make_plan, write_final
from agents.model import Model, ModelRequest, ModelResponse, Usage
from agents.plan import schedule
from agents.registry import Registry
from agents.runner import run_task, task_context
from tests.corpus import CORPUS


class ScriptedModel(Model):
    """Answers with queued responses (dicts become JSON data, exceptions are raised) and records
    every request."""

    name = "scripted"
    offline = False

    def __init__(self, *answers: Any, usage: Usage = Usage(prompt_tokens=100, completion_tokens=20, calls=1)) -> None:
        self.answers = list(answers)
        self.requests: list[ModelRequest] = []
        self.usage = usage

    async def complete(self, request: ModelRequest) -> ModelResponse:
        self.requests.append(request)
        if not self.answers:
            raise AssertionError(f"unexpected model call: {request.purpose}")
        answer = self.answers.pop(0)
        if isinstance(answer, Exception):
            raise answer
        if isinstance(answer, (dict, list)):
            return ModelResponse(text=json.dumps(answer), data=answer, usage=self.usage, model=self.name)
        return ModelResponse(text=str(answer), usage=self.usage, model=self.name)


class RecordingModel(Model):
    """Passes every request to another model and keeps each request and response."""

    def __init__(self, inner: Model) -> None:
        self.inner = inner
        self.name = inner.name
        self.offline = inner.offline
        self.context_tokens = inner.context_tokens
        self.calls: list[tuple[ModelRequest, ModelResponse]] = []

    def model_for(self, agent: str | None) -> str:
        return self.inner.model_for(agent)

    async def complete(self, request: ModelRequest) -> ModelResponse:
        response = await self.inner.complete(request)
        self.calls.append((request, response))
        return response

    def total(self) -> Usage:
        total = Usage()
        for _, response in self.calls:
            total = total + response.usage
        return total


@dataclass
class Round:
    """Everything one round produced, as the round engine would see it."""

    plan: PlanOutcome
    results: dict[str, TaskResult | None]
    skipped: dict[str, str]
    errors: dict[str, BaseException]
    final: FinalOutcome
    order: list[list[str]] = field(default_factory=list)  # task ids, wave by wave

    @property
    def files(self) -> dict[str, OutputFile]:
        return {f.name: f for r in self.results.values() if r for f in r.files}

    def by_agent(self, agent: str) -> list[TaskResult]:
        return [self.results[t.id] for t in self.plan.plan.tasks
                if t.agent == agent and self.results.get(t.id) is not None]


async def run_round(prompt: str, documents: list[DocumentText], model: Model, registry: Registry,
                    history: list[tuple[str, str]] | None = None) -> Round:
    """A whole round the way the engine drives it: plan, waves of tasks, final message."""
    inp = RoundInput(prompt=prompt, documents=documents, history=list(history or []))
    outcome = await make_plan(inp, model, registry)
    plan: Plan = outcome.plan
    results: dict[str, TaskResult | None] = {}
    skipped: dict[str, str] = {}
    errors: dict[str, BaseException] = {}
    order: list[list[str]] = []
    while True:
        done = {k for k, v in results.items() if v is not None}
        failed = {k for k, v in results.items() if v is None}
        ready, to_skip = schedule(plan, done, failed, set(skipped))
        for task, reason in to_skip:
            skipped[task.id] = reason
        if not ready and not to_skip:
            break
        order.append([t.id for t in ready])
        finished = {k: v for k, v in results.items() if v is not None}
        for task in ready:
            context = task_context(plan, task, prompt=prompt, uploads=documents, results=finished,
                                   model=model, history=inp.history)
            try:
                results[task.id] = await run_task(registry, task, context)
            except Exception as exc:  # the engine logs it and goes on
                results[task.id] = None
                errors[task.id] = exc
    delivered = [f for r in results.values() if r for f in r.files]
    final = await write_final(inp, plan, results, skipped, delivered, model)
    return Round(outcome, results, skipped, errors, final, order)


def load_document(name: str) -> DocumentText:
    """A corpus file as agents see it, extracted the way the round engine extracts uploads."""
    path = CORPUS / name
    if not path.exists():
        pytest.skip(f"corpus file {name} not found beside the repository")
    return _extracted(name)


@functools.cache  # extraction of a long PDF takes seconds; agents never modify documents
def _extracted(name: str) -> DocumentText:
    data = (CORPUS / name).read_bytes()
    from extractors import extract

    from app.documents import document_of

    extraction = extract(data, name)
    return document_of(name, name.rsplit(".", 1)[-1], extraction.mime, len(data), extraction.items)


def text_document(name: str, text: str) -> DocumentText:
    """A plain-text document made in the test."""
    return DocumentText(name=name, ext=name.rsplit(".", 1)[-1], mime="text/plain",
                        size=len(text.encode()), items=[(name, text)])


def squash(text: str) -> str:
    """Whitespace collapsed, to compare quoted text with its source."""
    return " ".join(text.split())


@pytest.fixture
def corpus_doc():
    return load_document
