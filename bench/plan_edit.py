"""A large edited plan against the event loop: how soon it is answered and how long /health waits meanwhile.

    python bench/plan_edit.py [--tasks 10000] [--turns 5]

`python -m app` on 127.0.0.1 (SQLite, the offline model) with a round waiting for review. Each turn posts
an edit of `--tasks` chained tasks (about 790 KB, under the JSON body limit), then the same as a cycle,
while a second client asks /health in a loop. Prints the edit's answer time (median and worst), the
worst /health wait during the edits, and its ratio to a quiet /health's median (target: the edit
answers within 1 s, /health's worst wait stays near its quiet figure). Before issue 51 the chained
edit took 215 s and blocked /health 214 s; the cycle answered 500.
"""

from __future__ import annotations

import argparse
import json
import statistics
import tempfile
import threading
import time

import httpx
from common import free_port, service, wait


def tasks(count: int, cycle: bool) -> list[dict[str, object]]:
    return [{"id": f"t{i}", "agent": "analyst", "instructions": "Go.",
             "dependsOn": [f"t{i - 1}"] if i > 1 else ([f"t{count}"] if cycle else [])} for i in range(1, count + 1)]


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--tasks", type=int, default=10_000)
    parser.add_argument("--turns", type=int, default=5)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp, service(tmp, free_port()) as url, \
            httpx.Client(base_url=url) as client, httpx.Client(base_url=url) as other:
        sheet = client.post("/api/files", files={"files": ("report.csv", b"region,sales\nnorth,10\nsouth,12\n")})
        started = client.post("/api/workflows/start", json={"prompt": "Summarise the sales.", "review": "plan",
                                                            "listFileId": [sheet.json()[0]["id"]]})
        wid = started.json()["id"]
        wait(lambda: client.get(f"/api/workflows/{wid}/status").json()["status"] == "waiting", 120, "the plan")
        quiet = []
        for _ in range(50):
            t0 = time.perf_counter()
            other.get("/health")
            quiet.append(time.perf_counter() - t0)
        waits: list[float] = []
        done = threading.Event()

        def poll() -> None:
            while not done.is_set():
                t0 = time.perf_counter()
                other.get("/health", timeout=600)
                waits.append(time.perf_counter() - t0)

        poller = threading.Thread(target=poll)
        poller.start()
        answers: dict[str, list[float]] = {"chain": [], "cycle": []}
        try:
            for _ in range(args.turns):
                for kind in answers:
                    plan = {"tasks": tasks(args.tasks, kind == "cycle"), "finalDocuments": []}
                    body = json.dumps({"decision": "edit", "plan": plan}).encode()  # encoded before the clock starts
                    t0 = time.perf_counter()
                    answer = client.post(f"/api/workflows/{wid}/review", content=body, timeout=600,
                                         headers={"Content-Type": "application/json"})
                    answers[kind].append(time.perf_counter() - t0)
                    assert answer.status_code == 400, answer.text
        finally:
            done.set()
            poller.join()
        for kind, times in answers.items():
            print(f"{args.tasks:,}-task {kind} edit: answered in median {statistics.median(times) * 1000:.1f} ms, "
                  f"worst {max(times) * 1000:.1f} ms (status 400, the size alone)")
        base = statistics.median(quiet)
        print(f"/health: quiet median {base * 1000:.1f} ms; worst wait during the edits {max(waits) * 1000:.1f} ms "
              f"over {len(waits)} requests (ratio {max(waits) / base:.1f}x)")


if __name__ == "__main__":
    main()
