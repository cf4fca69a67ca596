"""What one event stream sends of a workflow's drafts: `delta` and `discard` events.

A stream keeps, for each draft it has sent part of, the offset its client has; the event id
carries them (`<lastMessageId>-<lastLogId>~<draftId>:<offset>...`), so a client that comes
back with it is sent each draft from where it was. The message a draft becomes ends it: the
stream sends whatever of its content the client lacks as one last delta, then the message.
So the message is the authority on the text: a copy on another replica that missed a batch,
or a draft whose text arrives after its message was read, costs nothing but that.
"""

from __future__ import annotations

from collections.abc import Iterator

from app.rounds.drafts import Drafts, DraftText
from app.store.tables import MessageRow

ENDING_STATUSES = frozenset({"stopped", "failed"})  # a log that ends its round before its messages are all written


class LiveText:
    """One stream's view of the drafts of its workflow."""

    def __init__(self, drafts: Drafts, workflow_id: str, offsets: dict[str, int]) -> None:
        self.drafts = drafts
        self.workflow_id = workflow_id
        self.offsets = offsets  # the position's: draft id -> characters the client has
        self.done: set[str] = set()  # drafts this stream ended (message or discard): never started again
        self.closed_round = 0  # drafts of this round and before are over: its end was sent
        self._gone: set[str] = set()

    def before_read(self) -> None:
        """Before a database read: the drafts the client has part of that are no longer written. Each
        either became a message, which this read returns, or was discarded."""
        live = self.drafts.of(self.workflow_id)
        self._gone = {d for d in self.offsets if d not in live}

    def tail(self, row: MessageRow) -> tuple[str, int, str] | None:
        """Before a message's event: the rest of its draft (id, offset, text) the client lacks, or None."""
        draft_id = row.meta.get("draftId") if row.role == "assistant" else None
        if not isinstance(draft_id, str):
            return None
        offset = self.offsets.pop(draft_id, 0)
        self.done.add(draft_id)
        self._gone.discard(draft_id)
        self.drafts.mark_ended(self.workflow_id, draft_id)
        if offset >= len(row.content):
            return None
        self.offsets[draft_id] = len(row.content)  # the delta's id says the client has it all ...
        return draft_id, offset, row.content[offset:]

    def ended(self, draft_id: str) -> None:
        self.offsets.pop(draft_id, None)  # ... and the message's id no longer names it

    def after_log(self, status: str, round_no: int) -> list[str]:
        """After a log: the drafts to discard when it ends its round (stopped, failed)."""
        if status not in ENDING_STATUSES:
            return []
        self.closed_round = max(self.closed_round, round_no)
        live = self.drafts.of(self.workflow_id)
        over = [d for d in self.offsets if d not in live or live[d].round <= round_no]
        return self._end(over)

    def after_read(self) -> list[str]:
        """After a database read: the drafts that went without a message were discarded."""
        over = [d for d in self._gone if d in self.offsets]
        self._gone = set()
        live = self.drafts.of(self.workflow_id)
        self.done &= live.keys()  # a draft no longer held cannot come back
        return self._end(over)

    def _end(self, draft_ids: list[str]) -> list[str]:
        for draft_id in draft_ids:
            self.offsets.pop(draft_id, None)
            self.done.add(draft_id)
        return draft_ids

    def deltas(self) -> Iterator[tuple[str, int, str, DraftText]]:
        """The text written since the client's offsets (id, offset, text, draft), each draft's in one piece."""
        for draft_id, draft in list(self.drafts.of(self.workflow_id).items()):
            if draft_id in self.done or draft.round <= self.closed_round:
                continue
            offset = self.offsets.get(draft_id)
            if offset is None:
                if draft.ended:  # its message is being written: it follows whole
                    continue
                offset = 0
            text = draft.since(offset)
            if text:
                self.offsets[draft_id] = offset + len(text)
                yield draft_id, offset, text, draft


def delta_view(draft_id: str, offset: int, text: str, draft: DraftText | None = None) -> dict[str, object]:
    """A delta; a draft's first (offset 0) also says who writes it and what its message will be (`kind`:
    plan, step, answer; `taskId` for a step), so a page draws the draft as that message, in place."""
    view: dict[str, object] = {"messageId": draft_id, "offset": offset, "text": text}
    if offset == 0 and draft is not None:
        view |= {"agentName": draft.agent, "kind": draft.kind}
        if draft.task:
            view["taskId"] = draft.task
    return view


def discard_view(draft_id: str) -> dict[str, object]:
    return {"messageId": draft_id}
