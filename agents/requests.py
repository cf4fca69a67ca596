"""What a model request asks for, typed: `ModelRequest.hints`, one frozen struct per kind of request.

Remote models read `request.messages`; the offline model (`agents.offline`) works from these facts
alone, so every request an agent makes states here what it asks for. The kinds form a tagged union
(`kind` on the wire): "plan" (a plan or its repair), the task kinds "summary", "answer", "translate",
"extract" and "write" (their map and reduce calls carry the kind of the task they serve), "final" (the
round's review) and "flow_node" (a flow's `llm` node). A request without hints is asked by its
`purpose` alone.
"""

from __future__ import annotations

from typing import Any

import msgspec


class DocFacts(msgspec.Struct, frozen=True, kw_only=True):
    """What a request says of one document (`agents.tasks.hints.doc_facts`): its name, kind and size,
    where it comes from, and `text`, the text the call works on (the whole document or, with
    `part` of `parts`, one chunk of it; None in plan requests)."""

    name: str
    ext: str = ""
    mime: str = ""
    size: int = 0  # bytes
    tokens: int = 0
    summary: str = ""
    pages: int = 0
    sheets: int = 0
    round: int = 0  # posted in or produced by
    origin: str = "uploaded"  # "uploaded", "produced" (by an agent) or "answer" (an earlier step's text)
    new: bool = True  # posted with this round
    tables: int | None = None  # tables found in its structure, when counted
    text: str | None = None
    part: int | None = None
    parts: int | None = None


class Hints(msgspec.Struct, frozen=True, kw_only=True, tag_field="kind"):
    """What every kind of request says: the user's request of this round and the reply's language (ISO)."""

    prompt: str = ""
    language: str = "en"


class AgentBrief(msgspec.Struct, frozen=True):
    """An agent a plan may give tasks to."""

    name: str
    description: str = ""


class InterruptedTask(msgspec.Struct, frozen=True, kw_only=True, rename={"depends_on": "dependsOn"}):
    """A task of the interrupted round, as its plan had it, and whether it delivered."""

    id: str
    agent: str
    instructions: str
    inputs: tuple[str, ...] = ()
    outputs: tuple[dict[str, Any], ...] = ()  # the plan schema's {"name", "type", "purpose"}
    depends_on: tuple[str, ...] = ()
    delivered: bool = False


class Interrupted(msgspec.Struct, frozen=True, kw_only=True, rename={"final_documents": "finalDocuments"}):
    """The latest earlier round when it was interrupted; the offline planner continues it on "continue"."""

    round: int
    tasks: tuple[InterruptedTask, ...] = ()
    final_documents: tuple[dict[str, Any], ...] = ()


class PlanHints(Hints, tag="plan", frozen=True):
    """A plan request (and its repair, with the rejected plan's precise `errors`)."""

    agents: tuple[AgentBrief, ...] = ()
    documents: tuple[DocFacts, ...] = ()
    history: tuple[tuple[str, str], ...] = ()  # earlier rounds as (role, content), trimmed to the budget
    max_tasks: int = 8
    previous: Interrupted | None = None
    errors: tuple[str, ...] = ()


class TaskHints(Hints, frozen=True):
    """What every request an agent makes for a task says: who asks, for which task, the documents it
    works on, and for a "reduce" call the map results to combine (`last`: its text is the result's)."""

    agent: str = ""
    task: str = ""
    instructions: str = ""
    documents: tuple[DocFacts, ...] = ()
    partials: tuple[str, ...] = ()
    last: bool = False


class SummaryHints(TaskHints, tag="summary", frozen=True):
    """A summary of the documents."""


class Cited(msgspec.Struct, frozen=True, kw_only=True):
    """A ranked passage an answer may cite as [n]: where it is, its text and the sentence(s) to quote."""

    n: int
    name: str
    text: str
    quote: str = ""
    score: float = 0.0
    page: int | None = None
    sheet: str | None = None
    section: str | None = None


class AskedPart(msgspec.Struct, frozen=True, kw_only=True):
    """One part of a question that asks two things: its best passage's number and quote, or the words
    of it no document writes; `documents`: the names of those it was searched in (() for all)."""

    question: str
    absent: tuple[str, ...] = ()
    n: int | None = None
    quote: str = ""
    documents: tuple[str, ...] = ()


class AnswerHints(TaskHints, tag="answer", frozen=True):
    """An answer to `question` from the documents; with `passages`, from those ranked passages.

    `absent`: the question's words no document uses, when the passages do not answer it
    (`agents.knowledge.coverage`); `unmentioned`: those words when the passages answer most of it;
    `compiled`: what was computed over a table, one sentence each with the marks of its rows
    (`agents.knowledge.compiled`); `lacking`: the kind of fact asked for ("price", "date", "number")
    that no passage holds; `parts`: a two-part question's parts.
    """

    question: str = ""
    passages: tuple[Cited, ...] = ()
    absent: tuple[str, ...] = ()
    unmentioned: tuple[str, ...] = ()
    lacking: str = ""
    compiled: tuple[str, ...] = ()
    parts: tuple[AskedPart, ...] = ()


class TranslateHints(TaskHints, tag="translate", frozen=True):
    """A translation into `target_language` (ISO; None: the reply's language)."""

    target_language: str | None = None


class ExtractHints(TaskHints, tag="extract", frozen=True):
    """The tables in the documents' text."""


class Source(msgspec.Struct, frozen=True):
    """Material a document is written from."""

    name: str
    text: str


class WriteHints(TaskHints, tag="write", frozen=True):
    """A document titled `title`, written from `sources`."""

    title: str = ""
    sources: tuple[Source, ...] = ()


class Review(msgspec.Struct, frozen=True, kw_only=True):
    """What a round did against its plan: the files delivered, the planned final documents never
    produced, the tasks done and failed, and the skipped ones with their reasons."""

    delivered: tuple[str, ...] = ()
    missing: tuple[str, ...] = ()
    done: tuple[str, ...] = ()
    failed: tuple[str, ...] = ()
    skipped: tuple[tuple[str, str], ...] = ()


class FinalHints(Hints, tag="final", frozen=True):
    """The round's final review; `stand_in`: written in place of the round's model, whose review failed."""

    review: Review = Review()
    stand_in: bool = False


class NodeHints(Hints, tag="flow_node", frozen=True):
    """A flow's `llm` node: its id (the prompt is the node's rendered prompt)."""

    node: str = ""


ModelHints = PlanHints | SummaryHints | AnswerHints | TranslateHints | ExtractHints | WriteHints | FinalHints | NodeHints
