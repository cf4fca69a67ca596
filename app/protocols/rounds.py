"""A round as every protocol adapter sees it: started through the workflow service, followed through
the event stream's cursor machinery, and read as typed parts (text, steps, plan, progress, the end).

No adapter reads the database or drives the engine: they start, stop and upload through the same
services the REST API calls, and read a round with `EventStream.follow`, so a protocol promises
what the event stream promises (every item once, in order, also across processes on PostgreSQL).
"""

from __future__ import annotations

import asyncio
import logging
import re
from collections.abc import AsyncGenerator
from dataclasses import dataclass, field
from typing import Any

from app.contract.schemas import (
    Document,
    LogEntry,
    Message,
    ReviewMode,
    ReviewRequest,
    StartRequest,
    WaitingFor,
    WorkflowStatusView,
)
from app.contract.views import log_view, message_view, status_view
from app.errors import ApplicationError, NotFoundError
from app.rounds.live import EventStream, Position
from app.store.records import Owner
from app.store.tables import WorkflowRow

log = logging.getLogger("foreman.protocols")

RUNNING_TASK = re.compile(r"^Running task (\d+)/\d+: ")  # app/rounds/steps.py's start_log
TERMINAL = ("completed", "stopped", "failed")


@dataclass(frozen=True)
class Snapshot:
    """A workflow's status and its items after two cursors, as one read (or one follow) saw them."""

    status: WorkflowStatusView
    messages: list[Message]
    logs: list[LogEntry]
    last_message_id: int
    last_log_id: int
    has_more: bool

    @classmethod
    def of(cls, status: WorkflowStatusView, messages: list[Message], logs: list[LogEntry], after_message: int,
           after_log: int, limit: int) -> Snapshot:
        """At most `limit` of each; the cursors go to the last item given when more are left, else to the
        workflow's last ids (past items deleted meanwhile)."""
        more_messages, more_logs = len(messages) > limit, len(logs) > limit
        messages, logs = messages[:limit], logs[:limit]
        return cls(status, messages, logs,
                   messages[-1].id if more_messages else max(after_message, status.last_message_id),
                   logs[-1].id if more_logs else max(after_log, status.last_log_id), more_messages or more_logs)


@dataclass(frozen=True)
class Text:
    """A whole message the user reads, as Markdown (one that was not read as live text)."""

    message: Message
    text: str
    kind: str  # "answer" (the project manager's), "step" (an agent's), "last" (the final message)


@dataclass(frozen=True)
class Plan:
    """The project manager's work plan: task ids with their agents, in plan order."""

    tasks: list[tuple[str, str]]


@dataclass(frozen=True)
class StepStarted:
    task_id: str
    agent: str


@dataclass(frozen=True)
class StepFinished:
    task_id: str
    agent: str
    failed: bool
    documents: list[Document]


@dataclass(frozen=True)
class Progress:
    log: LogEntry


@dataclass(frozen=True)
class Ended:
    """The round's end: its status, the reason when it did not complete, and the tokens it used."""

    status: str
    error: str | None
    tokens: int
    documents: list[Document]


@dataclass(frozen=True)
class Piece:
    """Live text: `text` just written of the message being written as draft `draft_id` (its first
    piece, `first`, begins with an agent's step header as `text_of` writes it)."""

    draft_id: str
    text: str
    first: bool


@dataclass(frozen=True)
class Closed:
    """The draft `draft_id` ended: as `message`, `text` (links to its documents, or "") completing it;
    or discarded (`message` None: its call failed, was tried again or stopped; a takeover writes it again)."""

    draft_id: str
    text: str
    message: Message | None


@dataclass(frozen=True)
class Waiting:
    """The round waits for the user (a plan review, an agent's question): what for. The next part of
    the round begins with the user's decision (`Rounds.decide`)."""

    waiting_for: WaitingFor
    tokens: int = 0  # the round's tokens so far (since `Round.tokens_before`), when `follow` read them


@dataclass(frozen=True)
class CaughtUp:
    """The parts of everything written so far were given (the stream's read ended with the round's status
    changed): a reader that keeps state derived from the round reads it once here, not once per part."""


Part = Text | Piece | Closed | Plan | StepStarted | StepFinished | Progress | Ended | Waiting | CaughtUp


@dataclass
class Round:
    """A started round of the caller's workflow, and where its items begin."""

    owner: Owner
    workflow_id: str
    round: int
    position: Position
    tokens_before: int
    base_url: str = ""  # where download links point (the server as the caller reached it)
    documents: list[Document] = field(default_factory=list)


