"""A plan's own answer over documents is drawn from their passages, not from their list.

The planning call sees the documents as a catalogue (names, sizes, first sentences), never their
passages. When a model answers a request about them without planning a task, that answer is
written from the catalogue: with Qwen2.5-Coder-0.5B on issue 31's held-out set, 5 of 13 rounds
ended so, and what they said of the documents was not in them. The analyst, which retrieves the
passages, answers from them, cites them and says what it searched when they do not tell, writes
such an answer instead; the model's choice of no task stands (no task is added to the plan).
A general request sent with documents (a name for a bakery) is still answered: the analyst says
the documents do not tell and the user sees what was searched, rather than an invented fact.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from agents.base import Retriever, TaskSpec
from agents.manager import PlanOutcome, RoundInput
from agents.memory import continued_request
from agents.model import Model, current_draft
from agents.notices import unreadable_note
from agents.registry import Registry
from agents.runner import run_task, task_context

ANSWERER = "analyst"


def ungrounded(outcome: PlanOutcome, inp: RoundInput, registry: Registry) -> bool:
    """Whether the plan answers without a task although readable documents came with the request
    (a real model's plan: the offline planner's answer only ever quotes the documents)."""
    return (not outcome.offline and not outcome.plan.tasks and ANSWERER in registry.names()
            and any(not d.problem for d in inp.documents))


async def grounded(outcome: PlanOutcome, inp: RoundInput, model: Model, registry: Registry,
                   retriever: Retriever | None, mark: int | None = None) -> PlanOutcome:
    """The outcome with its answer written by the analyst from the documents' passages, its cost
    added, its citations in `meta`. `mark`: where the plan's streamed answer began in the message's
    draft (`TextSink.mark`); it is taken back, and the analyst's answer streams in its place."""
    sink = current_draft.get()
    if sink is not None and mark is not None:
        sink.retract(mark)
    plan = outcome.plan
    docs = [d for d in inp.documents if not d.problem]
    prompt = continued_request(inp.prompt, inp.previous)
    task = TaskSpec(id="answer", agent=ANSWERER, instructions=prompt, inputs=[d.name for d in docs])
    context = task_context(plan, task, prompt=prompt, uploads=docs, results={}, outputs={}, model=model,
                           history=inp.history, retriever=retriever)
    result = await run_task(registry, task, context)  # as any task: redone once in the wrong language
    note = unreadable_note(inp.documents, plan.language)
    answer = f"{result.text.strip()}\n\n{note}".strip()
    meta: dict[str, Any] = {key: result.meta[key] for key in ("citations", "retrieval") if key in result.meta}
    return replace(outcome, plan=replace(plan, answer=answer), usage=outcome.usage + result.usage,
                   repairs=[*outcome.repairs, "the answer without a task was written from the list of the "
                                              "documents only: the analyst answered from their passages"],
                   meta={**outcome.meta, **meta, "grounded": ANSWERER})
