"""Poll latency while a round works on the 352-page freeculture.pdf, against idle.

    python bench/poll_during_extraction.py

Starts `python -m app` (SQLite, offline model) on 127.0.0.1, measures the latency of the empty
poll while the server is idle, then while a round extracts freeculture.pdf, then while its
planner and agents work on the extracted book until the round completes. Prints p50 and p99 of
each and the p99 ratio against idle (target <= 2), and the longest poll of the agents' phase
(CPU-heavy text work runs off the event loop; on it, one poll waited 1.4 s).
"""

from __future__ import annotations

import os
import statistics
import tempfile
import threading
import time

import httpx
from common import ROOT, completed_workflow, service

PDF = ROOT.parent / "shared" / "corpus" / "freeculture.pdf"
TURNS = 3


def latencies(client: httpx.Client, url: str, until, minimum: int) -> list[float]:
    """Latencies of empty polls, at least `minimum`, until `until()` holds.

    `until` is asked from another thread, so a server stalled while answering it stalls the
    measured polls as well instead of hiding between them.
    """
    done = threading.Event()

    def watch() -> None:
        while not until():
            time.sleep(0.25)
        done.set()

    watcher = threading.Thread(target=watch, daemon=True)
    watcher.start()
    out: list[float] = []
    while len(out) < minimum or not done.is_set():
        t0 = time.perf_counter()
        client.get(url).raise_for_status()
        out.append(time.perf_counter() - t0)
    watcher.join()
    return out


def pct(values: list[float], q: int) -> float:
    return statistics.quantiles(values, n=100, method="inclusive")[q - 1] * 1000


def main() -> None:
    port = 19000 + os.getpid() % 1000
    turns = []
    with tempfile.TemporaryDirectory() as tmp, service(tmp, port) as base, \
            httpx.Client(base_url=base, timeout=30) as client, httpx.Client(base_url=base, timeout=30) as watcher:
        wid, last = completed_workflow(client, "hello")
        poll = f"/api/workflows/{wid}/messages?id={last}"
        for turn in range(TURNS):  # idle and busy in turns, so drift on a shared machine hits both alike
            idle = latencies(client, poll, lambda: True, 2000)
            # Other bytes each turn (a comment after %%EOF), or the extraction cache would answer.
            data = PDF.read_bytes() + f"\n% turn {turn}\n".encode()
            file_id = client.post("/api/files", files=[("files", (PDF.name, data))]).json()[0]["id"]
            other_id = client.post("/api/workflows/start",
                                   json={"prompt": "Summarize", "listFileId": [file_id]}).json()["id"]

            def extracted() -> bool:  # the user message appears once its documents are extracted
                return bool(watcher.get(f"/api/workflows/{other_id}/messages", params={"limit": 1}).json()["items"])

            def finished() -> bool:
                return watcher.get(f"/api/workflows/{other_id}/status").json()["status"] != "running"

            t0 = time.perf_counter()
            busy = latencies(client, poll, extracted, 200)
            t1 = time.perf_counter()
            working = latencies(client, poll, finished, 50)
            turns.append((idle, busy, t1 - t0, working, time.perf_counter() - t1))
    for idle, busy, seconds, working, work_seconds in turns:
        print(f"idle p50 {pct(idle, 50):.2f} ms, p99 {pct(idle, 99):.2f} ms ({len(idle)} polls); while extracting "
              f"freeculture.pdf ({seconds:.1f} s) p50 {pct(busy, 50):.2f} ms, p99 {pct(busy, 99):.2f} ms, longest "
              f"{max(busy) * 1000:.0f} ms ({len(busy)} polls); p99 ratio {pct(busy, 99) / pct(idle, 99):.2f}")
        print(f"  while the agents work on it ({work_seconds:.1f} s): p50 {pct(working, 50):.2f} ms, "
              f"p99 {pct(working, 99):.2f} ms, longest {max(working) * 1000:.0f} ms ({len(working)} polls); "
              f"p99 ratio {pct(working, 99) / pct(idle, 99):.2f}")
    ratios = sorted(pct(b, 99) / pct(i, 99) for i, b, *_ in turns)
    working_ratios = sorted(pct(w, 99) / pct(i, 99) for i, _, _, w, _ in turns)
    print(f"p99 ratio, median of {TURNS} turns: extracting {ratios[len(ratios) // 2]:.2f} (target <= 2), "
          f"agents working {working_ratios[len(working_ratios) // 2]:.2f}")


if __name__ == "__main__":
    main()
