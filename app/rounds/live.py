"""A workflow's live event stream: what polling returns, pushed as server-sent events.

A stream keeps the two poll cursors and, each time it is woken, reads the pages after them
from the database exactly as a poller would. So it promises what polling promises (every
item once, in order, no gaps, also across a deleted message) and holds nothing but one
page per client. It is woken by `Changes`, which the cursor cache pokes on every write of
this process and, on PostgreSQL, on every write another process announces with NOTIFY.
Between reads it sends the text of the drafts being written (`app.rounds.live_text`), woken
for that alone without reading the database.
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import AsyncGenerator, AsyncIterator, Callable
from dataclasses import dataclass, field
from typing import Any, Protocol

import msgspec

from app.contract.views import log_view, message_view, status_view
from app.errors import BadRequestError
from app.rounds.drafts import Drafts
from app.rounds.live_text import LiveText, delta_view, discard_view
from app.store.records import Owner
from app.store.repository import Repository
from app.store.tables import FileRow, stored_id

PAGE = 100
DEAF_RECHECK_SECONDS = 1.0  # while the PostgreSQL listener is down, streams re-read this often
MAX_DRAFTS_IN_ID = 64
EVENT_ID = re.compile(r"^(\d{1,19})-(\d{1,19})((?:~[0-9a-z]{2,24}:\d{1,12}){0,%d})$" % MAX_DRAFTS_IN_ID)  # noqa: UP031 (a regex's braces)
DRAFT_OFFSET = re.compile(r"~([0-9a-z]+):(\d+)")


class Wake(asyncio.Event):
    """A stream's wake-up: `db` when the workflow was written to, `text` when a draft grew."""

    def __init__(self) -> None:
        super().__init__()
        self.db = True
        self.text = False


class Changes:
    """Per workflow, the wake-up events of the streams that follow it."""

    def __init__(self) -> None:
        self._waiters: dict[str, set[Wake]] = {}

    def subscribe(self, workflow_id: str) -> Wake:
        event = Wake()
        self._waiters.setdefault(workflow_id, set()).add(event)
        return event

    def touch_text(self, workflow_id: str) -> None:
        """A draft of the workflow grew: wake its streams to send the text (no database read)."""
        for event in self._waiters.get(workflow_id, ()):
            event.text = True
            event.set()

    def unsubscribe(self, workflow_id: str, event: Wake) -> None:
        waiters = self._waiters.get(workflow_id)
        if waiters is not None:
            waiters.discard(event)
            if not waiters:
                del self._waiters[workflow_id]

    def touch(self, workflow_id: str) -> None:
        """Something was written to the workflow: wake its streams."""
        for event in self._waiters.get(workflow_id, ()):
            event.db = True
            event.set()

    def __len__(self) -> int:
        return sum(len(w) for w in self._waiters.values())


@dataclass
class Position:
    """Where a stream stands: the last message and log ids it sent, and how much of each draft."""

    message_id: int = 0
    log_id: int = 0
    drafts: dict[str, int] = field(default_factory=dict)

    @property
    def event_id(self) -> str:
        if not self.drafts:
            return f"{self.message_id}-{self.log_id}"
        return f"{self.message_id}-{self.log_id}" + "".join(f"~{d}:{o}" for d, o in self.drafts.items())


def parse_event_id(raw: str) -> Position:
    """A `Last-Event-ID` as sent back by a client, or BadRequestError."""
    match = EVENT_ID.match(raw.strip())
    if match is None:
        raise BadRequestError(f"Last-Event-ID must be an id this stream sent, like '12-40', not {raw[:40]!r}.",
                              code="bad_event_id")
    return Position(int(match[1]), int(match[2]), {d: int(o) for d, o in DRAFT_OFFSET.findall(match[3])})


# Characters JSON may leave raw that readers splitting lines like Python's str.splitlines take as line
# ends (httpx's iter_lines, and the SSE clients built on it): U+0085, U+2028, U+2029, as in a PDF's
# paragraph separators. Escaped, an event's data stays one line for every reader and parses the same.
_OTHER_LINE_ENDS = ((b"\xc2\x85", b"\\u0085"), (b"\xe2\x80\xa8", b"\\u2028"), (b"\xe2\x80\xa9", b"\\u2029"))


def one_line(data: bytes) -> bytes:
    """JSON bytes with U+0085, U+2028 and U+2029 escaped (they can only be inside its strings)."""
    for raw, escaped in _OTHER_LINE_ENDS:
        data = data.replace(raw, escaped)
    return data


def event_data(value: Any) -> bytes:
    """`value` as JSON on one line for a server-sent event's `data:` (msgspec escapes CR and LF)."""
    return one_line(msgspec.json.encode(value))


def frame(event: str, event_id: str, data: bytes) -> bytes:
    """One server-sent event, its data made by `event_data`."""
    return b"event: %s\nid: %s\ndata: %s\n\n" % (event.encode(), event_id.encode(), data)


HEARTBEAT = b": keepalive\n\n"


class Workflows(Protocol):
    """What a stream reads through: the workflow service (`app.services.workflows`, a wing above)."""

    @property
    def repo(self) -> Repository: ...

    async def blobs(self, include: bool, files: dict[int, FileRow]) -> Callable[[FileRow], bytes] | None: ...


