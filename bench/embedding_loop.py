"""What background embedding costs the event loop: turns a loop ticking every 10 ms gets in `--seconds`.

    python bench/embedding_loop.py [--seconds 20] [--busy 2]

Three ways, one after another in this process: no embedding; the local models embedding batches of
16 passages without pause in a thread niced by 10 (as app.store.vectors did); the same in a worker
process niced by 10 (as it does now, `agents.knowledge.embeddings.InWorkers`), with `--busy`
busy-loop processes beside (a loaded machine: the kernel seldom schedules a niced thread, and
while it holds the GIL the loop waits for it).
"""

from __future__ import annotations

import argparse
import contextlib
import os
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from agents.knowledge.embeddings import InWorkers, local_embedder  # noqa: E402
from agents.toolkit.cpu import WORKER_NICENESS  # noqa: E402

TEXTS = ["The quick brown fox jumps over the lazy dog near the river bank in the morning."] * 16


def line(what: str, figures: tuple[int, float]) -> str:
    return f"  {what + ':':<32} {figures[0]:5d} turns, p99 late {figures[1]:6.1f} ms"


def ticks(seconds: float) -> tuple[int, float]:
    """Turns of a 10 ms loop in `seconds`, and its p99 lateness (ms)."""
    late = []
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        began = time.monotonic()
        time.sleep(0.01)
        late.append(time.monotonic() - began - 0.01)
    late.sort()
    return len(late), late[int(len(late) * 0.99)] * 1000


def beside(embed: Callable[[], object], seconds: float, niced_thread: bool) -> tuple[int, float]:
    stop = threading.Event()

    def work() -> None:
        if niced_thread:
            with contextlib.suppress(OSError):
                os.setpriority(os.PRIO_PROCESS, threading.get_native_id(), WORKER_NICENESS)
        while not stop.is_set():
            embed()

    thread = threading.Thread(target=work, daemon=True)
    thread.start()
    try:
        return ticks(seconds)
    finally:
        stop.set()
        thread.join()


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--seconds", type=float, default=20.0)
    parser.add_argument("--busy", type=int, default=2, help="busy-loop processes beside (the cores here: 2)")
    args = parser.parse_args()
    loops = [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(args.busy)]
    try:
        measure(args)
    finally:
        for loop in loops:
            loop.kill()
            loop.wait()


def measure(args: argparse.Namespace) -> None:
    print(f"load average {' '.join(f'{x:.1f}' for x in os.getloadavg())}, {os.cpu_count()} cores, {args.busy} busy-loop "
          f"processes; turns of a 10 ms loop in {args.seconds:g} s:")
    print(line("no embedding", ticks(args.seconds)))
    embedder = local_embedder()
    embedder.passages(TEXTS)  # loaded before measuring
    print(line("embedding in a niced thread", beside(lambda: embedder.passages(TEXTS), args.seconds, True)))
    workers = InWorkers(embedder, 1)
    try:
        workers.passages(TEXTS)
        print(line("embedding in a niced process", beside(lambda: workers.passages(TEXTS), args.seconds, False)))
    finally:
        workers.close()


if __name__ == "__main__":
    main()