class Rounds:
    """Start, follow, stop and upload for the protocol adapters, over the REST API's services."""

    def __init__(self, workflows: Any, files: Any, heartbeat: float, stop_on_disconnect: bool = True) -> None:
        self.workflows = workflows
        self.files = files
        self.heartbeat = heartbeat
        self.stop_on_disconnect = stop_on_disconnect  # CHAT_STOP_ON_DISCONNECT
        self._stopping: set[asyncio.Task[None]] = set()

    async def upload(self, owner: Owner, parts: list[tuple[str, bytes]]) -> list[int]:
        """Store (name, bytes) parts as the owner's files; their ids."""
        return [info.id for info in await self.files.upload(owner, parts)] if parts else []

    async def start(self, owner: Owner, workflow_id: str | None, prompt: str, file_ids: list[int],
                    base_url: str = "", new_id: str | None = None, review: ReviewMode | None = None) -> Round:
        """Start a workflow (None; with `new_id` as its id when given) or its next round (`review`
        "plan": it waits for the user's review of its plan); errors are the REST API's (404, 409, 400)."""
        position, tokens = Position(), 0
        if workflow_id is not None:
            row = await self.workflows.owned(owner, workflow_id)
            position, tokens = Position(row.last_message_id, row.last_log_id), row.tokens_used
        request = StartRequest(prompt=prompt, list_file_id=file_ids, review=review)
        answer = await self.workflows.start(owner, workflow_id, request, None, new_id)
        return Round(owner, answer["id"], answer["currentRound"], position, tokens, base_url)

    async def decide(self, owner: Owner, workflow_id: str, decision: ReviewRequest, base_url: str = "",
                     row: WorkflowRow | None = None) -> Round:
        """The user's decision on what the workflow's round waits for (the REST review's errors): the
        round, to follow from where it waited (`row`: the workflow as the caller just read it, waiting)."""
        row = row or await self.workflows.owned(owner, workflow_id)
        position = Position(row.last_message_id, row.last_log_id)
        await self.workflows.reviews.decide(owner, workflow_id, decision)
        return Round(owner, workflow_id, row.current_round, position, row.tokens_used, base_url)

    async def stop(self, owner: Owner, workflow_id: str) -> None:
        await self.workflows.stop(owner, workflow_id)

    async def snapshot(self, owner: Owner, workflow_id: str, after_message: int, after_log: int,
                       limit: int) -> Snapshot:
        """The workflow with its messages and logs after the cursors (at most `limit` of each), read
        in one transaction, as the event stream reads them (the REST pages take one read each)."""
        page = await self.workflows.repo.live.page(owner, workflow_id, after_message, after_log, limit + 1)
        if page is None:  # not the caller's, or gone: the REST API's 404
            raise NotFoundError(f"There is no workflow {workflow_id!r}.", code="workflow_not_found")
        messages = [message_view(m, docs, page.files) for m, docs in page.messages]
        logs = [log_view(e, owner.mandate_id, owner.user_id, updated) for e, updated in page.logs]
        return Snapshot.of(status_view(page.workflow), messages, logs, after_message, after_log, limit)

    def left(self, run: Round, protocol: str) -> None:
        """The client went away before the round ended: stop it, unless configured to let it run."""
        if not self.stop_on_disconnect:
            return
        log.info("A %s client left before workflow %s round %s ended; stopping it.", protocol, run.workflow_id,
                 run.round)
        # Its own task: the response's task is being cancelled, and a stop must not be cancelled with it.
        task = asyncio.get_running_loop().create_task(self._stop_left(run))
        self._stopping.add(task)
        task.add_done_callback(self._stopping.discard)

    async def _stop_left(self, run: Round) -> None:
        try:
            await self.stop(run.owner, run.workflow_id)
        except ApplicationError as exc:  # it ended meanwhile: nothing to stop
            log.info("Stopping workflow %s after its client left: %s", run.workflow_id, exc.detail)

    def stream(self, run: Round, position: Position | None = None, live: bool = False) -> EventStream:
        """The event stream of the round's workflow from `position` (default: where the round began);
        `live`: with the drafts' text as it is written."""
        listener = self.workflows.engine.listener
        return EventStream(self.workflows, run.owner, run.workflow_id, position or run.position, False,
                           self.heartbeat, listening=lambda: listener is None or listener.connected.is_set(),
                           drafts=self.workflows.rt.journal.drafts if live else None)

    async def follow(self, run: Round, heartbeats: bool = False, tokens: bool = True,
                     live: bool = False, waits: bool = False, caught_up: bool = False
                     ) -> AsyncGenerator[Part | None, None]:
        """The round's parts until it ends (None for a quiet heartbeat when asked for); `tokens`: the
        round's tokens at its end (as the read that saw the end had them); `live`: messages as they are
        written (Piece ... Closed), each draft from its first character (one this stream saw only at its end
        arrives whole, as Text); `waits`: a round that waits for the user ends the parts (Waiting), as a
        round's end does; `caught_up`: CaughtUp after each read that moved the round on."""
        plan: dict[int, tuple[str, str]] = {}
        started: set[str] = set()
        writing: set[str] = set()  # drafts this stream began
        error: str | None = None
        stream = self.stream(run, live=live)
        async for event, view in stream.follow(self.workflows.rt.changes):
            if view is None:
                if heartbeats:
                    yield None
                continue
            if event == "delta":
                draft_id = view["messageId"]
                if draft_id in writing:
                    yield Piece(draft_id, view["text"], False)
                    continue
                draft = self.workflows.rt.journal.drafts.of(run.workflow_id).get(draft_id)
                if draft is None or draft.round != run.round or view["offset"]:
                    continue  # its message follows whole
                if draft.task and draft.task not in started:
                    started.add(draft.task)
                    yield StepStarted(draft.task, draft.agent)
                writing.add(draft_id)
                yield Piece(draft_id, (f"**{draft.agent}**\n\n" if draft.task else "") + view["text"], True)
                continue
            if event == "discard":
                if view["messageId"] in writing:
                    writing.discard(view["messageId"])
                    yield Closed(view["messageId"], "", None)
                continue
            if event == "status":
                if waits and view.current_round == run.round and view.status == "waiting" and view.waiting_for:
                    for draft_id in sorted(writing):
                        yield Closed(draft_id, "", None)
                    yield Waiting(view.waiting_for, stream.tokens_used - run.tokens_before if tokens else 0)
                    return
                if view.current_round == run.round and view.status in TERMINAL:
                    for draft_id in sorted(writing):  # nothing stays open after the end (none should be)
                        yield Closed(draft_id, "", None)
                    yield Ended(view.status, error if view.status != "completed" else None,
                                stream.tokens_used - run.tokens_before if tokens else 0, run.documents)
                    return
                if caught_up:
                    yield CaughtUp()
                continue
            if view.round != run.round:
                continue
            if event == "log":
                match = RUNNING_TASK.match(view.message)
                if match and int(match[1]) in plan:
                    task_id, agent = plan[int(match[1])]
                    if task_id not in started:
                        started.add(task_id)
                        yield StepStarted(task_id, agent)
                if view.type == "error":
                    error = view.message
                yield Progress(view)
            elif event == "message" and view.role == "assistant":
                tasks = (view.metadata.get("plan") or {}).get("tasks") if isinstance(view.metadata, dict) else None
                if tasks:
                    pairs = [(str(t.get("id")), str(t.get("agent"))) for t in tasks if isinstance(t, dict)]
                    plan = dict(enumerate(pairs, 1))
                    yield Plan(pairs)
                task_id = view.metadata.get("taskId")
                if task_id and task_id not in started:  # a skipped task never started
                    started.add(task_id)
                    yield StepStarted(task_id, view.agent_name)
                run.documents.extend(view.documents)
                draft_id = view.metadata.get("draftId")
                if draft_id in writing:
                    writing.discard(draft_id)
                    yield Closed(draft_id, links_of(view, run.base_url, "\n\n"), view)
                else:
                    for piece in text_of(view, run.base_url):
                        yield piece
                if task_id:
                    yield StepFinished(task_id, view.agent_name, bool(view.metadata.get("failed")
                                                                       or view.metadata.get("skipped")),
                                       view.documents)


def text_of(message: Message, base_url: str = "") -> list[Text]:
    """What the user reads of an assistant message, as Markdown with its documents as links.

    The adapters' text of a message read whole; one read as live text is its pieces (the same header
    and content) and then `links_of`.
    """
    kind = "last" if message.status == "last" else "step" if message.metadata.get("taskId") else "answer"
    body = message.content.strip()
    if kind == "step":
        body = f"**{message.agent_name}**\n\n{body}"
    text = body + links_of(message, base_url, "\n\n" if body else "")
    return [Text(message, text, kind)] if text else []


def links_of(message: Message, base_url: str, before: str) -> str:
    """The message's documents as a Markdown list of download links (after `before`), or ""."""
    links = "\n".join(f"- [{doc_name(d)}]({base_url}{download_path(d)})" for d in message.documents)
    return before + links if links else ""


def doc_name(doc: Document) -> str:
    return f"{doc.name}.{doc.ext}" if doc.ext else doc.name


def download_path(doc: Document) -> str:
    """Where the document's bytes are, with the caller's key, on this server."""
    return f"/api/files/{doc.file_id}/content"
