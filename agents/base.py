"""The standard task interface every agent implements, and the data a round passes around.

Everything here is plain data so that a round's durable steps can record it (DBOS pickles
step results) and the planner, scheduler and agents stay testable without I/O.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable

from agents.model import Model, Usage
from agents.toolkit.cleanup import clean_contents
from agents.toolkit.cpu import off_gil_if_long
from extractors.base import ContentItem, is_notice, unread_reason
from extractors.tables import Table, table_from_wire


@dataclass
class DocumentText:
    """A document as agents see it: its extracted text items and a static summary."""

    name: str  # file name with extension, unique within a round
    ext: str
    mime: str
    size: int  # bytes of the original file
    items: list[tuple[str, str]]  # (item name, text) for text items, in document order
    summary: str = ""
    file_id: int | None = None
    # Why none of it could be read ("encrypted", "corrupt", "unsupported", "refused", "timeout",
    # "error"), or "" for a document that was read.
    problem: str = ""
    tables: list[Table] = field(default_factory=list)  # tables found in its structure, in order
    pages: int = 0  # pages or slides, when the format has them
    sheets: int = 0
    round: int = 0  # the round it was posted in or produced by
    origin: str = "uploaded"  # "uploaded" or "produced" (by an agent)
    new: bool = True  # posted with the current round
    sha256: str = ""  # content hash: the full-text index's key

    @property
    def text(self) -> str:
        return "\n\n".join(text for _, text in self.items)

    @classmethod
    def of(cls, name: str, ext: str, mime: str, size: int, contents: Sequence[ContentItem],
           file_id: int | None = None) -> DocumentText:
        """A document for agents from its content items (the same for uploads and outputs)."""
        # A notice ("the PDF is encrypted...") is not the document's text: an agent must never read
        # it as content. The document carries its `problem` instead.
        readable = [c for c in contents if not is_notice(c)]
        items = clean_contents(readable)
        summary = "; ".join(filter(None, (c.summary for c in readable)))[:500]
        tables = [table_from_wire(t) for c in readable for t in c.metadata.get("tables", [])]
        metas = [c.metadata for c in readable]
        pages = {m.get("page") or m.get("slide") for m in metas} - {None}
        sheets = {m.get("sheet") for m in metas} - {None}
        return cls(name=name, ext=ext, mime=mime, size=size, items=items, summary=summary, file_id=file_id,
                   problem=unread_reason(contents), tables=tables, pages=len(pages), sheets=len(sheets))

    @classmethod
    async def read(cls, name: str, ext: str, mime: str, size: int, contents: Sequence[ContentItem],
                   file_id: int | None = None) -> DocumentText:
        """`of`, in a worker process when the contents are long: the clean-up of a book's text takes a fifth
        of a second, and in a thread it held the GIL the event loop needs for every answer."""
        return await off_gil_if_long(sum(len(c.data) for c in contents), cls.of, name, ext, mime, size,
                                     list(contents), file_id)


@dataclass
class OutputSpec:
    """A document the plan expects a task (or the round) to deliver."""

    name: str  # file name with extension, e.g. "summary.md"
    type: str = ""  # extension or MIME type
    purpose: str = ""


@dataclass
class TaskSpec:
    """One task of a work plan."""

    id: str
    agent: str
    instructions: str
    inputs: list[str] = field(default_factory=list)  # document names (uploads or earlier outputs)
    outputs: list[OutputSpec] = field(default_factory=list)
    depends_on: list[str] = field(default_factory=list)


@dataclass
class Plan:
    """The project manager's validated output."""

    language: str  # ISO 639-1, e.g. "en", "de", "fr"
    answer: str  # the answer to the user, in their language
    final_documents: list[OutputSpec] = field(default_factory=list)
    tasks: list[TaskSpec] = field(default_factory=list)

    def record(self) -> dict[str, Any]:
        """Its tasks and final documents as a record to store (camelCase like every wire object, for
        frontends that draw it); `from_record` reads it back."""
        return {"finalDocuments": [_output_record(o) for o in self.final_documents],
                "tasks": [{"id": t.id, "agent": t.agent, "instructions": t.instructions, "inputs": list(t.inputs),
                           "outputs": [_output_record(o) for o in t.outputs], "dependsOn": list(t.depends_on)}
                          for t in self.tasks]}

    @classmethod
    def from_record(cls, record: dict[str, Any], language: str, answer: str) -> Plan:
        """The plan `record` stored, with its language and answer (stored beside it)."""
        tasks = [TaskSpec(id=t["id"], agent=t["agent"], instructions=t.get("instructions", ""),
                          inputs=list(t.get("inputs", [])), outputs=[OutputSpec(**o) for o in t.get("outputs", [])],
                          # Plans stored before the wire went camelCase carry `depends_on`.
                          depends_on=list(t.get("dependsOn", t.get("depends_on", []))))
                 for t in record.get("tasks", [])]
        return cls(language=language, answer=answer,
                   final_documents=[OutputSpec(**d) for d in record.get("finalDocuments", [])], tasks=tasks)


