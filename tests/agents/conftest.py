"""Fixtures for the agents tests: a recording model, a round in memory and corpus documents (the scripted
model is `tests.scripted`)."""

from __future__ import annotations

import functools
from dataclasses import dataclass, field
from datetime import UTC, datetime

import pytest

from agents.base import DocumentText, OutputFile, Plan, TaskContext, TaskResult, TaskSpec
from agents.model import Model, ModelRequest, ModelResponse, Usage
from agents.planning.as_flow import run_plan
from agents.planning.manager import PlanOutcome, RoundInput, make_plan
from agents.planning.review import FinalOutcome, write_final
from agents.registry import Registry
from agents.tasks.run import run_task, task_context
from tests.corpus import CORPUS


class RecordingModel(Model):
    """Passes every request to another model and keeps each request and response."""

    def __init__(self, inner: Model) -> None:
        self.inner = inner
        self.name = inner.name
        self.offline = inner.offline
        self.extractive = inner.extractive
        self.can_call_tools = inner.can_call_tools
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
class Outcome:
    """A task's outcome as the scheduler sees it."""

    result: TaskResult | None
    ok: bool = field(init=False)
    tokens: int = field(init=False)

    def __post_init__(self) -> None:
        self.ok = self.result is not None
        self.tokens = self.result.usage.total_tokens if self.result else 0


@dataclass
class Round:
    """Everything one round produced, as the round engine would see it."""

    plan: PlanOutcome
    results: dict[str, TaskResult | None]
    skipped: dict[str, str]
    errors: dict[str, BaseException]
    final: FinalOutcome
    order: list[str] = field(default_factory=list)  # task ids in the order they started

    @property
    def files(self) -> dict[str, OutputFile]:
        return {f.name: f for r in self.results.values() if r for f in r.files}

    def by_agent(self, agent: str) -> list[TaskResult]:
        return [self.results[t.id] for t in self.plan.plan.tasks
                if t.agent == agent and self.results.get(t.id) is not None]


async def play_round(prompt: str, documents: list[DocumentText], model: Model, registry: Registry,
                     history: list[tuple[str, str]] | None = None) -> Round:
    """A round in memory, made of the engine's own parts: the plan, the scheduling loop
    (`run_plan`), what a task sees (`task_context`) and the final message; output files become
    documents the way the service extracts them."""
    inp = RoundInput(prompt=prompt, documents=documents, history=list(history or []))
    outcome = await make_plan(inp, model, registry)
    plan: Plan = outcome.plan
    errors: dict[str, BaseException] = {}
    order: list[str] = []

    async def run(task: TaskSpec, dependencies: dict[str, Outcome]) -> Outcome:
        order.append(task.id)
        delivered = {d: o.result for d, o in dependencies.items() if o.result is not None}
        context = task_context(plan, task, prompt=prompt, uploads=documents, results=delivered,
                               outputs={d: [doc for f in r.files if (doc := output_document(f))]
                                        for d, r in delivered.items()},
                               model=model, history=inp.history)
        try:
            return Outcome(await run_task(registry, task, context))
        except Exception as exc:  # the engine logs it and goes on
            errors[task.id] = exc
            return Outcome(None)

    async def skip(task: TaskSpec, reason: str) -> None:
        pass

    outcomes, skipped = await run_plan(plan, run, skip, concurrency=4)
    results = {tid: o.result for tid, o in outcomes.items()}
    delivered = [f for r in results.values() if r for f in r.files]
    final = await write_final(inp, plan, results, skipped, delivered, model)
    return Round(outcome, results, skipped, errors, final, order)


def output_document(file: OutputFile) -> DocumentText | None:
    """An agent's output as a later task reads it: the file row the engine stores for it, its
    content items as the extractor gives them, and the engine's own rule (`document_text`)
    for what a task sees of a stored file. Only the database and the file store are left out."""
    from app.contract.filenames import split_name
    from app.rounds.documents import document_text
    from app.store.tables import FileRow
    from extractors import extract

    name, ext = split_name(file.name)
    row = FileRow(mandate_id=1, user_id=1, name=name, ext=ext, mime=file.mime, size=len(file.data), sha256="",
                  origin="agent", created_at=datetime.now(UTC))
    extraction = extract(file.data, file.name, mime=file.mime.split(";", 1)[0].strip())
    doc = document_text(row, extraction.items)
    return doc if doc.text.strip() else None


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

    extraction = extract(data, name)
    return DocumentText.of(name, name.rsplit(".", 1)[-1], extraction.mime, len(data), extraction.items)


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


async def offline_answer(question: str, docs: list[DocumentText], language: str,
                         history: list[tuple[str, str]] | None = None) -> str:
    """What the analyst answers offline to `question` over `docs` (and the conversation's `history`)."""
    from agents.builtin.analyst import Analyst
    from agents.offline import OfflineModel

    result = await Analyst().run(TaskSpec(id="t1", agent="analyst", instructions=question),
                                 TaskContext(prompt=question, language=language, documents={d.name: d for d in docs},
                                             predecessors={}, model=OfflineModel(), history=history or []))
    return result.text
