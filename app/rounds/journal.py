"""Writes a round's messages and logs, keeps the cursor cache current, logs every transition."""

from __future__ import annotations

import json
import logging
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import replace

from sqlalchemy.engine import Connection
from sqlalchemy.exc import SQLAlchemyError

from agents.errors import AgentsError
from agents.model import CallScope, ModelError
from app.fsm import Event
from app.metrics import record_transition
from app.rounds import tracing
from app.rounds.drafts import Drafts
from app.store.cursors import CursorCache
from app.store.ownership import current_claim
from app.store.records import Appended, Cost, Decided, NewLog, NewMessage, Owner, Stopped, Wait
from app.store.repository import Repository
from extractors.base import ContentItem

log = logging.getLogger("foreman.transitions")
failures = logging.getLogger("foreman.failures")

# Exceptions that are our own mistakes or the database's: their text (a repr, an SQL statement)
# means nothing to the person reading the round, so it goes to the server log instead.
_INTERNAL = (AttributeError, TypeError, KeyError, IndexError, NameError, AssertionError, LookupError,
             OSError, SQLAlchemyError)


class Journal:
    """The one way a round writes its output; inside a round's execution, only while it owns the round."""

    def __init__(self, repo: Repository, cursors: CursorCache, drafts: Drafts | None = None) -> None:
        self.repo = repo
        self.cursors = cursors
        self.drafts = drafts or Drafts(lambda _w: None, lambda _w: None)
        self.on_end: Callable[[str], None] | None = None  # a round ended (not by a stop): its queue may go on
        self.steers: dict[str, int] = {}  # steering posts heard, by workflow (app.rounds.steering)

    def heard_steer(self, workflow_id: str) -> None:
        """A steering post joined the workflow's running round: written by this process, or announced by
        another (`app.store.notify.STEER_CHANNEL`)."""
        self.steers[workflow_id] = self.steers.get(workflow_id, 0) + 1

    def steer_mark(self, workflow_id: str) -> tuple[int, int] | None:
        """What changes whenever a steering post may have joined the workflow's round since: the count of
        those heard, with the notifications' generation (a reconnect may have missed some); None while
        the notifications are down (PostgreSQL), when nothing but a read can tell."""
        if not self.cursors.enabled:
            return None
        return self.cursors.generation, self.steers.get(workflow_id, 0)

    async def append(
        self, workflow_id: str, round_no: int, messages: Sequence[NewMessage] = (), logs: Sequence[NewLog] = (),
        event: Event | None = None, cost: Cost | None = None, wait: Wait | None = None,
        also: Callable[[Connection], None] | None = None,
    ) -> Appended | None:
        """Append to the round, if it is still the workflow's running round (see WorkflowStore.append);
        with Event.WAIT, `wait` is what the round then waits for. A message whose draft was shown
        names it in `metadata.draftId`; the draft goes once the write is over (discarded when the
        message was not stored)."""
        messages, drafted = self._drafted(messages)
        written = None
        try:
            written = await self.repo.workflows.append(workflow_id, round_no, messages, logs, event=event, cost=cost,
                                                       claim=current_claim(), wait=wait, also=also)
            if written is not None:
                self.written(workflow_id, written.last_message_id, written.last_log_id)
                if event is not None:
                    before = written.before.value if written.before else None
                    transition(workflow_id, round_no, before, written.status.value, event.value)
                    if event in (Event.FINISH, Event.FAIL):
                        self.ended(workflow_id)
        finally:
            for key in drafted:
                self.drafts.landed(key, stored=bool(written and written.message_ids))
        return written

    def _drafted(self, messages: Sequence[NewMessage]) -> tuple[Sequence[NewMessage], list[str]]:
        drafted: list[str] = []
        out = list(messages)
        for i, message in enumerate(out):
            draft_id = self.drafts.closing(message.key, message.content) if message.role == "assistant" else None
            if draft_id is not None:
                out[i] = replace(message, meta={**message.meta, "draftId": draft_id})
                drafted.append(message.key)
        return (out, drafted) if drafted else (messages, drafted)

    def ended(self, workflow_id: str) -> None:
        if self.on_end is not None:
            self.on_end(workflow_id)

    def progress(self, workflow_id: str, round_no: int, key: str, agent: str) -> Callable[[str], Awaitable[None]]:
        """An agent's `progress` callback: each line one log of the round, keyed `key:n` so a
        replayed task writes none twice. A line that cannot be written is dropped, the task goes on."""
        count = 0

        async def tell(line: str) -> None:
            nonlocal count
            count += 1
            try:
                await self.append(workflow_id, round_no, logs=[NewLog(f"{key}:{count}", line, agent_name=agent)])
            except SQLAlchemyError:
                failures.warning("a progress log of round %s:%s was not written", workflow_id, round_no,
                                 exc_info=True)

        return tell

    async def attach(self, workflow_id: str, round_no: int, file_id: int, contents: list[ContentItem],
                     logs: Sequence[NewLog] = (), message_id: int | None = None) -> Appended | None:
        """Fill in a document of the round's user message (or of the earlier message `message_id`), with
        logs (see WorkflowStore.attach_contents)."""
        written = await self.repo.workflows.attach_contents(workflow_id, round_no, file_id, contents, logs,
                                                            claim=current_claim(), message_id=message_id)
        if written is not None:
            self.written(workflow_id, written.last_message_id, written.last_log_id)
        return written

    def written(self, workflow_id: str, last_message_id: int, last_log_id: int) -> None:
        self.cursors.advance(workflow_id, last_message_id, last_log_id)

    async def fail(self, workflow_id: str, round_no: int, reason: str, key: str,
                   cost: Cost | None = None) -> Appended | None:
        """End the round as failed, with an error log (progress 100) that says why."""
        return await self.append(
            workflow_id, round_no,
            logs=[NewLog(key, reason, type="error", agent_name="system", progress=100, status="failed")],
            event=Event.FAIL, cost=cost,
        )

    def decided(self, decided: Decided | None, event: Event) -> None:
        """A decision (or a wait's expiry) was written: wake the workflow's readers, log the transition."""
        if decided is None or not decided.taken or decided.written is None:
            return
        row, written = decided.workflow, decided.written
        self.written(row.id, written.last_message_id, written.last_log_id)
        transition(row.id, row.current_round, written.before.value if written.before else None, row.status,
                   event.value)
        if event in (Event.REJECT, Event.EXPIRE):
            self.ended(row.id)

    async def stop(self, owner: Owner | None, workflow_id: str) -> Stopped | None:
        """Move the workflow's running round to stopped with its log, and read the workflow back, in one
        write (see WorkflowStore.stop); None when the owner (any owner: None) has no such workflow.
        The drafts this process writes for it are discarded first: no text follows the stop's log."""
        self.drafts.abandon_workflow(workflow_id)
        stopped = await self.repo.workflows.stop(owner, workflow_id, lambda round_no: NewLog(
            f"{workflow_id}:{round_no}:stopped", "Workflow stopped by user", agent_name="system", progress=100,
            status="stopped"))
        if stopped is not None and stopped.written is not None:
            written, row = stopped.written, stopped.workflow
            self.written(workflow_id, written.last_message_id, written.last_log_id)
            transition(workflow_id, row.current_round, written.before.value if written.before else None,
                       written.status.value, Event.STOP.value)
        return stopped


def transition(workflow_id: str, round_no: int, before: str | None, after: str, event: str) -> None:
    """One structured line per status change, and the round counters it moves."""
    record_transition(before, after, event)
    tracing.outcome(workflow_id, round_no, after)
    with CallScope.entered(workflow=workflow_id, round_no=round_no):  # also outside the round (start, stop, delete)
        log.info(json.dumps({"workflow": workflow_id, "round": round_no, "from": before, "to": after,
                             "event": event}))


def reason_of(exc: BaseException, what: str) -> str:
    """A sentence on why `what` failed, for logs and messages a person reads; details to the server log.

    An error raised on purpose (a model's, an agent's, a plug-in's own exception) says why in
    its own words; an internal error (a bug, the database) is named as such.
    """
    text = str(exc).strip()
    internal = isinstance(exc, _INTERNAL) and not isinstance(exc, (AgentsError, ModelError))
    if internal or not text:
        failures.error("%s failed", what, exc_info=(type(exc), exc, exc.__traceback__))
        return f"{what} stopped on an internal error (the details are in the server log)"
    failures.info("%s failed: %s", what, text)
    return text

