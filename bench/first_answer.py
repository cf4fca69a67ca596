"""The first answer over a fresh 50-page upload, with embeddings on against off, in one run:

    .venv/bin/python bench/first_answer.py [--runs N]

Issue 32: a round never waits for a file's vectors; a question over a fresh upload is answered with
BM25 while the vectors are made in the background, and that first answer comes no later than 1.2x
what it took before embeddings existed. Starts two `python -m app` (SQLite, offline model), one with
`EMBEDDINGS=local` (the default) and one with `EMBEDDINGS=off` (BM25 alone, as before), and, turn
about, uploads to each the first 50 pages of freeculture.pdf (a different trailing comment each time,
so every upload is really read and, on the first, embedded) and asks a question over it. Timed: from
the upload's start to the round's end (status no longer running): the upload, its reading, the round.
Between runs both servers are left until their CPU is idle, so a run starts with no earlier file
still being embedded; during its own round the embedding server's worker embeds the fresh file on
the other core, as in service.

Prints each side's median and runs, the ratio (target <= 1.2x), how the answer was retrieved
(`metadata.retrieval` of the analyst's step: "keyword" while the vectors are being made) and the
machine's load average at start and end.
"""

from __future__ import annotations

import argparse
import io
import os
import statistics
import sys
import tempfile
import time
from contextlib import ExitStack
from pathlib import Path

import httpx
from common import cpu_seconds, free_port, service, wait
from pypdf import PdfReader, PdfWriter

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from tests.corpus import CORPUS  # noqa: E402 (FOREMAN_CORPUS, or ../shared/corpus)

QUESTION = "What does the book say about the length of copyright terms?"
PAGES = 50


def fifty_pages() -> bytes:
    reader = PdfReader(CORPUS / "freeculture.pdf")
    writer = PdfWriter()
    for page in reader.pages[:PAGES]:
        writer.add_page(page)
    out = io.BytesIO()
    writer.write(out)
    return out.getvalue()


def idle(pid: int, quiet: float = 0.05, timeout: float = 900) -> None:
    """Wait until the process used under `quiet` CPU seconds over one second (its background work done)."""
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        before = cpu_seconds(pid)
        time.sleep(1.0)
        if cpu_seconds(pid) - before < quiet:
            return
    raise SystemExit(f"process {pid} did not go idle within {timeout:.0f} s")


def one_round(client: httpx.Client, pdf: bytes, run: int) -> tuple[float, str]:
    """Seconds from the upload's start to the round's end, and the analyst's retrieval method."""
    t0 = time.perf_counter()
    upload = client.post("/api/files", files=[("files", ("freeculture-1-50.pdf", pdf + b"\n%% run %d\n" % run))])
    upload.raise_for_status()
    started = client.post("/api/workflows/start", json={"prompt": QUESTION, "listFileId": [upload.json()[0]["id"]]})
    started.raise_for_status()
    wid = started.json()["id"]
    status = wait(lambda: (s := client.get(f"/api/workflows/{wid}/status").json()["status"]) != "running" and s,
                  900, "the round to end")
    seconds = time.perf_counter() - t0
    if status != "completed":
        raise SystemExit(f"the round ended {status}")
    items = client.get(f"/api/workflows/{wid}/messages").json()["items"]
    methods = [m.get("metadata", {}).get("retrieval") for m in items]
    return seconds, next((m for m in methods if m), "-")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=3)
    runs = parser.parse_args().runs
    pdf = fifty_pages()
    load0 = os.getloadavg()[0]
    times: dict[str, list[float]] = {"off": [], "local": []}
    methods: dict[str, list[str]] = {"off": [], "local": []}
    with ExitStack() as stack:
        clients, pids = {}, {}
        for side in times:
            tmp = stack.enter_context(tempfile.TemporaryDirectory())
            pid: list[int] = []
            base = stack.enter_context(service(tmp, free_port(), settings={"EMBEDDINGS": side}, pids=pid))
            clients[side] = stack.enter_context(httpx.Client(base_url=base, timeout=120))
            pids[side] = pid[0]
        for run in range(runs + 1):  # the first run of each side warms it (imports, the model's lazy load)
            for side in times:
                for p in pids.values():
                    idle(p)
                seconds, method = one_round(clients[side], pdf, run)
                if run:
                    times[side].append(seconds)
                    methods[side].append(method)
                print(f"  run {run} {side:5s} {seconds:6.1f} s  retrieval {method}{'  (warm-up)' if not run else ''}",
                      file=sys.stderr)
    off, local = (statistics.median(times[s]) for s in ("off", "local"))
    print(f"first answer over a fresh {PAGES}-page upload (freeculture.pdf pages 1-{PAGES}), offline model, "
          f"median of {runs} runs after one warm-up each; load average {load0:.1f} at the start, "
          f"{os.getloadavg()[0]:.1f} at the end, on {os.cpu_count()} cores:")
    for side, label in (("off", "embeddings off (BM25 alone, as before)"), ("local", "embeddings on (local model)")):
        print(f"  {label:40s} {statistics.median(times[side]):6.1f} s   runs: "
              f"{', '.join(f'{v:.1f}' for v in times[side])}   retrieval: {', '.join(methods[side])}")
    print(f"  on / off: {local / off:.2f}x (target <= 1.2x)")


if __name__ == "__main__":
    main()
