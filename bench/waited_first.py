"""A cross-language question asked right after an upload, while an earlier upload is still being embedded:
how long its round takes and whether its file's vectors found the answer, this tree against another:

    .venv/bin/python bench/waited_first.py --base TREE [--runs N]

Issue 50: a question in another language than its file waits up to 30 s for that file's vectors
(`app.store.vectors.CROSS_LANGUAGE_WAIT`); when files uploaded before it are still queued for
embedding, it waited behind them, and on a loaded machine gave up and answered from keywords, which
it does not share with the file. Since then the file a question waits for is embedded first. Each run
asks a question over the first 50 pages of freeculture.pdf (in its language: answered at once from its words,
its vectors then made in the background: the backlog; a new trailing comment each run so it is read and
embedded again), then uploads a short German text, and asks an English question
whose answer only that text holds (a year of its own each run). Both services (SQLite, offline model, local embeddings)
run side by side, turn about, idle before each run. Prints per side: seconds from the German
upload to the round's end, the analyst's retrieval method, whether the answer holds the year.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from contextlib import ExitStack
from pathlib import Path

import httpx
from common import free_port, service, wait
from first_answer import fifty_pages, idle

ROOT = Path(__file__).resolve().parents[1]
GERMAN = ("Der Leuchtturm von Westerhever (Blatt {run}) wurde im Jahr {year} fertiggestellt. Sein Feuer war weit "
          "über das Wattenmeer zu sehen.\n\nDer letzte Wärter verließ den Turm 1978, als das Feuer automatisiert wurde.\n")
QUESTION = "In which year was the lighthouse finished?"
BOOK_QUESTION = "What does the book say about the length of copyright terms?"


def ended(client: httpx.Client, prompt: str, file_id: int) -> tuple[str, str]:
    """(the workflow, its status) once a round over the file has ended."""
    started = client.post("/api/workflows/start", json={"prompt": prompt, "listFileId": [file_id]})
    started.raise_for_status()
    wid = started.json()["id"]
    return wid, wait(lambda: (s := client.get(f"/api/workflows/{wid}/status").json()["status"]) != "running" and s,
                     900, "the round to end")


def one_run(client: httpx.Client, pdf: bytes, run: int) -> tuple[float, str, bool]:
    # A file is read, and then embedded, in the round that first takes it: the book's round (answered from its
    # own words at once) leaves its vectors being made in the background.
    backlog = client.post("/api/files", files=[("files", ("freeculture-1-50.pdf", pdf + b"\n%% run %d\n" % run))])
    backlog.raise_for_status()
    ended(client, BOOK_QUESTION, backlog.json()[0]["id"])
    t0 = time.perf_counter()
    year = str(1850 + run)  # a text of its own each run: vectors are kept per passage, whatever its file
    text = GERMAN.format(run=run, year=year)
    upload = client.post("/api/files", files=[("files", (f"leuchtturm-{run}.txt", text.encode()))])
    upload.raise_for_status()
    wid, status = ended(client, QUESTION, upload.json()[0]["id"])
    seconds = time.perf_counter() - t0
    if status != "completed":
        raise SystemExit(f"the round ended {status}")
    items = client.get(f"/api/workflows/{wid}/messages").json()["items"]
    answer = next((i for i in items if i.get("metadata", {}).get("retrieval")), {})
    return seconds, answer.get("metadata", {}).get("retrieval", "-"), year in answer.get("content", "")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--base", required=True, help="the other checkout (before the change)")
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    pdf = fifty_pages()
    load0 = os.getloadavg()[0]
    sides = {"base": Path(args.base).resolve(), "this": ROOT}
    found: dict[str, list[tuple[float, str, bool]]] = {side: [] for side in sides}
    with ExitStack() as stack:
        clients, pids = {}, {}
        for side, root in sides.items():
            tmp = stack.enter_context(tempfile.TemporaryDirectory())
            pid: list[int] = []
            base = stack.enter_context(service(tmp, free_port(), root=root, pids=pid))
            clients[side] = stack.enter_context(httpx.Client(base_url=base, timeout=120))
            pids[side] = pid[0]
        for run in range(args.runs + 1):  # the first run of each side warms it (imports, the models' load)
            for side in sides:
                for p in pids.values():
                    idle(p)
                result = one_run(clients[side], pdf, run)
                if run:
                    found[side].append(result)
                print(f"  run {run} {side:4s} {result[0]:6.1f} s  retrieval {result[1]}  year found {result[2]}"
                      f"{'  (warm-up)' if not run else ''}", file=sys.stderr)
    print(f"a cross-language question right after an upload, behind a 50-page upload being embedded; median of "
          f"{args.runs} runs after one warm-up each; load average {load0:.1f} at the start, "
          f"{os.getloadavg()[0]:.1f} at the end, on {os.cpu_count()} cores:")
    for side, results in found.items():
        print(f"  {side} ({sides[side].name}): {statistics.median(r[0] for r in results):6.1f} s   runs: "
              f"{', '.join(f'{r[0]:.1f}' for r in results)}   retrieval: {', '.join(r[1] for r in results)}   "
              f"answer found: {sum(r[2] for r in results)} of {len(results)}")


if __name__ == "__main__":
    main()
