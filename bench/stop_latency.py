"""Stop latency while ten CPU-heavy offline rounds run, against a stop with nothing else running.

    python bench/stop_latency.py [--stops 40] [--rounds 10] [--checkout OTHER_TREE]

Runs `python -m app` on the embedded default (SQLite, offline model) and uploads one HTML page of
600 small tables (about 2.7 MB of text, built from corpus tables): each round over it extracts the
tables to a workbook, summarises the text by map-reduce and fits the final answer to its budget,
seconds of CPU each. A stop must still answer at once: it is served by the same event loop.

Baseline: one such round runs alone and is stopped. Under load: `--rounds` such rounds run; a
random one is stopped and replaced by a new one, `--stops` times. Prints the median and p99 of the
stop request's latency (until its answer, the round then being `stopped`), and their ratios.

With `--checkout`, the other tree's service is measured first, then this tree's, with the same
requests in this one run, and the ratios of this tree's figures to the other's follow.
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
import tempfile
import time
from pathlib import Path

import httpx
from common import ROOT, free_port, median, service, table_document, wait

PROMPT = "Summarise this document and extract all its tables as an Excel workbook."


def start(client: httpx.Client, file_id: int) -> str:
    answer = client.post("/api/workflows/start", json={"prompt": PROMPT, "listFileId": [file_id]})
    answer.raise_for_status()
    return answer.json()["id"]


def busy(client: httpx.Client, wid: str) -> bool:
    """The round is past its start: its files are read and its agents work."""
    logs = client.get(f"/api/workflows/{wid}/logs", params={"limit": 200}).json()["items"]
    return any(log["message"].startswith(("Running task", "Analyzing request")) for log in logs)


def stop(client: httpx.Client, wid: str) -> float | None:
    """Seconds until the stop is answered; None when the round had already ended."""
    t0 = time.perf_counter()
    answer = client.post(f"/api/workflows/{wid}/stop")
    elapsed = time.perf_counter() - t0
    if answer.status_code == 409:  # it completed first
        return None
    answer.raise_for_status()
    assert answer.json()["status"] == "stopped", answer.json()
    return elapsed


def p99(values: list[float]) -> float:
    return statistics.quantiles(values, n=100, method="inclusive")[-1] if len(values) > 1 else values[0]


def measure(client: httpx.Client, file_id: int, rounds: int, stops: int, rng: random.Random) -> list[float]:
    running = [start(client, file_id) for _ in range(rounds)]
    for wid in running:
        wait(lambda wid=wid: busy(client, wid), 600, "a round to begin its work")
    latencies: list[float] = []
    while len(latencies) < stops:
        time.sleep(rng.uniform(0.05, 0.5))  # stops land at random moments of the rounds' work
        wid = running.pop(rng.randrange(len(running)))
        elapsed = stop(client, wid)
        if elapsed is not None:
            latencies.append(elapsed)
        running.append(start(client, file_id))
        if rounds == 1:
            wait(lambda: busy(client, running[0]), 600, "the round to begin its work")
    for wid in running:
        stop(client, wid)
    return latencies


def run(root: Path, rounds: int, stops: int) -> tuple[list[float], list[float]]:
    """The stop latencies of the service of the tree at `root`: with one round running, and with `rounds`."""
    rng = random.Random(7)
    with tempfile.TemporaryDirectory() as tmp, service(tmp, free_port(), root=root, settings={"MAX_CONCURRENT_ROUNDS": str(rounds + 2)}) as base, \
            httpx.Client(base_url=base, timeout=120) as client:
        document = table_document()
        file_id = client.post("/api/files", files={"files": ("tables.html", document, "text/html")}).json()[0]["id"]
        # The first round reads the file; the others find it in the extraction cache, as a poll would.
        first = start(client, file_id)
        wait(lambda: client.get(f"/api/workflows/{first}/status").json()["status"] != "running", 600, "a whole round")
        alone = measure(client, file_id, 1, max(10, stops // 2), rng)
        loaded = measure(client, file_id, rounds, stops, rng)
    return alone, loaded


def report(root: Path, rounds: int, alone: list[float], loaded: list[float]) -> tuple[float, float, float, float]:
    """Print one tree's figures; return them (ms): median and p99 alone, median and p99 under load."""
    base_median, base_p99 = median(alone) * 1000, p99(alone) * 1000
    load_median, load_p99 = median(loaded) * 1000, p99(loaded) * 1000
    print(f"{root}:")
    print(f"stop with one round running: median {base_median:.1f} ms, p99 {base_p99:.1f} ms ({len(alone)} stops)")
    print(f"stop with {rounds} CPU-heavy rounds running: median {load_median:.1f} ms, p99 {load_p99:.1f} ms "
          f"({len(loaded)} stops; target p99 < 100 ms)")
    print(f"ratio to one round: median {load_median / base_median:.1f}x, p99 {load_p99 / base_p99:.1f}x")
    return base_median, base_p99, load_median, load_p99


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--stops", type=int, default=40)
    parser.add_argument("--rounds", type=int, default=10)
    parser.add_argument("--checkout", type=Path, default=None,
                        help="another tree (a worktree of another branch) to measure first, for comparison")
    args = parser.parse_args()
    trees = [args.checkout.resolve(), ROOT] if args.checkout and args.checkout.resolve() != ROOT else [ROOT]
    figures = [report(root, args.rounds, *run(root, args.rounds, args.stops)) for root in trees]
    if len(figures) == 2:
        (_, _, other_median, other_p99), (_, _, this_median, this_p99) = figures
        print(f"{ROOT.name} to {trees[0].name} under load: median {this_median / other_median:.2f}x, "
              f"p99 {this_p99 / other_p99:.2f}x")
    sys.exit(0)


if __name__ == "__main__":
    main()
