"""Live text: the drafts of the assistant messages model calls are writing (CONTRACT, "Live text").

A draft lives in memory only while it is written, never in the database. The process whose
round writes it holds it as its calls stream; on PostgreSQL every other process receives its
text in batches (one NOTIFY per draft every `BATCH_SECONDS` at most, on the listening
connection) and holds a copy. A draft's id is `<process tag><counter>` (base 36); the message
it becomes names it in `metadata.draftId`, and the event streams (`app.rounds.live`) send its
text from the offset each client has, then the message. A draft that will not become its
message (the call failed, was retried or stopped) is dropped; streams tell their clients with
`discard`.
"""

from __future__ import annotations

import asyncio
import itertools
import logging
import secrets
import time
from bisect import bisect_right
from collections.abc import Awaitable, Callable, Iterator
from contextlib import contextmanager
from typing import Any

import msgspec

from agents.model import CallScope

log = logging.getLogger("foreman.drafts")

BATCH_SECONDS = 0.05  # a draft's text reaches other processes at most this late
NOTIFY_CHARS = 1000  # characters per notification: escaped, at most 6 bytes each, under PostgreSQL's 8000
_DIGITS = "0123456789abcdefghijklmnopqrstuvwxyz"


def _base36(n: int) -> str:
    out = ""
    while True:
        n, r = divmod(n, 36)
        out = _DIGITS[r] + out
        if not n:
            return out


class DraftText:
    """The text of one draft as this process has it: from offset `base` (0 but for a copy that
    started late) to `length`, in the pieces it arrived in."""

    __slots__ = ("id", "workflow_id", "round", "agent", "task", "kind", "base", "length", "parts", "ends", "ended",
                 "broken", "touched")

    def __init__(self, draft_id: str, workflow_id: str, round_no: int, base: int = 0, agent: str = "",
                 task: str = "", kind: str = "") -> None:
        self.id = draft_id
        self.workflow_id = workflow_id
        self.round = round_no
        self.agent = agent  # who writes it, and the task whose step message it is ("" for the manager's)
        self.task = task
        self.kind = kind or ("step" if task else "answer")  # what its message is to a person: plan, step, answer
        self.base = base
        self.length = base
        self.parts: list[str] = []
        self.ends: list[int] = []
        self.ended = False  # its message is being written: a stream that has none of it waits for that
        self.broken = False  # a copy that missed some of the text: streams wait for the message
        self.touched = time.monotonic()

    def add(self, piece: str) -> None:
        self.parts.append(piece)
        self.length += len(piece)
        self.ends.append(self.length)

    def since(self, offset: int) -> str | None:
        """The text from `offset` on ("" when there is none yet); None when this copy cannot tell."""
        if self.broken or offset < self.base:
            return None
        if offset >= self.length:
            return ""
        i = bisect_right(self.ends, offset)
        start = self.ends[i - 1] if i else self.base
        return "".join(self.parts[i:])[offset - start:]

    @property
    def text(self) -> str:
        return "".join(self.parts)


class Draft:
    """The writing end of the draft of one message (the `TextSink` model calls stream into).

    The model's text is shown without its leading and trailing white space (the message keeps
    the model's text stripped); `lead` lines Foreman writes before the model's text are shown
    with its first piece, so an answer that has no streamed text (the offline model) arrives as
    the message's one delta."""

    def __init__(self, drafts: Drafts, workflow_id: str, round_no: int, key: str, agent: str = "",
                 task: str = "", kind: str = "") -> None:
        self.drafts = drafts
        self.workflow_id = workflow_id
        self.round = round_no
        self.key = key
        self.agent, self.task, self.kind = agent, task, kind
        self.current: DraftText | None = None
        self.pending = ""  # shown with the next piece: lead lines, or the text a retraction kept
        self.held = ""  # white space that is shown only when more text follows
        self.started = False  # the call's first visible character was seen
        self.closed = False

    def shown(self) -> int:
        return self.current.length if self.current is not None else 0

    def mark(self) -> int:
        """A call starts: where its text begins."""
        self.held, self.started = "", False
        return self.shown() + len(self.pending)

    def lead(self, text: str) -> None:
        """Foreman's own words before the model's next text."""
        if not self.closed:
            self.pending += text

    def text(self, piece: str) -> None:
        if self.closed or not piece:
            return
        if not self.started:
            piece = piece.lstrip()
            if not piece:
                return
            self.started = True
        body = piece.rstrip()
        if not body:
            self.held += piece
            return
        out, self.pending, self.held = self.pending + self.held + body, "", piece[len(body):]
        if self.current is None:
            self.current = self.drafts.new_text(self.workflow_id, self.round, self.agent, self.task, self.kind)
        self.drafts.wrote(self.current, out)

    def retract(self, mark: int) -> None:
        """Forget the text written after `mark`: a draft that showed some of it is discarded, and
        what it had before `mark` is shown again in the next one."""
        if self.closed:
            return
        shown = self.shown()
        if mark < shown:
            assert self.current is not None
            kept = self.current.text[:mark]
            self.drafts.drop(self.current, discarded=True)
            self.current, self.pending = None, kept
        else:
            self.pending = self.pending[:mark - shown]
        self.held, self.started = "", False


