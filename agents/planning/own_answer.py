"""A plan's own answer over documents is drawn from their passages, not from their list.

The planning call sees the documents as a catalogue (names, sizes, first sentences), never their
passages. When a model answers a request about them without planning a task, that answer is
written from the catalogue: with Qwen2.5-Coder-0.5B on issue 31's held-out set, 5 of 13 rounds
ended so, and what they said of the documents was not in them. The analyst, which retrieves the
passages, answers from them, cites them and says what it searched when they do not tell, writes
such an answer instead; the model's choice of no task stands (no task is added to the plan).
A request and an answer that name nothing the documents hold and state no figure ("You're welcome!"
to a thank-you, in a conversation about pumps) are not about them: the answer stays the model's
own (Qwen's analyst, given "Thanks, that is all for today!", echoed it above a quoted passage).

A plan with tasks over the documents is no answer yet: its agents have not read them. A reply that
already states a figure or speaks of what the documents hold was written from their list (Qwen, asked
"Why was pump 2 taken out of service?", planned the analyst and replied "because it caused a shortage
of electricity", which the report does not say; the analyst then answered right below it): the plan's
steps are announced in its place (`announced`).
"""

from __future__ import annotations

import logging
from dataclasses import replace
from typing import Any

from agents.base import DocumentText, Retriever, TaskSpec
from agents.knowledge.memory import continued_request
from agents.language import common_words, detect_language, index_terms, query_terms, stems
from agents.model import CallScope, Model
from agents.planning.manager import PlanOutcome, RoundInput
from agents.planning.notices import unreadable_note
from agents.planning.repairs import steps_announced
from agents.registry import Registry
from agents.tasks.run import run_task, task_context
from agents.toolkit.cpu import off_loop_if_long

ANSWERER = "analyst"
log = logging.getLogger("foreman.planner")


async def ungrounded(outcome: PlanOutcome, inp: RoundInput, registry: Registry) -> bool:
    """Whether the plan answers without a task, about the readable documents that came with the
    request (a real model's plan: the offline planner's answer only ever quotes the documents)."""
    docs = [d for d in inp.documents if not d.problem]
    if outcome.offline or outcome.plan.tasks or ANSWERER not in registry.names() or not docs:
        return False
    if any(c.isdigit() for c in outcome.plan.answer):  # a figure: a fact that must come from somewhere
        return True
    text = f"{inp.prompt}\n{outcome.plan.answer}"
    return await off_loop_if_long(sum(len(d.text) for d in docs), speaks_of, text, docs)


async def presumes(outcome: PlanOutcome, inp: RoundInput) -> bool:
    """Whether a real model's plan gives the readable documents to its tasks and its reply already
    says what they hold: a figure, or a word of theirs besides their names."""
    docs = [d for d in inp.documents if not d.problem]
    reading = {name for task in outcome.plan.tasks for name in task.inputs}
    if outcome.offline or not docs or not reading.intersection(d.name for d in docs):
        return False
    reply = outcome.plan.answer
    for doc in docs:
        reply = reply.replace(doc.name, " ")
    if any(c.isdigit() for c in reply):
        return True
    return await off_loop_if_long(sum(len(d.text) for d in docs), speaks_of, reply, docs)


def announced(outcome: PlanOutcome, mark: int | None = None) -> PlanOutcome:
    """The outcome with its reply replaced by the announcement of its steps, in the user's language;
    the reply's streamed draft (from `mark`) is taken back."""
    sink = CallScope.current().draft
    if sink is not None and mark is not None:
        sink.retract(mark)
    note = "the reply spoke of the documents before any agent had read them: it announces the plan's steps instead"
    log.warning("plan repaired (announced): %s", note)
    return replace(outcome, plan=steps_announced(outcome.plan, outcome.plan.language),
                   repairs=[*outcome.repairs, note])


def speaks_of(text: str, docs: list[DocumentText]) -> bool:
    """Whether the text (the request and the answer) names something the documents hold: one of its
    words (stemmed, not a stop word or a common one) or numbers in one of them."""
    languages = list(dict.fromkeys(detect_language(d.text[:4000], default="en") for d in docs))
    wanted = set(query_terms(text, languages)) - set(stems(list(common_words()), languages[0]))
    return any(wanted.intersection(index_terms(d.text, language)) for d in docs for language in languages)


async def grounded(outcome: PlanOutcome, inp: RoundInput, model: Model, registry: Registry,
                   retriever: Retriever | None, mark: int | None = None) -> PlanOutcome:
    """The outcome with its answer written by the analyst from the documents' passages, its cost
    added, its citations in `meta`. `mark`: where the plan's streamed answer began in the message's
    draft (`TextSink.mark`); it is taken back, and the analyst's answer streams in its place."""
    sink = CallScope.current().draft
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
    fix = "the answer without a task was written from the list of the documents only: the analyst answered from their passages"
    log.warning("plan repaired (grounded): %s", fix)
    return replace(outcome, plan=replace(plan, answer=answer), usage=outcome.usage + result.usage,
                   repairs=[*outcome.repairs, fix],
                   meta={**outcome.meta, **meta, "grounded": ANSWERER})
