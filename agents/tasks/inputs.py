"""What a task works on: its input documents and the hints every agent request starts from."""

from __future__ import annotations

import re
from typing import TypedDict

from agents.base import DocumentText, TaskContext, TaskSpec
from agents.language import language_name as _cldr_name
from agents.language import target_language


def task_documents(task: TaskSpec, context: TaskContext) -> list[DocumentText]:
    """The task's input documents; every document of the round when the plan names none.

    A document that could not be read is never an input: its notice is not its text.
    """
    if task.inputs:
        return [context.documents[n] for n in task.inputs if n in context.documents
                and not context.documents[n].problem]
    return [d for d in context.documents.values() if not d.problem]


class TaskFacts(TypedDict):
    """What every request an agent makes for a task says (`agents.requests.TaskHints`)."""

    prompt: str
    language: str
    agent: str
    task: str
    instructions: str


def base_hints(task: TaskSpec, context: TaskContext, agent: str) -> TaskFacts:
    """The hints shared by every request an agent makes for a task: `SummaryHints(**base_hints(...), ...)`."""
    return TaskFacts(prompt=context.prompt, language=context.language, agent=agent, task=task.id,
                     instructions=task.instructions)


def language_name(code: str) -> str:
    """The English name of a language code, for prompts ("German" for "de")."""
    return _cldr_name(code)


def instructions(agent: str, language: str, body: str) -> str:
    """An agent's system message: the language to write in first, then who it is and what to do. A
    small model follows what it reads first and last: a German request answered with an English
    document's words was told "in German" once, mid-sentence (issue 31)."""
    return f"Write only in {language_name(language)}. You are the {agent} agent. {body}"


def reminder(language: str) -> str:
    """The user message's last line: the language once more, after the material."""
    return f"\n\nWrite your answer in {language_name(language)}."


# The lines above as a model may echo them at the end of its answer (Qwen 0.5B ended a German summary
# with "Write your answer in German."): our own words, never the answer's.
_ECHO = re.compile(r"(?:\n\s*(?:Write (?:your (?:whole )?answer|only) in [^\W\d_][\w ]*?(?: only)?|"
                   r"You are the \w+ agent)\.?\s*)+$")


def without_echo(text: str) -> str:
    """A task's answer without the instruction lines a model repeated at its end."""
    return _ECHO.sub("", text) if "\n" in text else text


def task_language(task: TaskSpec, context: TaskContext) -> str:
    """The language a task writes in: the one its instructions ask for ("Summarise it in English." in a
    German conversation, "Now translate that to German."), else the user's."""
    asked = re.findall(r"\b(?:in|into|to|auf|ins|en)\s+([^\W\d_]+)", task.instructions, re.IGNORECASE)
    return next((code for word in asked if (code := target_language(word))), None) or context.language
