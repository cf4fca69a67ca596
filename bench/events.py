"""The event stream: delivery latency against polling, and what idle streams cost the empty poll.

    python bench/events.py [--items 500] [--streams 200] [--seconds 3] [--turns 5]

Starts `python -m app` on 127.0.0.1 with a fresh data dir (SQLite, one process, offline model).

1. Latency: after a first round, rounds run one after another in one workflow until `--items`
   messages and logs were written. One client follows the workflow's event stream, another polls
   both cursors every 250 ms, both from the end of the first round, so every item counted was
   written while they followed (the first round's items, written before the stream was opened,
   came in its backlog at connection: 9-11 of 500 items at 100-390 ms, which made the whole p99).
   An item's latency is its arrival at the client minus the time the server stamped on it in the
   writing transaction (`timestamp` of a log, `finishedAt` of a message; same machine, same
   clock). Prints median and p99 of both (target: stream p99 < 50 ms), and the server's CPU and
   its threads' wait for a core (schedstat) per second meanwhile.
2. Idle streams: the empty-poll ratio of bench/polling.py (empty poll vs /health under wrk,
   50 connections) without and with `--streams` idle event streams open on the same process,
   in `--turns` interleaved turns (the order alternating). Each turn gives the change of the
   ratio with the streams against the one measured next to it without them; prints the median
   change and its spread (target: within 10 %). The ratio is given twice: by throughput (as
   bench/polling.py) and by the server's CPU time per request (/health's over the poll's, from
   /proc), which the other processes of a shared machine move far less. Then the server's CPU
   while only the idle streams are open.

Prints the load average before and after each part: the figures mean little without it.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import socket
import tempfile
import threading
import time
from datetime import datetime

import httpx
from common import completed_workflow, cpu_seconds, free_port, median, service, wait, waited_seconds
from polling import wrk_run

POLL_INTERVAL = 0.25
SETTLE = 2.0  # seconds after opening the idle streams (200 first reads) before measuring, and likewise without


def stamp(item: dict) -> float:
    return datetime.fromisoformat(item.get("timestamp") or item["finishedAt"]).timestamp()


def percentile(values: list[float], share: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(share * len(ordered)))]


class Arrivals:
    """Arrival latencies by item, as one client saw them."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.latency: dict[tuple[str, int], float] = {}

    def note(self, kind: str, item: dict) -> None:
        now = time.time()
        with self.lock:
            self.latency.setdefault((kind, item["id"]), now - stamp(item))

    def __len__(self) -> int:
        return len(self.latency)


def follow(base: str, wid: str, cursors: dict[str, int], seen: Arrivals, done: threading.Event,
           connected: threading.Event) -> None:
    params = {"messageId": cursors["messages"], "logId": cursors["logs"]}
    try:
        with httpx.Client(timeout=httpx.Timeout(30, read=None)) as client, \
                client.stream("GET", f"{base}/api/workflows/{wid}/events", params=params) as response:
            kind, data = "", ""
            for line in response.iter_lines():
                if done.is_set():
                    return
                if line.startswith("event:"):
                    kind = line[6:].strip()
                elif line.startswith("data:"):
                    data = line[5:].strip()
                elif not line and data:
                    if kind in ("message", "log"):
                        seen.note(kind + "s", json.loads(data))
                    elif kind == "status":  # sent after the first read: the stream follows the workflow now
                        connected.set()
                    data = ""
    except httpx.HTTPError:
        if not done.is_set():  # the server going away at the end is not news
            raise


def poll(base: str, wid: str, after: dict[str, int], seen: Arrivals, done: threading.Event) -> None:
    cursors = dict(after)
    with httpx.Client(base_url=base, timeout=30) as client:
        while not done.is_set():
            tick = time.monotonic()
            for kind in cursors:
                page = client.get(f"/api/workflows/{wid}/{kind}", params={"id": cursors[kind]}).json()
                for item in page["items"]:
                    seen.note(kind, item)
                cursors[kind] = page["lastId"] or ""
            done.wait(max(0.0, POLL_INTERVAL - (time.monotonic() - tick)))


def latency(base: str, pid: int, items: int) -> None:
    with httpx.Client(base_url=base, timeout=30) as client:
        # Both clients follow from the end of a finished round, so every item counted was written while
        # they followed (a stream opened after a start would count the start's items, read as its backlog).
        wid, _ = completed_workflow(client)
        status = client.get(f"/api/workflows/{wid}/status").json()
        cursors = {"messages": status["lastMessageId"], "logs": status["lastLogId"]}
        streamed, polled, done, connected = Arrivals(), Arrivals(), threading.Event(), threading.Event()
        threads = [threading.Thread(target=follow, args=(base, wid, cursors, streamed, done, connected), daemon=True),
                   threading.Thread(target=poll, args=(base, wid, cursors, polled, done), daemon=True)]
        for thread in threads:
            thread.start()
        wait(connected.is_set, 30, "the event stream")
        started, cpu, waited = time.monotonic(), cpu_seconds(pid), waited_seconds(pid)
        while len(streamed) < items:
            client.post("/api/workflows/start", params={"id": wid}, json={"prompt": "And once more"})
            wait(lambda: client.get(f"/api/workflows/{wid}/status").json()["status"] != "running", 60, "a round")
        wait(lambda: len(polled) >= len(streamed), 30, "the poller to catch up")
        done.set()
        seconds = time.monotonic() - started
        cpu, waited = (cpu_seconds(pid) - cpu) / seconds, (waited_seconds(pid) - waited) / seconds
    keys = sorted(streamed.latency)[:items]
    for name, seen in (("stream", streamed), (f"poll every {POLL_INTERVAL * 1000:.0f} ms", polled)):
        values = [seen.latency[k] * 1000 for k in keys]
        print(f"{name:>18}: median {median(values):6.1f} ms, p99 {percentile(values, 0.99):6.1f} ms "
              f"over {len(values)} items")
    stream_values = [streamed.latency[k] for k in keys]
    print(f"stream p99 target < 50 ms: {'met' if percentile(stream_values, 0.99) < 0.05 else 'MISSED'}")
    print(f"meanwhile the server process ran {cpu * 1000:.0f} ms and its threads waited {waited * 1000:.0f} ms for a "
          "core per second (runnable, not running: the other processes on the cores, its own worker processes too)")


