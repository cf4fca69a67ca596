"""Running one task: the agent's context from the round so far, the call, its output documents."""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import replace
from typing import TYPE_CHECKING

from agents.base import DocumentText, Plan, Prepared, TaskContext, TaskResult, TaskSpec
from agents.errors import AgentsError
from agents.language import detect_language
from agents.model import CallScope, Model
from agents.phrases import say
from agents.registry import Registry
from agents.tasks.inputs import language_name, task_language
from agents.tasks.outputs import unproduced
from agents.tasks.questions import MAX_QUESTIONS, QuestionAsked, asked_task, may_offer, offering
from agents.tasks.restate import restated
from agents.toolkit.tokens import count_long_texts

if TYPE_CHECKING:
    from agents.base import Retriever


async def run_task(registry: Registry, task: TaskSpec, context: TaskContext) -> TaskResult:
    """Run the task's agent. Its exceptions propagate: the engine logs them as a failed task.

    The language a task must write in (the one its instructions name, else the user's) is checked on
    what a model wrote: a result in another language is done once more, told which language, and what
    it wrote itself is translated when the second try is still in another language. A real
    model behind a built-in agent is offered to ask the user (`agents.tasks.questions`; a plug-in or a tool
    asks its own way, through `TaskResult.question`); an agent that asks again after MAX_QUESTIONS
    answers fails its task (it would never end)."""
    agent = registry.get(task.agent)
    await count_long_texts(d.text for d in context.documents.values())
    offer = context.may_ask and context.model.can_call_tools and \
        registry.source(task.agent) == "built-in" and may_offer(context)
    task = asked_task(task, context)
    try:
        with offering(offer):
            result = await _checked(agent, task, context)
    except QuestionAsked as question:
        result = TaskResult(text="", question=question.question, usage=question.usage)
    if result.question:
        if len(context.answers) >= MAX_QUESTIONS:
            raise AgentsError(f"the {task.agent} agent asked the user more than {MAX_QUESTIONS} questions "
                              "for one task")
        return result
    # A step that made none of the documents it was planned to deliver is not done (issue 50: a round
    # whose only workbook was never written ended "1 of 1 planned step is done", "completed successfully").
    missing = [] if "prepared" in result.meta else unproduced(task, result.files)
    if missing and not result.meta.get("undelivered"):
        reason = say("doc_never_produced", task_language(task, context), name=", ".join(missing))
        result.meta = {**result.meta, "undelivered": True, "undeliveredReason": reason}
    return result


async def prepare_task(registry: Registry, task: TaskSpec, context: TaskContext) -> TaskResult:
    """What the task's agent makes ready for the user's approval before it runs (its `prepare`: a tool's
    arguments, say), in `meta["prepared"]` (None: it prepares nothing); the run the user approves gets it
    back in `TaskContext.prepared`."""
    prepare = getattr(registry.get(task.agent), "prepare", None)
    if not callable(prepare):
        return TaskResult(text="", meta={"prepared": None})
    made = await prepare(task, context)
    if not isinstance(made, Prepared) or not isinstance(made.data, dict):
        raise AgentsError(f"agent '{task.agent}' prepared {type(made).__name__}, not a Prepared with a dict")
    return TaskResult(text="", usage=made.usage, meta={"prepared": made.data})


async def _checked(agent: object, task: TaskSpec, context: TaskContext) -> TaskResult:
    """The agent's result, done once more when a model wrote it in another language than the task's;
    the text the first try streamed into the message's draft is taken back before the second writes."""
    sink = CallScope.current().draft
    mark = sink.mark() if sink is not None else 0
    result = await _run(agent, task, context)
    if result.question:
        return result
    wanted = expected_language(task, context)
    # A translation is told its language with every chunk, and redoing a book costs a book: not checked here.
    # An agent whose run acts outside (`repeatable = False`: an external tool) is never run twice.
    if context.model.extractive or task.agent == "translator" or \
            not getattr(agent, "repeatable", True) or written_language(result.text) in ("", wanted):
        return result
    again = replace(task, instructions=f"{task.instructions}\n\nWrite your whole answer in {language_name(wanted)} "
                                       f"only, not in {language_name(written_language(result.text))}.")
    if sink is not None:
        sink.retract(mark)
    redone = await _run(agent, again, context)
    redone.usage = result.usage + redone.usage
    meta: dict[str, object] = {"languageRedone": True}
    if written_language(redone.text) not in ("", wanted):
        # Still not: the model translates what it wrote itself (`agents.tasks.restate`); the evidence stays.
        if sink is not None:
            sink.retract(mark)
        text, usage, translated = await restated(redone.text, wanted, context.model, task.agent)
        redone.usage = redone.usage + usage
        if translated:
            redone.text, meta["languageTranslated"] = text, True
    if written_language(redone.text) not in ("", wanted):
        meta.update(languageMismatch=wanted, languageWritten=written_language(redone.text))
    redone.meta = {**redone.meta, **meta}
    return redone


async def _run(agent: object, task: TaskSpec, context: TaskContext) -> TaskResult:
    result = await agent.run(task, context)  # type: ignore[attr-defined]
    if not isinstance(result, TaskResult):
        raise AgentsError(f"agent '{task.agent}' returned {type(result).__name__}, not a TaskResult")
    return result


def expected_language(task: TaskSpec, context: TaskContext) -> str:
    """The language the task's result must be in: the one its instructions ask for ("in German"), else
    the user's (`agents.tasks.inputs.task_language`, which agents tell their model first)."""
    return task_language(task, context)


def written_language(text: str) -> str:
    """The language of what an agent wrote itself: quotes, tables and code left out; "" when too little
    is left to tell (a number, a list of names, fewer than twelve different words)."""
    own = [line for line in text.splitlines() if not line.lstrip().startswith((">", "|", "```", "#", "    "))]
    prose = re.sub(r"\[[^\]]*\]|\([^)]*\)|`[^`]*`|\S*[/.@]\S+|\d[\d.,]*", " ", " ".join(own))
    # Twelve different words at least: a word repeated ("word0 word1 ...": a stub's filler) is no evidence,
    # and the detector without the hand-written word lists reads it as Dutch or Afrikaans.
    if len({w.casefold() for w in re.findall(r"[^\W\d_]{2,}", prose)}) < 12:
        return ""
    return detect_language(prose, default="")


def task_context(plan: Plan, task: TaskSpec, *, prompt: str, uploads: list[DocumentText],
                 results: Mapping[str, TaskResult], outputs: Mapping[str, list[DocumentText]], model: Model,
                 history: list[tuple[str, str]] | None = None, retriever: Retriever | None = None) -> TaskContext:
    """What a task sees: the uploads, the output documents of the tasks it depends on (an output
    named like an upload replaces it) and those tasks' results; `results` and `outputs` hold the
    tasks that delivered."""
    documents = {d.name: d for d in uploads}
    for dep in task.depends_on:
        for doc in outputs.get(dep, []):
            documents[doc.name] = doc
    predecessors = {d: results[d] for d in task.depends_on if d in results}
    return TaskContext(prompt=prompt, language=plan.language, documents=documents, predecessors=predecessors,
                       model=model, history=list(history or []), retriever=retriever)
