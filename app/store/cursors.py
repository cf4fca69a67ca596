"""An in-process cache of each workflow's owner and last message and log ids.

It lets the empty poll (`messages?id=<last>`) answer without a database round trip. It is only
ever used to answer "nothing new": a stale entry delays new items by one poll, never skips
them, because a poller's cursor only moves on items read from the database. A write raises it
before it commits (`raise_to`, through `Database.on_ids`), so no reader sees a commit with the cache
behind it; the journal's `advance` after the commit tells the waiting streams. With several
processes on PostgreSQL, `app.store.notify` feeds it the other processes' writes.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass


@dataclass
class Cursor:
    """What the cache knows of one workflow."""

    mandate_id: int
    user_id: int
    last_message_id: int
    last_log_id: int


class CursorCache:
    """Workflow id -> Cursor, bounded."""

    def __init__(self, capacity: int = 100_000, on_change: Callable[[str], None] | None = None) -> None:
        self._entries: dict[str, Cursor] = {}
        self._capacity = capacity
        self.enabled = True
        self.generation = 0  # raised by `clear`: what was counted from notifications before may have missed some
        self.on_change = on_change  # told of every write, here or (through app.store.notify) in another process

    def get(self, workflow_id: str) -> Cursor | None:
        return self._entries.get(workflow_id) if self.enabled else None

    def put(self, workflow_id: str, cursor: Cursor) -> None:
        if len(self._entries) >= self._capacity:
            self._entries.pop(next(iter(self._entries)))
        self._entries[workflow_id] = cursor
        self._changed(workflow_id)

    def advance(self, workflow_id: str, last_message_id: int, last_log_id: int) -> None:
        """Note a write; ids only ever grow, so an older notification never moves them back."""
        entry = self._entries.get(workflow_id)
        if entry is not None:
            entry.last_message_id = max(entry.last_message_id, last_message_id)
            entry.last_log_id = max(entry.last_log_id, last_log_id)
        self._changed(workflow_id)

    def raise_to(self, workflow_id: str, last_message_id: int, last_log_id: int) -> None:
        """Note a write's ids before it commits, from the thread that writes it (`Database.on_ids`), telling
        no one: a reader that sees the commit must not find the cache behind it and answer "nothing new"
        (the commit can be read before the writer's coroutine resumes to `advance`). Ahead of the
        database the cache only costs a read that finds nothing yet; ids only ever grow."""
        entry = self._entries.get(workflow_id)
        if entry is not None:
            if last_message_id > entry.last_message_id:
                entry.last_message_id = last_message_id
            if last_log_id > entry.last_log_id:
                entry.last_log_id = last_log_id

    def drop(self, workflow_id: str) -> None:
        self._entries.pop(workflow_id, None)
        self._changed(workflow_id)

    def _changed(self, workflow_id: str) -> None:
        if self.on_change is not None:
            self.on_change(workflow_id)

    def clear(self) -> None:
        self.generation += 1
        self._entries.clear()
