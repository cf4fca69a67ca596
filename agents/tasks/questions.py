"""How an agent asks the user a question mid-task (see `TaskResult.question`), and how the answers reach
it when the task runs again. No I/O.

An agent that needs a fact only the user has returns `TaskResult(text="", question="...")`. A real
model behind a built-in agent is offered the same (AGENT_QUESTIONS=true) as a tool: while its task
runs (`offering`), each of its task calls (`purpose="task"`, prose, not a tool's JSON) carries the
`ask_user` tool (`offer`); a call to it ends the task at once (`asked` raises `QuestionAsked`, which
`agents.tasks.run` turns into the task's question). The offline model is never offered it: it never
asks. Once answered, every built-in agent sees the questions and answers in its instructions (a
plug-in reads `TaskContext.answers`).

The tool replaces an earlier convention, a first line "QUESTION FOR THE USER: ..." the instructions
asked for: a tool is what OpenAI-compatible servers and models are trained on, its arguments are
structured (the question, the choices), and no answer can be mistaken for a question. A server that
takes no tools is asked without them (`app.llm.tools`): its model cannot ask.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import replace
from typing import Any

from agents.base import TaskContext, TaskSpec
from agents.model import ModelRequest, ModelResponse, Tool, Usage

MAX_QUESTIONS = 3  # questions one task may ask; another one fails the task

ASK_USER = Tool(
    name="ask_user",
    description=("Ask the user one short question when the task cannot be done without a fact only the user "
                 "can give (which year, which sheet, which of several documents). Do not guess such a fact; "
                 "do not ask about anything the documents or the request already say."),
    parameters={
        "type": "object",
        "properties": {
            "question": {"type": "string", "description": "The question, in the user's language."},
            "choices": {"type": "array", "items": {"type": "string"},
                        "description": "The possible answers, when there are a few (optional)."},
        },
        "required": ["question"],
    },
)

# Whether this task's calls are offered `ask_user` (set by `agents.tasks.run` for one task).
_offered: ContextVar[bool] = ContextVar("foreman_ask_user", default=False)


class QuestionAsked(Exception):  # noqa: N818 - not a failure: the task waits for the user
    """The model called `ask_user`: the task stops and waits for the user's answer."""

    def __init__(self, question: str, usage: Usage = Usage()) -> None:
        super().__init__(question)
        self.question = question
        self.usage = usage  # what the task's calls cost up to the question


@contextmanager
def offering(offered: bool) -> Iterator[None]:
    """The task calls made in this context are offered `ask_user` (`offered`) or not."""
    token = _offered.set(offered)
    try:
        yield
    finally:
        _offered.reset(token)


def offer(request: ModelRequest) -> ModelRequest:
    """The request with `ask_user` among its tools, when this task offers it and the call writes prose."""
    if not _offered.get() or request.purpose != "task" or request.schema is not None:
        return request
    return replace(request, tools=(*request.tools, ASK_USER))


def asked(response: ModelResponse) -> str:
    """The question of the response's `ask_user` call (its choices appended), or "" when it made none."""
    for call in response.tool_calls:
        if call.name == ASK_USER.name and (question := _question(call.arguments)):
            return question
    return ""


def asked_task(task: TaskSpec, context: TaskContext) -> TaskSpec:
    """The task as its agent sees it: the questions its agent asked so far and the user's answers."""
    lines = [f"You asked the user: {q}\nThe user answered: {a}" for q, a in context.answers]
    if not lines:
        return task
    return replace(task, instructions="\n\n".join([task.instructions, *lines]))


def may_offer(context: TaskContext) -> bool:
    """Whether the task may still ask: fewer than `MAX_QUESTIONS` answered (the next fails the task)."""
    return len(context.answers) < MAX_QUESTIONS


def _question(arguments: Mapping[str, Any]) -> str:
    question = arguments.get("question")
    if not isinstance(question, str) or not question.strip():
        return ""
    choices = [str(c).strip() for c in arguments.get("choices") or () if str(c).strip()] \
        if isinstance(arguments.get("choices"), list) else []
    return question.strip() + (f" ({' / '.join(choices)})" if choices else "")