def _output_record(o: OutputSpec) -> dict[str, str]:
    return {"name": o.name, "type": o.type, "purpose": o.purpose}


@dataclass
class OutputFile:
    """A document an agent produced."""

    name: str
    mime: str
    data: bytes


@dataclass
class TaskResult:
    """What a task delivered."""

    text: str
    files: list[OutputFile] = field(default_factory=list)
    usage: Usage = Usage()
    model: str = ""
    offline: bool = False
    meta: dict[str, Any] = field(default_factory=dict)  # added to the task's message metadata (citations)
    # A question for the user instead of a result: the round waits for the answer, then the task runs
    # again with the question and the answer in `TaskContext.answers` (an agent asks when a fact only
    # the user has is missing; the offline model never asks).
    question: str = ""

    @property
    def undelivered(self) -> bool:
        """Whether the task produced nothing of what it was asked: no text and no file, or an agent's
        own sentence saying it could not (`meta["undelivered"]`, e.g. a translation made offline)."""
        return bool(self.meta.get("undelivered")) or (not self.text.strip() and not self.files)


@dataclass
class Passage:
    """A ranked passage with its source, as agents quote and cite it."""

    name: str  # the document's name in the round
    text: str
    score: float
    file_id: int | None = None
    page: int | None = None
    sheet: str | None = None
    section: str | None = None
    method: str = "keyword"  # how it was found: "keyword" (BM25), "hybrid" (BM25 and vectors fused), "vector"

    def where(self) -> str:
        """"contract.pdf, page 3" / "book.xlsx, sheet Revenue" / "notes.docx, comments"."""
        place = (f"page {self.page}" if self.page else f"sheet {self.sheet}" if self.sheet
                 else self.section or "")
        return f"{self.name}, {place}" if place else self.name

    def citation(self, quote: str) -> dict[str, object]:
        """The message metadata's citation: {fileId, name, page?, sheet?, section?, quote}."""
        out: dict[str, object] = {"fileId": self.file_id, "name": self.name}
        for key in ("page", "sheet", "section"):
            if getattr(self, key):
                out[key] = getattr(self, key)
        out["quote"] = quote
        return out


@runtime_checkable
class Retriever(Protocol):
    """Finds the passages of `documents` that best answer `query`, best first."""

    async def search(self, query: str, documents: Sequence[DocumentText], k: int) -> list[Passage]: ...


@runtime_checkable
class Likeness(Protocol):
    """A retriever or index that can tell how alike in meaning short texts are, in any language (its
    vectors): a question's words and a table's headings ("Umsatz" and "Sales")."""

    async def likeness(self, texts: Sequence[str], others: Sequence[str]) -> list[list[float]] | None:
        """The cosine of each of `texts` with each of `others`; None when it has no vectors."""
        ...


@dataclass
class TaskContext:
    """What an agent gets besides its task: the request, the documents, earlier results."""

    prompt: str
    language: str
    documents: dict[str, DocumentText]  # by name: uploads and outputs of finished tasks
    predecessors: dict[str, TaskResult]  # by task id: the results of the tasks it depends on
    model: Model
    history: list[tuple[str, str]] = field(default_factory=list)  # (role, content), earlier rounds
    retriever: Retriever | None = None  # the service's full-text index; None: ranked in memory
    # Where an agent says how far a long task is ("Summarising report.txt: part 3 of 8 done"): the
    # round's log in the service; None: nobody listens. It never fails the task.
    progress: Callable[[str], Awaitable[None]] | None = None
    # The questions this task's agent asked the user in this round and the answers, in order.
    answers: list[tuple[str, str]] = field(default_factory=list)
    may_ask: bool = False  # a real model behind a built-in agent is offered to ask (agents.tasks.questions)
    # What the agent's `prepare` made ready before the user approved the task (Prepared.data, read back
    # from the wait's message): the run does exactly that. None: nothing was prepared.
    prepared: dict[str, Any] | None = None


@dataclass
class Prepared:
    """What an agent that needs approval makes ready before the user decides (`async prepare(task,
    context) -> Prepared`, optional): `data` (JSON) is stored with the wait, shown to the user (through
    `describe_call(task, data)`) and handed back on approval as `TaskContext.prepared`, so the task does
    what was approved (an external tool's arguments). A failure to prepare fails the task: nothing waits."""

    data: dict[str, Any]
    usage: Usage = field(default_factory=Usage)


@runtime_checkable
class Agent(Protocol):
    """A registered agent: a stable name, a description the project manager reads, a run. Optional:
    `formats`, the file extensions it can deliver, its usual ones first (("xlsx", "csv")): the planner
    is told them, and a plan asking the agent for another format is invalid (`Registry.formats`)."""

    name: str
    description: str

    async def run(self, task: TaskSpec, context: TaskContext) -> TaskResult: ...