class Drafts:
    """This process's drafts (its own and other processes' copies), by workflow, and the waking of
    the streams that send them."""

    def __init__(self, touch_text: Callable[[str], None], touch: Callable[[str], None],
                 idle_seconds: float = 15.0) -> None:
        # A copy not heard of for `idle_seconds` (HEARTBEAT_TIMEOUT_SECONDS: when the replica would be
        # taken over) was written by a process that died; writers speak up three times as often.
        self.idle_seconds = idle_seconds
        self.tag = "".join(secrets.choice(_DIGITS) for _ in range(5))
        self._numbers = itertools.count(1)
        self.touch_text = touch_text  # text was added: wake the workflow's streams to send it
        self.touch = touch  # a draft went away: its streams read the database before they discard it
        self.live: dict[str, dict[str, DraftText]] = {}
        self._writing: dict[str, Draft] = {}  # by message key
        self.sender: Callable[[list[str]], Awaitable[None]] | None = None  # NOTIFY, on PostgreSQL
        self._outbox: dict[str, tuple[DraftText, int, list[str]]] = {}
        self._control: list[str] = []
        self._sent_at: dict[str, float] = {}
        self._flusher: asyncio.Task[None] | None = None
        self._sweeper: asyncio.Task[None] | None = None

    def of(self, workflow_id: str) -> dict[str, DraftText]:
        return self.live.get(workflow_id) or {}

    # --- the writing side ---------------------------------------------------------------------------

    @contextmanager
    def writing(self, workflow_id: str, round_no: int, key: str, agent: str = "project_manager",
                task: str = "", kind: str = "") -> Iterator[Draft]:
        """The prose calls of this context write the draft of the message keyed `key` (by `agent`, the
        step message of `task` when one is named; `kind` what the message will be to a person, "plan",
        "step" or "answer", by default a step when a task is named, else the answer); the journal's write
        of that message ends it, a failure here discards it. The calls' scope names the task (the model
        I/O log and the server log say which task a call or a line served)."""
        draft = Draft(self, workflow_id, round_no, key, agent, task, kind)
        self._writing[key] = draft
        try:
            with CallScope.entered(task=task or None, draft=draft):
                yield draft
        except BaseException:
            self.abandon(key)
            raise

    def new_text(self, workflow_id: str, round_no: int, agent: str = "", task: str = "", kind: str = "") -> DraftText:
        draft = DraftText(f"{self.tag}{_base36(next(self._numbers))}", workflow_id, round_no, agent=agent, task=task,
                          kind=kind)
        self.live.setdefault(workflow_id, {})[draft.id] = draft
        return draft

    def wrote(self, draft: DraftText, piece: str) -> None:
        start = draft.length
        draft.add(piece)
        self.touch_text(draft.workflow_id)
        if self.sender is not None:
            pending = self._outbox.get(draft.id)
            if pending is None:
                self._outbox[draft.id] = (draft, start, [piece])
            else:
                pending[2].append(piece)
            self._start_flusher()

    def closing(self, key: str, content: str) -> str | None:
        """The message keyed `key` is about to be written with `content`: the id of its draft (a new
        one, the old discarded, when what was shown does not begin the content), or None."""
        draft = self._writing.get(key)
        if draft is None:
            return None
        draft.closed = True
        current = draft.current
        if current is not None and not content.startswith(current.text):
            self.drop(current, discarded=True)
            current = None
        if current is None:
            current = self.new_text(draft.workflow_id, draft.round, draft.agent, draft.task, draft.kind)
        current.ended = True
        draft.current = current
        return current.id

    def landed(self, key: str, stored: bool) -> None:
        """The write of the message keyed `key` is over: its draft goes (discarded unless `stored`)."""
        draft = self._writing.pop(key, None)
        if draft is not None and draft.current is not None:
            self.drop(draft.current, discarded=not stored)

    def abandon(self, key: str) -> None:
        """The draft of `key` will not become its message."""
        draft = self._writing.pop(key, None)
        if draft is not None:
            draft.closed = True
            if draft.current is not None:
                self.drop(draft.current, discarded=True)

    def abandon_workflow(self, workflow_id: str) -> None:
        """Every draft this process writes for the workflow ends (a stop, the end of its round)."""
        for key in [k for k, d in self._writing.items() if d.workflow_id == workflow_id]:
            self.abandon(key)

    def drop(self, draft: DraftText, discarded: bool) -> None:
        drafts = self.live.get(draft.workflow_id)
        if drafts is None or drafts.pop(draft.id, None) is None:
            return
        if not drafts:
            del self.live[draft.workflow_id]
        self._outbox.pop(draft.id, None)
        self._sent_at.pop(draft.id, None)
        if self.sender is not None and draft.id.startswith(self.tag):
            self._control.append(msgspec.json.encode(
                {"w": draft.workflow_id, "d": draft.id, "e": "discard" if discarded else "end"}).decode())
            self._start_flusher()
        self.touch(draft.workflow_id)

    # --- other processes (PostgreSQL) ---------------------------------------------------------------

    def _start_flusher(self) -> None:
        if self._flusher is None or self._flusher.done():
            self._flusher = asyncio.get_running_loop().create_task(self._flush_forever())

    async def _flush_forever(self) -> None:
        while self._outbox or self._control or any(d.startswith(self.tag) for w in self.live.values() for d in w):
            await asyncio.sleep(BATCH_SECONDS)
            payloads = self._batch()
            if payloads and self.sender is not None:
                try:
                    await self.sender(payloads)
                except Exception as exc:  # the copies see a gap and wait for the message instead
                    log.warning("Draft text not sent to other replicas (%s).", exc)

    def _batch(self) -> list[str]:
        now = time.monotonic()
        payloads = []
        outbox, self._outbox = self._outbox, {}
        for draft_id, (draft, start, pieces) in outbox.items():
            text = "".join(pieces)
            for i in range(0, len(text), NOTIFY_CHARS):
                payloads.append(self._text_payload(draft, start + i, text[i:i + NOTIFY_CHARS]))
            self._sent_at[draft_id] = now
        for drafts in self.live.values():  # a silent writer says it is alive
            for draft in drafts.values():
                if draft.id.startswith(self.tag) and now - self._sent_at.get(draft.id, 0.0) > self.idle_seconds / 3:
                    payloads.append(self._text_payload(draft, draft.length, ""))
                    self._sent_at[draft.id] = now
        payloads += self._control
        self._control = []
        return payloads

    @staticmethod
    def _text_payload(draft: DraftText, offset: int, text: str) -> str:
        return msgspec.json.encode({"w": draft.workflow_id, "d": draft.id, "r": draft.round, "a": draft.agent,
                                    "k": draft.task, "s": draft.kind, "o": offset, "t": text}).decode()

    def receive(self, payload: str) -> None:
        """A notification of another process's draft: text, its end or its discard."""
        try:
            note: dict[str, Any] = msgspec.json.decode(payload)
            workflow_id, draft_id = note["w"], note["d"]
        except (msgspec.DecodeError, KeyError, TypeError):
            log.warning("A draft notification that is not one: %.80r", payload)
            return
        if draft_id.startswith(self.tag):
            return
        drafts = self.live.get(workflow_id) or {}
        if "e" in note:
            draft = drafts.get(draft_id)
            if draft is not None:
                self.drop(draft, discarded=note["e"] == "discard")
            return
        draft = drafts.get(draft_id)
        offset, text = int(note.get("o", 0)), str(note.get("t", ""))
        if draft is None:
            draft = DraftText(draft_id, workflow_id, int(note.get("r", 0)), base=offset, agent=str(note.get("a", "")),
                              task=str(note.get("k", "")), kind=str(note.get("s", "")))
            self.live.setdefault(workflow_id, {})[draft_id] = draft
            if self._sweeper is None or self._sweeper.done():
                self._sweeper = asyncio.get_running_loop().create_task(self._sweep_forever())
        draft.touched = time.monotonic()
        if offset != draft.length:
            draft.broken = True  # a notification was missed: the message will carry the text
        if text and not draft.broken:
            draft.add(text)
            self.touch_text(workflow_id)

    def mark_ended(self, workflow_id: str, draft_id: str) -> None:
        """A stream sent the message of this draft: it is not started again for anyone."""
        draft = self.of(workflow_id).get(draft_id)
        if draft is not None:
            draft.ended = True

    async def _sweep_forever(self) -> None:
        while any(not d.startswith(self.tag) for w in self.live.values() for d in w):
            await asyncio.sleep(min(1.0, self.idle_seconds / 4))
            now = time.monotonic()
            for drafts in list(self.live.values()):
                for draft in list(drafts.values()):
                    if not draft.id.startswith(self.tag) and now - draft.touched > self.idle_seconds:
                        log.info("Draft %s of %s: its writer went silent; discarded.", draft.id, draft.workflow_id)
                        self.drop(draft, discarded=True)

    async def close(self) -> None:
        for task in (self._flusher, self._sweeper):
            if task is not None:
                task.cancel()
                await asyncio.gather(task, return_exceptions=True)
