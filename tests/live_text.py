"""A client of the event stream's live text, as a page keeps it: drafts grown by deltas, checked
to arrive exactly once (each delta's offset is the length the client has), replaced by their
message or dropped by a discard; it may drop the connection at random points and come back
with its last event id."""

from __future__ import annotations

import json
import random
import threading
import time
from dataclasses import dataclass, field
from typing import Any

import httpx


@dataclass
class LiveText:
    """What a client holds: messages by id (each once), drafts being written, drafts each message
    was written as (their full delta text), the order of events."""

    messages: dict[int, dict[str, Any]] = field(default_factory=dict)
    drafts: dict[str, str] = field(default_factory=dict)
    finished: dict[str, str] = field(default_factory=dict)  # draft id -> its text, once its message came
    discarded: list[str] = field(default_factory=list)
    events: list[tuple[str, Any]] = field(default_factory=list)
    status: dict[str, Any] | None = None
    last_id: str = ""
    errors: list[str] = field(default_factory=list)

    def take(self, name: str, event_id: str, data: Any) -> None:
        self.events.append((name, data))
        if name == "delta":
            have = self.drafts.get(data["messageId"], "")
            if data["messageId"] in self.finished:
                self.errors.append(f"a delta after its message: {data}")
            if data["offset"] != len(have):
                self.errors.append(f"delta at {data['offset']} when the client has {len(have)}: {data}")
            self.drafts[data["messageId"]] = have + data["text"]
        elif name == "discard":
            self.drafts.pop(data["messageId"], None)
            self.discarded.append(data["messageId"])
        elif name == "message":
            if data["id"] in self.messages:
                self.errors.append(f"message {data['id']} twice")
            self.messages[data["id"]] = data
            draft_id = (data.get("metadata") or {}).get("draftId")
            if draft_id:
                self.finished[draft_id] = self.drafts.pop(draft_id, "")
        elif name == "status":
            self.status = data
        self.last_id = event_id or self.last_id

    def check(self) -> None:
        """Every assistant message is its deltas joined; nothing arrived twice or out of place."""
        assert not self.errors, self.errors[:5]
        for message in self.messages.values():
            if message["role"] != "assistant":
                continue
            draft_id = message["metadata"].get("draftId")
            assert draft_id, message
            assert self.finished[draft_id] == message["content"], (self.finished[draft_id], message["content"])
        assert not self.drafts, f"drafts left without their message: {self.drafts}"


def read(url: str, live: LiveText, stop: threading.Event, drop_after: int | None = None,
         until: Any = None, timeout: float = 120) -> None:
    """Read the stream into `live` until `until(live)` (or `stop`), or drop it after `drop_after` events.

    Fails after `timeout` seconds without reaching its end (the stream's keepalive comments, every
    15 s at most, let the check run even when no event comes), so a round that never ends fails."""
    headers = {"Last-Event-ID": live.last_id} if live.last_id else {}
    count = 0
    deadline = time.monotonic() + timeout
    with httpx.Client(timeout=httpx.Timeout(30, read=30)) as client, \
            client.stream("GET", url, headers=headers) as response:
        assert response.status_code == 200, response.read()
        name, event_id, data = "message", "", []
        for line in response.iter_lines():
            if time.monotonic() > deadline:
                raise AssertionError(f"the stream did not reach its end within {timeout:g} s; last status "
                                     f"{live.status}, drafts {sorted(live.drafts)}")
            if line.startswith("event:"):
                name = line[6:].strip()
            elif line.startswith("id:"):
                event_id = line[3:].strip()
            elif line.startswith("data:"):
                data.append(line[5:].lstrip())
            elif line == "" and data:
                live.take(name, event_id, json.loads("\n".join(data)))
                name, data, count = "message", [], count + 1
                if (drop_after is not None and count >= drop_after) or stop.is_set() or (until and until(live)):
                    return


def done(live: LiveText) -> bool:
    return bool(live.status and live.status["status"] in ("completed", "failed", "stopped"))


def read_with_drops(url: str, drops: int, seed: int = 7) -> LiveText:
    """A reader that drops the connection `drops` times at random points, then reads to the end."""
    rng = random.Random(seed)
    live, stop = LiveText(), threading.Event()
    for _ in range(drops):
        read(url, live, stop, drop_after=rng.randint(1, 12))
    read(url, live, stop, until=done)
    return live
