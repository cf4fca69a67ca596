"""A server-sent event client for tests: reads a stream in a thread, keeps what it received."""

from __future__ import annotations

import contextlib
import json
import socket
import threading
from dataclasses import dataclass, field
from typing import Any

import httpx

from tests.harness import wait_for


@dataclass
class Event:
    """One event as received: its name, id and decoded JSON data."""

    event: str
    id: str
    data: Any


@dataclass
class EventReader:
    """GET the stream in a background thread; `events`, `comments` fill as lines arrive."""

    url: str
    headers: dict[str, str] = field(default_factory=dict)
    params: dict[str, Any] = field(default_factory=dict)
    events: list[Event] = field(default_factory=list)
    comments: list[str] = field(default_factory=list)
    status_code: int | None = None
    content_type: str = ""
    error: BaseException | None = None
    ended: bool = False

    def __post_init__(self) -> None:
        self._lock = threading.Lock()
        self._closed = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._response: httpx.Response | None = None

    def start(self) -> EventReader:
        self._thread.start()
        return self

    def _run(self) -> None:
        try:
            with httpx.Client(timeout=httpx.Timeout(30, read=None)) as client, \
                    client.stream("GET", self.url, headers=self.headers, params=self.params) as response:
                self._response = response
                self.status_code, self.content_type = response.status_code, response.headers.get("content-type", "")
                name, event_id, data = "message", "", []
                for line in response.iter_lines():
                    if self._closed.is_set():
                        return
                    if line.startswith(":"):
                        with self._lock:
                            self.comments.append(line[1:].strip())
                    elif line.startswith("event:"):
                        name = line[6:].strip()
                    elif line.startswith("id:"):
                        event_id = line[3:].strip()
                    elif line.startswith("data:"):
                        data.append(line[5:].lstrip())
                    elif line == "" and data:
                        with self._lock:
                            self.events.append(Event(name, event_id, json.loads("\n".join(data))))
                        name, data = "message", []
        except BaseException as exc:  # the test sees it through `error`
            if not self._closed.is_set():
                self.error = exc
        finally:
            self.ended = True

    def close(self) -> None:
        """Drop the connection, as a client that goes away mid-stream.

        The socket is shut down first: closing the response alone did not wake the thread blocked
        reading it, which then waited for the stream's next line (up to its 15 s keepalive) and
        cost each close 10 s (the join's bound) one time in two."""
        self._closed.set()
        response = self._response
        if response is not None:
            stream = response.extensions.get("network_stream")
            sock = stream.get_extra_info("socket") if stream is not None else None
            if sock is not None:
                with contextlib.suppress(OSError):
                    sock.shutdown(socket.SHUT_RDWR)
            response.close()
        self._thread.join(10)

    def snapshot(self) -> list[Event]:
        with self._lock:
            return list(self.events)

    def of(self, kind: str) -> list[Any]:
        return [e.data for e in self.snapshot() if e.event == kind]

    def last_status(self) -> dict[str, Any] | None:
        statuses = self.of("status")
        return statuses[-1] if statuses else None


def until_status(reader: EventReader, *statuses: str, timeout: float = 60) -> dict[str, Any]:
    def check() -> dict[str, Any] | None:
        if reader.error:
            raise AssertionError(f"the stream broke: {reader.error!r}")
        last = reader.last_status()
        return last if last and last["status"] in statuses else None

    return wait_for(check, timeout, f"a status event {statuses}")


def poll_all(client: httpx.Client, workflow_id: str, kind: str) -> list[dict[str, Any]]:
    """Every item by cursor, as a poller collects them."""
    out: list[dict[str, Any]] = []
    while True:
        params = {"id": out[-1]["id"]} if out else {}
        page = client.get(f"/api/workflows/{workflow_id}/{kind}", params=params).json()
        out += page["items"]
        if not page["hasMore"]:
            return out
