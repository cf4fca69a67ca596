"""Peak memory of the service and its reader processes while a round reads a decompression bomb,
and /health's latency meanwhile against idle, for each zip-based format.

    python bench/bombs.py [--inflated-mib 64] [--root /work/main] [--formats docx,xlsx,...]

Starts `python -m app` of the tree at --root (default: this one) on SQLite with the offline model,
measures /health idle, then for each format uploads a bomb whose big part inflates to
--inflated-mib MiB, starts a round on it and, until the round ends, samples the resident memory of
the service and all its descendants every 50 ms and times /health continuously. Prints per format
the peak RSS (MiB), /health p99 and its ratio to idle (target <= 2), how the round ended and its
"Read"/"Could not read" line. `--memory-cap-mib` stops the run (kills the service) when the
process tree passes it, so measuring an unbounded tree cannot take the machine down.

Measured 2026-11-25 on a 2-core machine shared by 8 sessions (load 30-45), service + readers:
before (main b697e01), 16 MiB bombs: DOCX peak 2008 MiB and its round still running after 600 s
(the read took 464 s), XLSX 1039 MiB and PPTX 1176 MiB (both ran into the 120 s time limit),
ODT/EPUB 972 MiB (not parsed; the DOCX round still ran); /health p99 1.0-2.0x idle.
After, 16 MiB bombs: 668-696 MiB, every one refused (/health p99 0.4-1.4x idle); 1 GiB bombs
(3.5 MB uploads): 761-772 MiB against 599 MiB idle, every one refused within 7 s, /health p99
0.7-1.94x idle. The bound: a reader takes at most EXTRACT_MEMORY_BYTES beyond its start-up.
"""

from __future__ import annotations

import argparse
import os
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx
from common import ROOT, free_port, process_tree

sys.path.insert(0, str(ROOT))
from tests.bombs import FORMATS, bomb  # noqa: E402

PAGE = os.sysconf("SC_PAGE_SIZE")



def rss(pids: list[int]) -> int:
    total = 0
    for p in pids:
        try:
            with open(f"/proc/{p}/statm") as f:
                total += int(f.read().split()[1]) * PAGE
        except OSError:
            pass
    return total


def p99(values: list[float]) -> float:
    return statistics.quantiles(values, n=100, method="inclusive")[98] * 1000 if len(values) > 1 else 0.0


def health_until(base: str, done: threading.Event, minimum: int) -> list[float]:
    out: list[float] = []
    with httpx.Client(base_url=base, timeout=60) as client:
        while len(out) < minimum or not done.is_set():
            t0 = time.perf_counter()
            client.get("/health")
            out.append(time.perf_counter() - t0)
            time.sleep(0.01)
    return out


@contextmanager
def served(tmp: str, port: int, root: Path, pids: list[int]) -> Iterator[str]:
    """`python -m app` of `root`, its log in the temporary directory (shown if it stops early)."""
    env = {**os.environ, "DATA_DIR": tmp, "PORT": str(port)}
    for name in ("OPENAI_API_KEY", "OPENAI_BASE_URL", "API_KEYS", "DATABASE_URL"):
        env.pop(name, None)
    with open(Path(tmp) / "server.log", "wb") as server_log:
        server = subprocess.Popen([sys.executable, "-m", "app"], cwd=root, env=env, stdout=server_log,
                                  stderr=subprocess.STDOUT)
    pids.append(server.pid)
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 900
        while time.monotonic() < deadline:
            if server.poll() is not None:
                raise SystemExit("the server stopped:\n" + (Path(tmp) / "server.log").read_text()[-3000:])
            try:
                if httpx.get(base + "/ready", timeout=5).status_code == 200:
                    break
            except httpx.HTTPError:
                pass
            time.sleep(0.2)
        yield base
    finally:
        if server.poll() is None:
            server.terminate()
            server.wait(60)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--inflated-mib", type=int, default=64)
    parser.add_argument("--root", type=Path, default=ROOT)
    parser.add_argument("--formats", default=",".join(FORMATS))
    parser.add_argument("--memory-cap-mib", type=int, default=12_000)
    parser.add_argument("--round-timeout", type=float, default=600)
    args = parser.parse_args()
    pids: list[int] = []
    port = free_port()
    with tempfile.TemporaryDirectory() as tmp, served(tmp, port, args.root.resolve(), pids) as base, \
            httpx.Client(base_url=base, timeout=120) as client:
        server = pids[0]
        client.get("/health")
        finished = threading.Event()
        finished.set()
        idle = health_until(base, finished, 300)
        print(f"tree {args.root.resolve()}  bombs of {args.inflated_mib} MiB inflated")
        print(f"idle: RSS {rss(process_tree(server)) / 2**20:.0f} MiB, /health p99 {p99(idle):.1f} ms")
        print(f"{'format':6} {'upload':>9} {'peak RSS':>10} {'p99 ms':>8} {'x idle':>7} {'round':>10} {'s':>6}  read log")
        for kind in args.formats.split(","):
            data = bomb(kind, args.inflated_mib << 20)
            file_id = client.post("/api/files", files=[("files", (f"bomb.{kind}", data))]).json()[0]["id"]
            before = rss(process_tree(server))
            wid = client.post("/api/workflows/start", json={"prompt": "Summarise the document.",
                                                            "listFileId": [file_id]}).json()["id"]
            done = threading.Event()
            samples: list[float] = []
            watcher = threading.Thread(target=lambda: samples.extend(health_until(base, done, 20)), daemon=True)
            watcher.start()
            peak, t0, status, killed = before, time.monotonic(), "?", False
            while time.monotonic() - t0 < args.round_timeout:
                peak = max(peak, rss(process_tree(server)))
                if peak > args.memory_cap_mib << 20:
                    os.kill(server, signal.SIGKILL)
                    killed, status = True, f">{args.memory_cap_mib}MiB"
                    break
                try:
                    status = client.get(f"/api/workflows/{wid}/status", timeout=5).json()["status"]
                except httpx.HTTPError:
                    pass
                if status in ("completed", "failed", "stopped"):
                    break
                time.sleep(0.05)
            seconds = time.monotonic() - t0
            done.set()
            watcher.join(120)
            line = ""
            if not killed:
                logs = client.get(f"/api/workflows/{wid}", params={"includeData": "false"}).json().get("logs", [])
                line = next((g["message"] for g in logs if g["message"].startswith(("Read bomb", "Could not read"))), "")
            print(f"{kind:6} {len(data) / 1024:7.0f}KB {peak / 2**20:8.0f}MiB {p99(samples):8.1f} "
                  f"{p99(samples) / max(p99(idle), 1e-6):7.2f} {status:>10} {seconds:6.1f}  {line[:110]}", flush=True)
            if killed:
                return


if __name__ == "__main__":
    main()
