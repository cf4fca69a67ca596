"""A TCP relay on 127.0.0.1 in front of a real server: it passes bytes through unchanged and
records, per connection, how much the server sent and which side closed first, and when.

    with Relay(upstream_port) as relay:      # point the client at relay.port
        ...
        seen = relay.received()
        wait_for(lambda: relay.streaming(3000, since=seen), ...)  # a new response is coming in
        wait_for(lambda: relay.closed_by_client(), ...) # the client hung up on a running response
        relay.down(); ...; relay.up()             # the server is unreachable meanwhile (refused)
"""

from __future__ import annotations

import socket
import threading
import time
from dataclasses import dataclass


@dataclass
class Pipe:
    """One relayed connection: bytes each way and when each side closed (time.monotonic())."""

    sent: int = 0  # bytes from the client to the server
    received: int = 0  # bytes from the server to the client
    client_closed: float | None = None  # the client hung up while the server was still open
    server_closed: float | None = None  # the server ended the connection


class Relay:
    """Relays 127.0.0.1:<port> to 127.0.0.1:<upstream>, one pair of threads per connection."""

    def __init__(self, upstream: int) -> None:
        self.upstream = upstream
        self.pipes: list[Pipe] = []
        self._lock = threading.Lock()
        self._listener = socket.create_server(("127.0.0.1", 0))
        self.port = self._listener.getsockname()[1]
        self._open: list[socket.socket] = []

    def __enter__(self) -> Relay:
        threading.Thread(target=self._accept, daemon=True).start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.down()

    def down(self) -> None:
        """Cut every relayed connection and refuse new ones, as a server that went away."""
        _close(self._listener)  # shut down first: a bare close leaves a blocked accept() accepting
        with self._lock:
            for sock in self._open:
                _close(sock)
            self._open.clear()

    def up(self) -> None:
        """Accept connections on the same port again (after `down`)."""
        self._listener = socket.create_server(("127.0.0.1", self.port))
        threading.Thread(target=self._accept, daemon=True).start()

    def received(self) -> list[int]:
        """Bytes each connection has received so far, to count a later response's from."""
        with self._lock:
            return [p.received for p in self.pipes]

    def streaming(self, at_least: int = 1, since: list[int] | None = None) -> Pipe | None:
        """The connection, still open on both sides, that has received at least `at_least` bytes
        since `since` (a `received()` taken before: a kept-alive connection carries earlier
        responses' bytes too)."""
        before = since or []
        with self._lock:
            return next((p for n, p in enumerate(self.pipes)
                         if p.received - (before[n] if n < len(before) else 0) >= at_least
                         and p.client_closed is None and p.server_closed is None), None)

    def _accept(self) -> None:
        listener = self._listener
        while True:
            try:
                client, _ = listener.accept()
            except OSError:  # the relay was closed
                return
            try:
                server = socket.create_connection(("127.0.0.1", self.upstream))
            except OSError:
                _close(client)
                continue
            pipe = Pipe()
            with self._lock:
                self.pipes.append(pipe)
                self._open += [client, server]
            threading.Thread(target=self._pump, args=(client, server, pipe, True), daemon=True).start()
            threading.Thread(target=self._pump, args=(server, client, pipe, False), daemon=True).start()

    def _pump(self, source: socket.socket, target: socket.socket, pipe: Pipe, from_client: bool) -> None:
        while True:
            try:
                data = source.recv(65536)
            except OSError:
                data = b""
            if not data:
                break
            with self._lock:
                if from_client:
                    pipe.sent += len(data)
                else:
                    pipe.received += len(data)
            try:
                target.sendall(data)
            except OSError:
                break
        with self._lock:
            now = time.monotonic()
            if pipe.client_closed is None and pipe.server_closed is None:
                if from_client:
                    pipe.client_closed = now
                else:
                    pipe.server_closed = now
        # Whoever hung up first, the other side sees the connection end at once, as it would
        # without the relay.
        _close(source)
        _close(target)


def _close(sock: socket.socket) -> None:
    try:
        sock.shutdown(socket.SHUT_RDWR)
    except OSError:
        pass
    sock.close()