def open_streams(port: int, wid: str, cursors: str, count: int) -> list[socket.socket]:
    """`count` idle event streams after the workflow's last items: raw connections that read the
    response head and then nothing."""
    streams = []
    for _ in range(count):
        sock = socket.create_connection(("127.0.0.1", port))
        sock.sendall(f"GET /api/workflows/{wid}/events?{cursors} HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n".encode())
        head = b""
        while b"\r\n\r\n" not in head:
            head += sock.recv(4096)
        if b" 200 " not in head.split(b"\r\n", 1)[0]:
            raise SystemExit(f"the event stream answered {head[:80]!r}")
        streams.append(sock)
    return streams


def idle_streams(base: str, port: int, pid: int, count: int, seconds: int, turns: int) -> None:
    with httpx.Client(base_url=base, timeout=30) as client:
        wid, last = completed_workflow(client)
        status = client.get(f"/api/workflows/{wid}/status").json()
    cursors = f"messageId={status['lastMessageId']}&logId={status['lastLogId']}"
    poll_url = f"{base}/api/workflows/{wid}/messages?id={last}"

    def served(url: str) -> tuple[float, float]:
        """Requests per second, and the server's CPU microseconds per request."""
        before = cpu_seconds(pid)
        rate, requests = wrk_run(url, seconds, 50)
        return rate, (cpu_seconds(pid) - before) * 1e6 / max(1, requests)

    def turn(with_streams: bool) -> tuple[float, float]:
        """The empty-poll ratio by throughput and by the server's CPU per request."""
        streams = open_streams(port, wid, cursors, count) if with_streams else []
        time.sleep(SETTLE)  # the streams' first reads are done: what is measured is them idle
        try:
            (poll_rate, poll_cpu), (health_rate, health_cpu) = served(poll_url), served(base + "/health")
            return poll_rate / health_rate, health_cpu / poll_cpu
        finally:
            for sock in streams:
                sock.close()

    pairs = []
    for n in range(turns):  # interleaved, the order alternating, so drift hits both sides alike
        if n % 2:
            with_, without = turn(True), turn(False)
        else:
            without, with_ = turn(False), turn(True)
        pairs.append((without, with_))
    for index, name in ((0, "throughput (req/s)"), (1, "server CPU per request")):
        changes = sorted(w[index] / wo[index] - 1 for wo, w in pairs)
        print(f"empty-poll ratio by {name}: without streams {median([p[0][index] for p in pairs]):.2f}, with "
              f"{count} idle streams {median([p[1][index] for p in pairs]):.2f} (medians); change, median of "
              f"{turns} paired turns: {median(changes):+.1%} (single turns {changes[0]:+.0%} to {changes[-1]:+.0%}; "
              f"target within 10%)")
    quiet = 10.0

    def idle(with_streams: bool) -> float:
        """The server's CPU milliseconds in `quiet` seconds of nothing but (maybe) idle streams."""
        streams = open_streams(port, wid, cursors, count) if with_streams else []
        try:
            time.sleep(SETTLE)
            before = cpu_seconds(pid)
            time.sleep(quiet)
            return (cpu_seconds(pid) - before) * 1000
        finally:
            for sock in streams:
                sock.close()

    without, with_ = idle(False), idle(True)
    print(f"the server's CPU in {quiet:.0f} s of nothing: {without:.0f} ms without streams, {with_:.0f} ms with "
          f"{count} idle streams open")


def load() -> str:
    return "load average " + " ".join(f"{v:.2f}" for v in os.getloadavg())


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--items", type=int, default=500)
    parser.add_argument("--streams", type=int, default=200)
    parser.add_argument("--seconds", type=int, default=3)
    parser.add_argument("--turns", type=int, default=8)
    args = parser.parse_args()
    if not shutil.which("wrk"):
        raise SystemExit("wrk is needed: apt-get install wrk")
    port, pids = free_port(), []
    with tempfile.TemporaryDirectory() as tmp, service(tmp, port, pids=pids) as base:
        print(f"latency: {load()}")
        latency(base, pids[0], args.items)
        print(f"idle streams: {load()}")
        idle_streams(base, port, pids[0], args.streams, args.seconds, args.turns)
        print(f"end: {load()}")


if __name__ == "__main__":
    main()
