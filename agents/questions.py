"""How an agent asks the user a question mid-task (see `TaskResult.question`), and how the answers reach
it when the task runs again. Pure, no I/O.

An agent that needs a fact only the user has returns `TaskResult(text="", question="...")`. A real
model behind a built-in agent is offered the same (AGENT_QUESTIONS=true): the task's instructions
say how to ask, and an answer that is a question in that form becomes the task's question. The
offline model is never offered it: it never asks. Once answered, every built-in agent sees the
questions and answers in its instructions (a plug-in reads `TaskContext.answers`).
"""

from __future__ import annotations

from dataclasses import replace

from agents.base import TaskContext, TaskResult, TaskSpec

MAX_QUESTIONS = 3  # questions one task may ask; another one fails the task
MARKER = "QUESTION FOR THE USER:"
OFFER = (f"If this task cannot be done without a fact only the user can give (which year, which sheet, which "
         f"of several documents), do not guess: answer with one line only, \"{MARKER} <your question>\".")


def asked_task(task: TaskSpec, context: TaskContext, offer: bool) -> TaskSpec:
    """The task as its agent sees it: the user's answers so far, and (`offer`) how to ask another."""
    lines = [f"You asked the user: {q}\nThe user answered: {a}" for q, a in context.answers]
    if offer and len(context.answers) < MAX_QUESTIONS:
        lines.append(OFFER)
    if not lines:
        return task
    return replace(task, instructions="\n\n".join([task.instructions, *lines]))


def question_of(result: TaskResult) -> str:
    """The question a model's answer asks in the offered form (its first line), or ""."""
    first = next((line.strip() for line in result.text.splitlines() if line.strip()), "")
    return first[len(MARKER):].strip() if first.upper().startswith(MARKER) else ""
