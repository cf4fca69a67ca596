"""Crash: SIGKILL at random moments while rounds of 5 tasks run; every round completes, no finished task runs again.

    python bench/crash.py [--rounds 20] [--batch 5] [--kills 2] [--seed 1] [--database-url URL]

`python -m app` runs against a model stub over real HTTP (answering after 50-400 ms) and is
killed with SIGKILL `--kills` times during each batch of rounds, each time after a random number
of the batch's model calls and a random delay, then started again. At each kill the tasks whose message is in the journal are noted; the stub counts the
model calls of every task. Prints the counts and exits non-zero on any loss, duplicate or
finished task that called the model again.

    python bench/crash.py --restarts 5 [--database-url URL]

measures a restart instead: a round over a paper (tracemonkey.pdf, 14 pages) is killed while its
task waits for the model, and the service started again, `--restarts` times, once with EMBEDDINGS=off
and once with EMBEDDINGS=local (its vectors made in the background). Prints the median time
from the launch to the resumed round's model call and, measured beside it, to /ready (which waits
up to 20 s for the file readers' warm-up), and each part of the last start as its log says. The
tasks' instructions ("R000 part 1.") read as French: a new round's search over the English paper
waits up to 30 s for its vectors (CROSS_LANGUAGE_WAIT), a resumed round's does not.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import re
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path
from typing import Any

import httpx
import sqlalchemy as sa

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.harness import free_port  # noqa: E402
from tests.openai_stub import OpenAIStub, Reply, request_schema  # noqa: E402

TASKS = 5
MARK = re.compile(r"R(\d{3})\b")
PART = re.compile(r"Question: R(\d{3}) part (\d)")


INPUTS: list[str] = []  # the documents every task reads (restart_times: the book)


def plan(round_no: str) -> dict[str, Any]:
    return {"userLanguage": "en", "objUserResponse": "Here is the plan.", "objFinalDocuments": [],
            "objWorkplan": [{"id": f"t{i}", "agent": "analyst", "instructions": f"R{round_no} part {i}.",
                             "inputs": list(INPUTS), "outputs": [], "dependsOn": []} for i in range(1, TASKS + 1)]}


def answer(body: dict[str, Any]) -> Any:
    text = json.dumps(body)
    if request_schema(body) is not None:  # the project manager plans
        return plan(MARK.search(text).group(1))
    return "Part analysed." if PART.search(text) else "All parts analysed."


class SlowStub(OpenAIStub):
    """The stub, answering each call after a random 50-400 ms, as a provider would."""

    hold = False  # task calls wait while set (restart_times kills the service meanwhile)

    async def _answer(self, behaviour, body, record, receive, send) -> None:
        while self.hold and PART.search(json.dumps(body)):
            await asyncio.sleep(0.05)
        await asyncio.sleep(random.uniform(0.05, 0.4))
        await super()._answer(Reply(answer(body)), body, record, receive, send)


class Service:
    def __init__(self, data_dir: Path, stub_url: str, database_url: str) -> None:
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.env = {**os.environ, "DATA_DIR": str(data_dir), "PORT": str(self.port), "OPENAI_BASE_URL": stub_url,
                    "OPENAI_API_KEY": "bench", "DATABASE_URL": database_url, "LLM_MAX_RETRIES": "0",
                    "TASK_CONCURRENCY": str(TASKS)}
        self.env.pop("API_KEYS", None)
        self.proc: subprocess.Popen | None = None
        self.log_path = data_dir.parent / "service.log"

    def start(self, wait: bool = True) -> None:
        """Launch the process; with `wait`, until /ready. A restart is not waited for: the killed rounds
        resume while it starts (DBOS launches before the file readers' warm-up that /ready waits for),
        and the next kill may come at any moment of that."""
        with open(self.log_path, "ab") as log:
            self.proc = subprocess.Popen([sys.executable, "-m", "app"], cwd=ROOT, env=self.env, stdout=log,
                                         stderr=subprocess.STDOUT)
        if not wait:
            return
        deadline = time.monotonic() + 300
        while time.monotonic() < deadline and self.proc.poll() is None:
            try:
                if httpx.get(self.url + "/ready", timeout=2).status_code == 200:
                    return
            except httpx.HTTPError:
                pass
            time.sleep(0.1)
        tail = self.log_path.read_text(errors="replace")[-3000:]
        raise SystemExit(f"the service did not start; the end of its log:\n{tail}")

    def ready(self) -> bool:
        try:
            return httpx.get(self.url + "/ready", timeout=2).status_code == 200
        except httpx.HTTPError:
            return False

    def start_waited(self) -> None:
        """Wait for the process launched last to be ready."""
        deadline = time.monotonic() + 300
        while time.monotonic() < deadline and self.proc.poll() is None and not self.ready():
            time.sleep(0.1)
        if not self.ready():
            tail = self.log_path.read_text(errors="replace")[-3000:]
            raise SystemExit(f"the service did not start; the end of its log:\n{tail}")

    def kill(self) -> None:
        self.proc.send_signal(signal.SIGKILL)
        self.proc.wait(30)

    def stop(self) -> None:
        if self.proc and self.proc.poll() is None:
            self.proc.terminate()
            self.proc.wait(30)


def journal(client: httpx.Client, workflows: dict[str, str]) -> dict[str, list[dict]]:
    """Every workflow's messages, by round mark."""
    return {mark: client.get(f"/api/workflows/{wid}/messages", params={"limit": 500}).json()["items"]
            for mark, wid in workflows.items()}


def running_rounds(url: str, workflows: dict[str, str]) -> int:
    """How many of `workflows` the database has running (read while the service is down)."""
    engine = sa.create_engine(url)
    try:
        with engine.connect() as conn:
            rows = conn.execute(sa.text("SELECT id FROM workflows WHERE status = 'running'")).all()
    finally:
        engine.dispose()
    return len({r[0] for r in rows} & set(workflows.values()))


def finished_tasks(url: str, workflows: dict[str, str]) -> set[tuple[str, str]]:
    """The tasks whose message is in the journal, read from the database while the service is down."""
    marks = {wid: mark for mark, wid in workflows.items()}
    engine = sa.create_engine(url)
    try:
        with engine.connect() as conn:
            rows = conn.execute(sa.text("SELECT workflow_id, meta FROM messages WHERE role = 'assistant'")).all()
    finally:
        engine.dispose()
    found = set()
    for wid, meta in rows:
        meta = json.loads(meta) if isinstance(meta, str) else meta
        if wid in marks and meta.get("taskId") and not meta.get("skipped"):
            found.add((marks[wid], meta["taskId"]))
    return found


def restart_times(restarts: int, embeddings: str, database_url: str) -> tuple[list[float], list[float], list[str]]:
    """Seconds from each relaunch after a SIGKILL to the resumed round's model call and to /ready,
    and the start-up lines of the log."""
    resumed, ready = [], []
    INPUTS[:] = ["tracemonkey.pdf"]
    book = (Path(os.environ.get("FOREMAN_CORPUS", ROOT / "tests" / "corpus")) / "tracemonkey.pdf").read_bytes()
    with tempfile.TemporaryDirectory() as tmp, SlowStub() as stub:
        service = Service(Path(tmp) / "data", stub.base_url, database_url)
        service.env["EMBEDDINGS"] = embeddings
        service.start()
        with httpx.Client(base_url=service.url, timeout=60) as client:
            file_id = client.post("/api/files", files=[("files", ("tracemonkey.pdf", book))]).json()[0]["id"]
            for n in range(restarts):
                calls = len(stub.records)
                stub.hold = True
                wid = client.post("/api/workflows/start", json={"prompt": f"Analyse R{n:03d} in {TASKS} parts",
                                                                "listFileId": [file_id]}).json()["id"]
                while len(stub.records) < calls + 2:  # its plan, and its tasks waiting for the model
                    time.sleep(0.05)
                service.kill()
                stub.hold = False
                calls = len(stub.records)
                launched = time.monotonic()
                service.start(wait=False)
                seen_call = seen_ready = 0.0  # each measured on its own: /ready is not asked only after the call
                while not (seen_call and seen_ready):
                    if time.monotonic() - launched > 300:
                        raise SystemExit("the restarted service neither resumed the round nor was ready in 300 s")
                    if not seen_call and len(stub.records) > calls:
                        seen_call = time.monotonic() - launched
                    if not seen_ready and service.ready():
                        seen_ready = time.monotonic() - launched
                    time.sleep(0.02)
                resumed.append(seen_call)
                ready.append(seen_ready)
                while client.get(f"/api/workflows/{wid}/status").json()["status"] == "running":
                    time.sleep(0.1)
        service.stop()
        lines = [line.split(": ", 1)[1] for line in service.log_path.read_text(errors="replace").splitlines()
                 if "foreman: Start" in line or ": Start-up: " in line or " warm " in line]
    return resumed, ready, lines


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=20)
    parser.add_argument("--batch", type=int, default=5)
    parser.add_argument("--kills", type=int, default=2, help="kills per batch (a crash is not counted against ROUND_MAX_ATTEMPTS)")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--database-url", default="")
    parser.add_argument("--restarts", type=int, default=0, help="measure this many restarts after a SIGKILL instead")
    args = parser.parse_args()
    if args.restarts:
        for embeddings in ("off", "local"):
            resumed, ready, lines = restart_times(args.restarts, embeddings, args.database_url)
            print(f"EMBEDDINGS={embeddings}: SIGKILL mid-task, relaunch -> the round's model call: median "
                  f"{statistics.median(resumed):.2f} s ({', '.join(f'{t:.2f}' for t in resumed)}); -> /ready: median "
                  f"{statistics.median(ready):.2f} s ({', '.join(f'{t:.2f}' for t in ready)}); load average "
                  f"{' '.join(f'{x:.1f}' for x in os.getloadavg())}", flush=True)
            for line in lines[-10:]:  # the last start's parts, and its warm-ups
                print(f"    {line}")
        return
    random.seed(args.seed)
    problems: list[str] = []
    kills = mid_round = 0
    with tempfile.TemporaryDirectory() as tmp, SlowStub() as stub:
        service = Service(Path(tmp) / "data", stub.base_url, args.database_url)
        db_url = (args.database_url.replace("+asyncpg", "+psycopg", 1) if args.database_url
                  else f"sqlite:///{Path(tmp) / 'data' / 'foreman.db'}")
        client = httpx.Client(base_url=service.url, timeout=30)
        workflows: dict[str, str] = {}
        # (round mark, task id) -> the stub's call count when the task was seen finished at a kill
        finished_at_kill: dict[tuple[str, str], int] = {}
        try:
            service.start()
            for first in range(0, args.rounds, args.batch):
                batch = {f"{n:03d}": "" for n in range(first, min(first + args.batch, args.rounds))}
                for mark in batch:
                    batch[mark] = client.post("/api/workflows/start",
                                              json={"prompt": f"Analyse R{mark} in {TASKS} parts"}).json()["id"]
                workflows.update(batch)
                calls_per_batch = len(batch) * (TASKS + 2)
                for _ in range(args.kills):
                    # A random moment of the batch's progress: after a random number of its model calls
                    # (counted from the kill before, since rounds resume while the service starts).
                    target = len(stub.records) + random.randint(1, calls_per_batch // args.kills)
                    deadline, last, seen = time.monotonic() + 300, time.monotonic(), len(stub.records)
                    while len(stub.records) < target and time.monotonic() < deadline:
                        if len(stub.records) != seen:
                            seen, last = len(stub.records), time.monotonic()
                        elif time.monotonic() - last > 60 and service.ready():
                            break  # ready and no call for a minute: the batch's rounds have ended
                        time.sleep(0.01)
                    time.sleep(random.uniform(0, 0.3))
                    service.kill()
                    kills += 1
                    running = running_rounds(db_url, batch)  # read while the service is down: as the kill left them
                    mid_round += bool(running)
                    print(f"kill {kills} after {len(stub.records)} model calls ({running} round(s) running)", flush=True)
                    calls = len(stub.records)
                    for key in finished_tasks(db_url, batch):
                        finished_at_kill.setdefault(key, calls)
                    service.start(wait=False)
                service.start_waited()
                deadline = time.monotonic() + 300
                while any(client.get(f"/api/workflows/{w}/status").json()["status"] == "running"
                          for w in batch.values()):
                    if time.monotonic() > deadline:
                        raise SystemExit("rounds did not finish within 300 s")
                    time.sleep(0.2)
            records = [r.body for r in stub.records]
            messages = journal(client, workflows)
            status_of = {mark: client.get(f"/api/workflows/{w}/status").json()["status"] for mark, w in workflows.items()}
            statuses = Counter(status_of.values())
            logs = {mark: [e["message"] for e in client.get(f"/api/workflows/{w}/logs", params={"limit": 500})
                           .json()["items"]] for mark, w in workflows.items()}
        finally:
            client.close()
            service.stop()
    calls: Counter = Counter()
    again = 0
    for index, body in enumerate(records):
        found = PART.search(json.dumps(body))
        if found:
            key = (found.group(1), f"t{found.group(2)}")
            calls[key] += 1
            if key in finished_at_kill and index >= finished_at_kill[key]:
                again += 1
                problems.append(f"round R{key[0]} task {key[1]} had finished before a kill and called the model again")
    for mark, items in messages.items():
        shape = [m["status"] for m in items]
        if shape != ["first", "step"] + ["step"] * TASKS + ["last"]:
            problems.append(f"round R{mark}: messages {shape}")
        tasks = Counter(m["metadata"]["taskId"] for m in items if (m.get("metadata") or {}).get("taskId"))
        if sorted(tasks) != [f"t{i}" for i in range(1, TASKS + 1)] or set(tasks.values()) != {1}:
            problems.append(f"round R{mark}: task messages {dict(tasks)}")
        if items and items[-1]["status"] != "last":
            problems.append(f"round R{mark} ended without its final message; its last logs: {logs[mark][-2:]}")
        repeated = [t for t, n in Counter(logs[mark]).items() if n > 1]
        if repeated:
            problems.append(f"round R{mark}: logs written twice: {repeated}")
    runs = Counter(calls.values())
    duplicated = lost = honest = 0
    for mark, items in messages.items():
        tasks = Counter(m["metadata"]["taskId"] for m in items if (m.get("metadata") or {}).get("taskId"))
        duplicated += any(n > 1 for n in tasks.values()) or any(n > 1 for n in Counter(logs[mark]).values())
        ended_with_answer = status_of[mark] == "completed" and bool(items) and items[-1]["status"] == "last"
        ended_with_reason = status_of[mark] == "failed" and bool(logs[mark]) and "fail" in logs[mark][-1].lower()
        honest += ended_with_answer or ended_with_reason
        lost += not (ended_with_answer or ended_with_reason)
    print(f"{args.rounds} rounds of {TASKS} tasks, {kills} SIGKILLs at random moments, {len(records)} model calls")
    print(f"kills with rounds running: {mid_round}; with no round running: {kills - mid_round}")
    print(f"rounds: {dict(statuses)}; ended honestly (completed with the final answer, or failed with a log "
          f"saying so): {honest}; lost: {lost}; with a message or log duplicated: {duplicated}")
    print(f"tasks finished before a kill: {len(finished_at_kill)}; of those called again after it: {again}")
    print("model calls per task: " + ", ".join(f"{n} call(s): {k} tasks" for n, k in sorted(runs.items())))
    print(f"problems: {len(problems)}")
    for problem in problems[:20]:
        print("  " + problem)
    if problems or statuses.get("completed", 0) != args.rounds:
        raise SystemExit(1)


if __name__ == "__main__":
    main()
