"""Polling cost: the empty poll against a trivial route of the same app, same server, 50 clients.

    python bench/polling.py [--seconds 5] [--connections 50]

Starts `python -m app` on 127.0.0.1 with a fresh data dir (SQLite, offline model), runs one
round, then loads `/health` and `/api/workflows/{id}/messages?id=<last>` in turns with wrk
(Debian package `wrk`) and prints requests per second of both and their ratio (target >= 0.7).
"""

from __future__ import annotations

import argparse
import re
import shutil
import subprocess
import tempfile

import httpx
from common import completed_workflow, free_port, service


def wrk(url: str, seconds: int, connections: int) -> float:
    """Requests per second `url` answered under wrk."""
    return wrk_run(url, seconds, connections)[0]


def wrk_run(url: str, seconds: int, connections: int) -> tuple[float, int]:
    """Requests per second and requests answered in all, under wrk."""
    out = subprocess.run(["wrk", "-t2", f"-c{connections}", f"-d{seconds}s", url], capture_output=True, text=True,
                         check=True).stdout
    errors = re.search(r"Non-2xx or 3xx responses: (\d+)", out)
    if errors:
        raise SystemExit(f"{url} answered errors under load:\n{out}")
    return float(re.search(r"Requests/sec:\s+([\d.]+)", out).group(1)), int(re.search(r"(\d+) requests in", out)[1])


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--seconds", type=int, default=5)
    parser.add_argument("--connections", type=int, default=50)
    parser.add_argument("--turns", type=int, default=3)
    args = parser.parse_args()
    if not shutil.which("wrk"):
        raise SystemExit("wrk is needed: apt-get install wrk")
    port = free_port()
    with tempfile.TemporaryDirectory() as tmp, service(tmp, port) as base, httpx.Client(base_url=base) as client:
        wid, last = completed_workflow(client)
        poll = f"{base}/api/workflows/{wid}/messages?id={last}"
        assert client.get(poll).json()["items"] == []
        health, polls = [], []
        for _ in range(args.turns):  # in turns, so drift on a shared machine hits both alike
            health.append(wrk(base + "/health", args.seconds, args.connections))
            polls.append(wrk(poll, args.seconds, args.connections))
    h, p = max(health), max(polls)
    print(f"/health: {h:.0f} req/s; empty poll: {p:.0f} req/s; ratio {p / h:.2f} (target >= 0.7); "
          f"{args.connections} connections, best of {args.turns} turns of {args.seconds} s")


if __name__ == "__main__":
    main()
