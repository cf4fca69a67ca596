"""An OpenAI-compatible endpoint that answers from what an upstream one answered before, for benchmarks
that compare runs of the same requests (bench/heldout.py --each-fix-off --cache DIR).

    .venv/bin/python bench/model_cache.py --upstream http://127.0.0.1:18431/v1 --dir DIR [--port N]

A request body seen before (the same bytes, by SHA-256) gets the recorded answer, its stream replayed
as it came; a new one goes upstream and is recorded when it completed. With a real model this makes the
runs of a comparison see one model: a fix switched off changes the plans it changed and what follows
from them, and every other call is answered as in the run with all fixes on (a small model's answers
otherwise vary with the load: llama.cpp batches). A call that differs costs the model's time; one that
does not costs none, so running the set once per fix costs about one run plus what each fix changed.

Prints the hits and misses when it ends (SIGINT or SIGTERM).
"""

from __future__ import annotations

import argparse
import hashlib
import signal
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import httpx

_HOP = {"content-length", "transfer-encoding", "connection", "content-encoding"}


class Cache:
    """Recorded answers in a directory: `<sha256>.body` (the bytes) and `.type` (their content type)."""

    def __init__(self, directory: Path) -> None:
        self.dir = directory
        self.dir.mkdir(parents=True, exist_ok=True)
        self.hits = self.misses = 0
        self._lock = threading.Lock()

    def get(self, key: str) -> tuple[bytes, str] | None:
        body = self.dir / f"{key}.body"
        if not body.exists():
            with self._lock:
                self.misses += 1
            return None
        with self._lock:
            self.hits += 1
        return body.read_bytes(), (self.dir / f"{key}.type").read_text()

    def put(self, key: str, body: bytes, content_type: str) -> None:
        (self.dir / f"{key}.type").write_text(content_type)
        temporary = self.dir / f"{key}.part"
        temporary.write_bytes(body)
        temporary.replace(self.dir / f"{key}.body")  # whole or not at all


def handler(upstream: str, cache: Cache, client: httpx.Client) -> type[BaseHTTPRequestHandler]:
    class Proxy(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, format: str, *args: object) -> None:  # noqa: A002 - the base class's name
            return

        def _send(self, status: int, content_type: str, body: bytes) -> None:
            self.send_response(status)
            self.send_header("Content-Type", content_type)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def do_GET(self) -> None:  # noqa: N802 - http.server's name
            response = client.get(upstream + self.path.removeprefix("/v1"))
            self._send(response.status_code, response.headers.get("content-type", "application/json"), response.content)

        def do_POST(self) -> None:  # noqa: N802
            body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
            key = hashlib.sha256(self.path.encode() + b"\0" + body).hexdigest()
            if (found := cache.get(key)) is not None:
                self._send(200, found[1], found[0])
                return
            with client.stream("POST", upstream + self.path.removeprefix("/v1"), content=body,
                               headers={"Content-Type": "application/json"}) as response:
                self.send_response(response.status_code)
                for name, value in response.headers.items():
                    if name.lower() not in _HOP:
                        self.send_header(name, value)
                self.send_header("Transfer-Encoding", "chunked")
                self.end_headers()
                recorded = bytearray()
                try:
                    for chunk in response.iter_bytes():
                        recorded += chunk
                        self.wfile.write(b"%x\r\n%s\r\n" % (len(chunk), chunk))
                        self.wfile.flush()
                    self.wfile.write(b"0\r\n\r\n")
                except (BrokenPipeError, ConnectionResetError):
                    return  # the caller stopped reading (a stopped round): nothing whole to record
                if response.status_code == 200:
                    cache.put(key, bytes(recorded), response.headers.get("content-type", "application/json"))

    return Proxy


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--upstream", required=True, help="the real endpoint, e.g. http://127.0.0.1:18431/v1")
    parser.add_argument("--dir", required=True, help="where the answers are recorded")
    parser.add_argument("--port", type=int, default=18440)
    args = parser.parse_args()
    cache = Cache(Path(args.dir))
    client = httpx.Client(timeout=httpx.Timeout(900, connect=10))
    server = ThreadingHTTPServer(("127.0.0.1", args.port), handler(args.upstream.rstrip("/"), cache, client))
    signal.signal(signal.SIGTERM, lambda *_: threading.Thread(target=server.shutdown).start())
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    print(f"model cache: {cache.hits} hits, {cache.misses} misses", file=sys.stderr, flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
