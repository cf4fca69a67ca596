"""Shared parts of the benchmarks: a scripted model with a fixed delay, a runtime on a temp dir."""

from __future__ import annotations

import asyncio
import json
import os
import socket
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from agents.model import Model, ModelRequest, ModelResponse, Usage  # noqa: E402


class DelayedModel(Model):
    """Answers every call after `delay` seconds: plans of `tasks` independent tasks, short texts."""

    name = "bench"
    offline = False

    def __init__(self, tasks: int = 5, delay: float = 0.0) -> None:
        self.delay = delay
        self.plan = {
            "userLanguage": "en", "objUserResponse": "On it.", "objFinalDocuments": [],
            "objWorkplan": [{"id": f"t{i}", "agent": "analyst", "instructions": f"Check point {i}.", "inputs": [],
                             "outputs": [], "dependsOn": []} for i in range(1, tasks + 1)],
        }

    async def complete(self, request: ModelRequest) -> ModelResponse:
        if self.delay:
            await asyncio.sleep(self.delay)  # the provider's latency, simulated
        usage = Usage(prompt_tokens=10, completion_tokens=5, calls=1)
        if request.purpose in ("plan", "repair"):
            return ModelResponse(text=json.dumps(self.plan), data=self.plan, usage=usage, model=self.name)
        return ModelResponse(text="Checked.", usage=usage, model=self.name)


def median(values: list[float]) -> float:
    ordered = sorted(values)
    mid = len(ordered) // 2
    return ordered[mid] if len(ordered) % 2 else (ordered[mid - 1] + ordered[mid]) / 2


ROOT = Path(__file__).resolve().parents[1]


def free_port() -> int:
    """A port nobody listens on now (others run benchmarks on this machine at the same time)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def cpu_seconds(pid: int) -> float:
    """CPU time (user + system, all threads) a process has used so far, from /proc."""
    with open(f"/proc/{pid}/stat") as stat:
        fields = stat.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def process_tree(pid: int) -> list[int]:
    """`pid` and every process under it, from /proc."""
    found, todo = [], [pid]
    while todo:
        p = todo.pop()
        found.append(p)
        try:
            for tid in os.listdir(f"/proc/{p}/task"):
                with open(f"/proc/{p}/task/{tid}/children") as f:
                    todo.extend(int(c) for c in f.read().split())
        except OSError:
            pass
    return found


def waited_seconds(pid: int) -> float:
    """Time the process's threads have spent so far runnable but waiting for a core (schedstat, all threads)."""
    total = 0
    for tid in os.listdir(f"/proc/{pid}/task"):
        try:
            with open(f"/proc/{pid}/task/{tid}/schedstat") as stat:
                total += int(stat.read().split()[1])
        except OSError:  # the thread ended meanwhile
            pass
    return total / 1e9


def wait(check: Callable[[], Any], timeout: float, what: str) -> Any:
    """Poll `check` until it is truthy (HTTP errors count as not yet); exit when `timeout` passes."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            value = check()
            if value:
                return value
        except httpx.HTTPError:
            pass
        time.sleep(0.05)
    raise SystemExit(f"timed out waiting for {what}")


@contextmanager
def service(data_dir: str, port: int, root: Path = ROOT, ready_within: float = 60,
            settings: dict[str, str] | None = None, pids: list[int] | None = None) -> Iterator[str]:
    """`python -m app` of the tree at `root` on the embedded default (SQLite, offline model), with `settings` on
    top; its URL when ready (its process id appended to `pids`, when given)."""
    env = {**os.environ, "DATA_DIR": data_dir, "PORT": str(port), **(settings or {})}
    for name in ("OPENAI_API_KEY", "OPENAI_BASE_URL", "API_KEYS", "DATABASE_URL"):
        env.pop(name, None)
    server = subprocess.Popen([sys.executable, "-m", "app"], cwd=root, env=env, stdout=subprocess.DEVNULL,
                              stderr=subprocess.DEVNULL)
    base = f"http://127.0.0.1:{port}"
    if pids is not None:
        pids.append(server.pid)
    try:
        wait(lambda: httpx.get(base + "/ready").status_code == 200, ready_within, "the server")
        yield base
    finally:
        server.terminate()
        server.wait(30)


def completed_workflow(client: httpx.Client, prompt: str = "Summarize the request") -> tuple[str, int]:
    """A workflow whose round completed, and its last message id (the cursor of an empty poll)."""
    wid = client.post("/api/workflows/start", json={"prompt": prompt}).json()["id"]
    wait(lambda: client.get(f"/api/workflows/{wid}/status").json()["status"] == "completed", 60, "the round")
    return wid, client.get(f"/api/workflows/{wid}/status").json()["lastMessageId"]


CORPUS = ROOT.parent / "shared" / "corpus"


def table_document(tables: int = 600, size: int = 3_400_000) -> bytes:
    """An HTML page of `tables` small tables cut from corpus spreadsheets, with prose between them, about `size` bytes.

    The shape that once froze the event loop for seconds: every table is extracted, saved to a workbook,
    and the text is long enough for the summarizer's map-reduce and the final answer's budget.
    """
    import csv
    import html

    sources = [list(csv.reader((CORPUS / "testCSV.csv").open(encoding="utf-8"))),
               list(csv.reader((CORPUS / "stanley-cups.tsv").open(encoding="utf-8"), delimiter="\t"))]
    grids = [[[c for c in row] for row in grid if any(c.strip() for c in row)] for grid in sources]
    prose = [line.strip() for line in (CORPUS / "sample-french-1.txt").read_text(encoding="latin-1").splitlines()
             if len(line.split()) > 8]
    pieces: list[str] = []
    per_table = size // tables
    for n in range(tables):
        grid = grids[n % len(grids)]
        rows = "".join("<tr>" + "".join(f"<td>{html.escape(c)}</td>" for c in row) + "</tr>" for row in grid)
        block = [f"<h2>Table {n + 1}</h2>", f"<table>{rows}</table>"]
        used = sum(map(len, block))
        k = n
        while used < per_table:
            sentence = f"<p>{html.escape(prose[k % len(prose)])} (section {n + 1})</p>"
            block.append(sentence)
            used += len(sentence)
            k += 1
        pieces.append("".join(block))
    return ("<html><head><meta charset='utf-8'><title>Tables</title></head><body>" + "".join(pieces)
            + "</body></html>").encode("utf-8")