class EventStream:
    """Reads one workflow's new items after a position and renders them as events."""

    def __init__(self, workflows: Workflows, owner: Owner, workflow_id: str, position: Position, include_data: bool,
                 heartbeat: float, listening: Callable[[], bool], drafts: Drafts | None = None) -> None:
        self.workflows = workflows
        self.repo = workflows.repo
        self.owner = owner
        self.workflow_id = workflow_id
        self.position = position
        self.include_data = include_data
        self.heartbeat = heartbeat
        self.listening = listening  # False while cross-process notifications may be missed
        self._status: tuple[str, int, int, int | None] | None = None
        self.gone = False  # the workflow was deleted
        self.tokens_used = 0  # the workflow's tokens as the last read saw them (with the status it yielded)
        # With `drafts`, live text too: ("delta", {messageId, offset, text}), ("discard", {messageId}).
        self.text = LiveText(drafts, workflow_id, position.drafts) if drafts is not None else None

    async def check_cursors(self) -> None:
        """Cursors that never belonged to this workflow are a 400, as for polling."""
        for kind, after in (("messages", self.position.message_id), ("logs", self.position.log_id)):
            if after and not await self.repo.messages.cursor_belongs(self.workflow_id, kind, after):
                raise BadRequestError(f"{after} is not the id of a {kind[:-1]} of this workflow; pass the last "
                                      "ids you received, or none to start from the beginning.", code="bad_cursor")

    async def run(self, changes: Changes) -> AsyncGenerator[bytes, None]:
        """Backlog first, then live items, as server-sent events; ends when the workflow is deleted."""
        yield b"retry: 2000\n\n"
        async for event, view in self.follow(changes):
            yield HEARTBEAT if view is None else frame(event, self.position.event_id, event_data(view))

    async def follow(self, changes: Changes) -> AsyncGenerator[tuple[str, Any], None]:
        """Backlog first, then live items as typed views: ("message" | "update", Message), ("log", LogEntry),
        ("status", WorkflowStatusView), and ("heartbeat", None) after `heartbeat` seconds with nothing to say.
        Ends when the workflow is deleted. The event stream and the protocol adapters read rounds here."""
        loop = asyncio.get_running_loop()
        wake = changes.subscribe(self.workflow_id)
        try:
            quiet_since = loop.time()
            while True:
                read, wake.db, wake.text = wake.db, False, False
                wake.clear()  # before reading: a write during the read wakes the next round
                if read:
                    if self.text is not None:
                        self.text.before_read()
                    async for item in self._read():
                        quiet_since = loop.time()
                        yield item
                    if self.gone:
                        return
                    if self.text is not None:
                        for draft_id in self.text.after_read():
                            yield "discard", discard_view(draft_id)
                if self.text is not None:
                    for draft_id, offset, text, draft in self.text.deltas():
                        quiet_since = loop.time()
                        yield "delta", delta_view(draft_id, offset, text, draft)
                wait = max(0.0, quiet_since + self.heartbeat - loop.time())
                if not self.listening():
                    wait = min(wait, DEAF_RECHECK_SECONDS)
                if not await self._wait(wake, wait):
                    wake.db = True  # a quiet spell (or a deaf listener): read again anyway, as ever
                    if loop.time() - quiet_since >= self.heartbeat:
                        quiet_since = loop.time()
                        yield "heartbeat", None
        finally:
            changes.unsubscribe(self.workflow_id, wake)

    async def _wait(self, wake: asyncio.Event, seconds: float) -> bool:
        try:
            async with asyncio.timeout(seconds):
                await wake.wait()
            return True
        except TimeoutError:
            return False

    async def _read(self) -> AsyncIterator[tuple[str, Any]]:
        # Each page is one snapshot: the workflow row, then the items up to its last ids, so the
        # status sent after them is never older than they are; whatever is written meanwhile
        # wakes the next read.
        while True:
            page = await self.repo.live.page(self.owner, self.workflow_id, self.position.message_id,
                                             self.position.log_id, PAGE)
            if page is None:
                self.gone = True
                return
            blobs = await self.workflows.blobs(self.include_data, page.files)
            row = page.workflow
            self.tokens_used = row.tokens_used
            for message, docs in page.messages:
                if self.text is not None and (tail := self.text.tail(message)) is not None:
                    yield "delta", delta_view(*tail)
                    self.text.ended(tail[0])
                self.position.message_id = stored_id(message)
                yield "message", message_view(message, docs, page.files, blobs)
            caught_up = len(page.messages) < PAGE and len(page.logs) < PAGE
            if len(page.messages) < PAGE:  # the rest up to the row's last id was deleted: skip it for good
                self.position.message_id = max(self.position.message_id, row.last_message_id)
            for entry, updated in page.logs:
                self.position.log_id = stored_id(entry)
                view = log_view(entry, self.owner.mandate_id, self.owner.user_id, updated)
                yield "log", view
                if self.text is not None and entry.status in ("stopped", "failed"):
                    for draft_id in self.text.after_log(entry.status, entry.round):
                        yield "discard", discard_view(draft_id)
                if updated in page.updated:  # the message it names, with the contents just filled in
                    message, docs = page.updated[updated]
                    yield "update", message_view(message, docs, page.files, blobs)
            if caught_up:
                break
        status = status_view(row)
        key = (status.status, status.current_round, status.progress,
               status.waiting_for.message_id if status.waiting_for else None)
        if key != self._status:
            self._status = key
            yield "status", status
