"""/health while 8 code nodes spin: a live service (SQLite, real HTTP on 127.0.0.1) runs a flow whose map
runs 8 `while True: pass` code nodes at once (each ended by CODE_TIMEOUT_SECONDS), and /health is asked
meanwhile; the same number of /health calls on the idle service first.

    .venv/bin/python bench/code_health.py [--calls 300]

Prints /health's latency p50, p99 and max, idle and while the 8 nodes spin, and their ratio.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.harness import LiveServer, settings_for  # noqa: E402

SPIN = {"name": "spin", "inputs": {"items": {"type": "list"}},
        "nodes": [{"id": "start", "type": "start"},
                  {"id": "m", "type": "map", "config": {"items": "inputs.items", "concurrency": 8, "onItemError": "continue",
                                                        "body": {"id": "c", "type": "code",
                                                                 "config": {"code": "while True:\n    pass"}}}},
                  {"id": "end", "type": "end"}],
        "edges": [{"source": "start", "target": "m"}, {"source": "m", "target": "end"}]}


def latencies(client, calls: int, until=None) -> list[float]:
    out = []
    for _ in range(calls):
        t0 = time.perf_counter()
        assert client.get("/health").status_code == 200
        out.append((time.perf_counter() - t0) * 1000)
        if until is not None and until():
            break
    return out


def show(name: str, values: list[float]) -> tuple[float, float]:
    ordered = sorted(values)
    p99 = ordered[min(len(ordered) - 1, int(len(ordered) * 0.99))]
    print(f"{name:28} n={len(values):4}  p50 {statistics.median(values):6.2f} ms  p99 {p99:6.2f} ms  "
          f"max {ordered[-1]:6.2f} ms")
    return statistics.median(values), p99


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--calls", type=int, default=300)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        settings = settings_for(Path(tmp), "", code_timeout_seconds=8.0)
        with LiveServer(settings) as live, live.client() as client:
            flow = client.post("/api/flows", json=SPIN).json()["id"]
            warm = client.post("/api/workflows/start", json={"flow": {"id": flow, "version": "draft",
                                                                      "inputs": {"items": [1]}}}).json()["id"]
            while client.get(f"/api/workflows/{warm}/status").json()["status"] == "running":
                time.sleep(0.2)  # the pool's first workers started
            idle = latencies(client, args.calls)
            wf = client.post("/api/workflows/start", json={"flow": {"id": flow, "version": "draft",
                                                                    "inputs": {"items": list(range(8))}}}).json()["id"]
            time.sleep(1.0)  # the 8 workers are spinning
            busy = latencies(client, args.calls)
            status = client.get(f"/api/workflows/{wf}/status").json()["status"]
        _, idle_p99 = show("/health, idle", idle)
        _, busy_p99 = show("/health, 8 code nodes spin", busy)
        print(f"p99 while spinning / idle: {busy_p99 / idle_p99:.2f}x (the round was {status} when the calls ended)")


if __name__ == "__main__":
    main()
