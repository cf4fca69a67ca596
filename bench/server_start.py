"""What a test's live server costs to start and stop, and what of it the test session can share.

    python bench/server_start.py [--servers 4]

Starts `--servers` apps (SQLite, the scripted model) each way, after one that warms the file readers:

- own pools: `create_app()` as the service wires it; each app stops the worker processes at shutdown,
  so the next one starts them again (what every test's server paid before `keep_workers`);
- shared pools: `create_app(keep_workers=True)` under uvicorn, as `tests.harness.LiveServer` runs it;
- in-process: the same app behind Litestar's `TestClient` (no socket, no uvicorn).

Prints each way's median start (until /ready answers 200) and stop, and the ratios to the first.
"""

from __future__ import annotations

import argparse
import logging
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from litestar.testing import TestClient  # noqa: E402

from app.main import create_app  # noqa: E402
from tests.harness import LiveServer, plan_of, settings_for, wait_for  # noqa: E402
from tests.scripted import ScriptedModel  # noqa: E402


def uvicorn_server(keep_workers: bool) -> Callable[[], tuple[float, float]]:
    def run() -> tuple[float, float]:
        started = time.monotonic()
        server = LiveServer(settings_for(Path(tempfile.mkdtemp())), ScriptedModel(plan=plan_of(1)),
                            keep_workers=keep_workers)
        with server:
            ready = time.monotonic()
        return ready - started, time.monotonic() - ready

    return run


def in_process() -> tuple[float, float]:
    started = time.monotonic()
    app = create_app(settings_for(Path(tempfile.mkdtemp())), model=ScriptedModel(plan=plan_of(1)), keep_workers=True)
    with TestClient(app) as client:
        wait_for(lambda: client.get("/ready").status_code == 200, 60, "the app to be ready")
        ready = time.monotonic()
    return ready - started, time.monotonic() - ready


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--servers", type=int, default=4)
    args = parser.parse_args()
    logging.disable(logging.CRITICAL)
    uvicorn_server(True)()  # the file readers' pool starts once per process, whichever way
    ways = {"own pools": uvicorn_server(False), "shared pools": uvicorn_server(True),
            "in-process": in_process}
    figures: dict[str, tuple[float, float]] = {}
    for name, run in ways.items():
        times = [run() for _ in range(args.servers)]
        figures[name] = statistics.median(t[0] for t in times), statistics.median(t[1] for t in times)
    first_start, first_stop = figures["own pools"]
    for name, (start, stop) in figures.items():
        print(f"{name:>12}: start {start:6.2f} s  stop {stop:6.2f} s  start+stop {start + stop:6.2f} s  "
              f"ratio {(start + stop) / (first_start + first_stop):.2f}")


if __name__ == "__main__":
    main()
