"""Replicas on one PostgreSQL database: throughput for 1, 2 and 3 replicas, the takeover time, and the hand-over.

    python bench/cluster.py [--database-url URL] [--rounds 200] [--delay 0.2] [--heartbeat-timeout 5]
    python bench/cluster.py --replicas --takeovers 0 --handovers 5   # the SIGTERM hand-over alone

Each configuration gets a fresh database on the server of `--database-url` (default
FOREMAN_TEST_PG_URL). Every replica is `python -m app`; the model is the OpenAI-compatible test
stub on 127.0.0.1 answering every call after `--delay` seconds (plans of two parallel tasks, so a
round makes three model calls one after another: plan, the two tasks, the final answer). The
rounds are started over HTTP, spread over the replicas in turn, all at once; a round's time is
from its start's answer to its last write (the database's own stamps). Then: one replica is
killed with SIGKILL while its rounds wait for the model, and the takeover time is measured from
the kill to the first message the taker writes for one of them (which includes the heartbeat
timeout, the takeover and the interrupted model call), median of `--takeovers`. Last, the
hand-over (`--handovers`): three replicas, one of them running three rounds whose tasks wait for
the model, gets SIGTERM; the time is from the signal to the three rounds finished on a survivor,
median of `--handovers`, once on the quiet machine and once with every core kept busy by a
busy-loop process of its own (the load an orchestrator's rolling restart meets on a full node).

Each replica runs with MAX_CONCURRENT_ROUNDS=16 and pools smaller than the defaults, passed
explicitly: DATABASE_POOL_SIZE=8, DATABASE_MAX_OVERFLOW=4, DBOS_POOL_SIZE=8, so at most
8 + 4 + 8 + 2 = 22 connections each and 66 for three replicas, which leaves room under PostgreSQL's
default max_connections of 100 for the other users of a shared server. The most connections each
replica held at once (pg_stat_activity, sampled every 50 ms) is printed beside its figures.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import itertools
import os
import signal
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from concurrent.futures import ThreadPoolExecutor
from contextlib import ExitStack
from pathlib import Path

from common import median

from tests.harness import ConnectionPeaks, Replica, pg_fetch, plan_of
from tests.openai_stub import OpenAIStub, request_schema

SERVER = os.environ.get("FOREMAN_TEST_PG_URL", "postgresql+asyncpg://postgres@127.0.0.1:5432/postgres")


SLOTS = 16
START_SECONDS = 300  # a replica's start on a loaded machine (a bound, not a figure)
POOLS = {"DATABASE_POOL_SIZE": "8", "DATABASE_MAX_OVERFLOW": "4", "DBOS_POOL_SIZE": "8"}
MOST = sum(int(v) for v in POOLS.values()) + 2  # the README's formula: both pools and two LISTEN connections


def replica_of(application_name: str) -> str | None:
    """A replica's connections are named 'foreman <id>' and 'foreman-dbos <id>'; migrations and others are not counted."""
    if application_name == "foreman migrate":
        return None
    kind, _, replica = application_name.partition(" ")
    return replica if kind in ("foreman", "foreman-dbos") and replica else None


def admin(url: str, statement: str) -> None:
    import asyncpg

    async def run() -> None:
        conn = await asyncpg.connect(url.replace("postgresql+asyncpg://", "postgresql://"))
        try:
            await conn.execute(statement)
        finally:
            await conn.close()

    asyncio.run(run())


class Database:
    """A fresh database on the server, dropped afterwards."""

    def __init__(self, admin_url: str) -> None:
        self.admin_url = admin_url
        self.name = "foreman_bench_" + uuid.uuid4().hex[:10]
        self.url = f"{admin_url.rsplit('/', 1)[0]}/{self.name}"

    def __enter__(self) -> str:
        admin(self.admin_url, f'CREATE DATABASE "{self.name}"')
        return self.url

    def __exit__(self, *exc: object) -> None:
        admin(self.admin_url, f'DROP DATABASE IF EXISTS "{self.name}" WITH (FORCE)')


def start_replicas(stack: ExitStack, tmp: Path, url: str, stub: OpenAIStub, names: list[str],
                   **env: str) -> list[Replica]:
    replicas = []
    for name in names:
        replica = Replica(tmp, url, name, OPENAI_BASE_URL=stub.url_for(name), OPENAI_API_KEY="bench", **env)
        stack.callback(replica.stop)
        replicas.append(replica.start())
        if len(replicas) == 1:
            replica.wait_ready(START_SECONDS)  # the first one creates the schema
    for replica in replicas:
        replica.wait_ready(START_SECONDS)
    return replicas


def start(replica: Replica, prompt: str) -> str:
    with replica.client() as client:
        answer = client.post("/api/workflows/start", json={"prompt": prompt})
    if answer.status_code != 200:
        raise SystemExit(f"{replica.name} answered {answer.status_code} to a start: {answer.text} "
                         f"(see {replica.log_path})")
    return answer.json()["id"]


def wait_rows(url: str, query: str, timeout: float, what: str, every: float = 0.1) -> list:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        rows = pg_fetch(url, query)
        if rows:
            return rows
        time.sleep(every)
    raise SystemExit(f"timed out waiting for {what}")


def throughput(server: str, tmp: Path, stub: OpenAIStub, replicas: int,
               rounds: int) -> tuple[float, float, float, int]:
    """Rounds per second, median and p99 round time (s) for `rounds` rounds spread over `replicas`, and
    the most connections one replica held at once."""
    with Database(server) as url, ExitStack() as stack, ConnectionPeaks(url, replica_of) as peaks:
        names = [f"n{replicas}r{i}" for i in range(1, replicas + 1)]
        nodes = start_replicas(stack, tmp, url, stub, names, MAX_CONCURRENT_ROUNDS=str(SLOTS), **POOLS)
        with ThreadPoolExecutor(8) as pool:
            list(pool.map(lambda n: start(nodes[n % replicas], f"Look at case {n}."), range(rounds)))
        wait_rows(url, "SELECT 1 FROM workflows HAVING count(*) FILTER (WHERE status = 'running') = 0",
                  600, "every round to end", every=0.25)
        rows = pg_fetch(url, "SELECT w.status, w.started_at, max(l.timestamp) AS ended FROM workflows w "
                             "JOIN logs l ON l.workflow_id = w.id GROUP BY w.id")
        failed = pg_fetch(url, "SELECT l.message FROM logs l JOIN workflows w ON w.id = l.workflow_id "
                               "WHERE w.status <> 'completed' AND l.type = 'error'")
        if failed:
            raise SystemExit(f"{len(failed)} round(s) did not complete: {failed[0]['message']}")
        times = sorted((r["ended"] - r["started_at"]).total_seconds() for r in rows)
        wall = (max(r["ended"] for r in rows) - min(r["started_at"] for r in rows)).total_seconds()
        return rounds / wall, median(times), statistics.quantiles(times, n=100)[-1], max(peaks.peak.values())


def takeover_times(server: str, tmp: Path, stub: OpenAIStub, runs: int, timeout: float) -> list[float]:
    """Seconds from SIGKILL of a replica whose rounds wait for the model to the taker's first message."""
    times = []
    with Database(server) as url, ExitStack() as stack:
        env = {"HEARTBEAT_TIMEOUT_SECONDS": str(timeout), **POOLS}
        start_replicas(stack, tmp, url, stub, ["taker"], **env)
        for run in range(runs):
            victim = start_replicas(stack, tmp, url, stub, [f"victim{run}"], **env)[0]
            workflows = [start(victim, f"Look at case {run}-{n}.") for n in range(4)]
            ids = "', '".join(workflows)
            # Mid-round: every round planned and its tasks waiting for the model.
            wait_rows(url, f"SELECT 1 FROM messages WHERE workflow_id IN ('{ids}') AND role = 'assistant' "
                           f"HAVING count(*) >= {len(workflows)}", 60, "the victim's plans")
            killed = time.monotonic()
            victim.signal(signal.SIGKILL)
            victim.process.wait()
            # Read only once the victim is gone: a message it wrote just before the kill is not the taker's.
            last = pg_fetch(url, "SELECT coalesce(max(id), 0) AS id FROM messages")[0]["id"]
            wait_rows(url, f"SELECT 1 FROM messages WHERE id > {last} AND workflow_id IN ('{ids}')", 120 + timeout,
                      "the taker's first message", every=0.01)
            times.append(time.monotonic() - killed)
            wait_rows(url, f"SELECT 1 FROM workflows WHERE id IN ('{ids}') "
                           "HAVING count(*) FILTER (WHERE status = 'running') = 0", 120, "the rounds to end")
    return times


class Busy:
    """One busy-loop process per core for as long as the block runs."""

    def __enter__(self) -> Busy:
        self.loops = [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(os.cpu_count() or 1)]
        return self

    def __exit__(self, *exc: object) -> None:
        for loop in self.loops:
            loop.kill()
            loop.wait()


def handover_times(server: str, tmp: Path, stub: OpenAIStub, runs: int, busy: bool) -> list[float]:
    """Seconds from SIGTERM of a replica whose three rounds wait for the model at their tasks to those
    rounds finished on the two survivors."""
    times = []
    with Database(server) as url, ExitStack() as stack:
        env = {"HEARTBEAT_TIMEOUT_SECONDS": "30", **POOLS}  # the default: only the hand-over can be this quick
        start_replicas(stack, tmp, url, stub, ["survivor1", "survivor2"], **env)
        for run in range(runs):
            victim = start_replicas(stack, tmp, url, stub, [f"leaving{run}{'b' if busy else 'q'}"], **env)[0]
            workflows = [start(victim, f"Look at case {run}-{n}.") for n in range(3)]
            ids = "', '".join(workflows)
            wait_rows(url, f"SELECT 1 FROM messages WHERE workflow_id IN ('{ids}') AND role = 'assistant' "
                           f"HAVING count(*) >= {len(workflows)}", 120, "the leaving replica's plans")
            with Busy() if busy else contextlib.nullcontext():
                signalled = time.monotonic()
                victim.signal(signal.SIGTERM)
                wait_rows(url, f"SELECT 1 FROM workflows WHERE id IN ('{ids}') HAVING count(*) FILTER "
                               "(WHERE status = 'running') = 0", 600, "the rounds to end", every=0.05)
                times.append(time.monotonic() - signalled)
                victim.process.wait(120)
            failed = pg_fetch(url, f"SELECT id FROM workflows WHERE id IN ('{ids}') AND status <> 'completed'")
            if failed:
                raise SystemExit(f"{len(failed)} handed-over round(s) did not complete (see {victim.log_path})")
    return times


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--database-url", default=SERVER, help="a PostgreSQL server (a database is made per run)")
    parser.add_argument("--rounds", type=int, default=200)
    parser.add_argument("--delay", type=float, default=0.2, help="seconds the model takes per call")
    parser.add_argument("--heartbeat-timeout", type=float, default=5.0)
    parser.add_argument("--takeovers", type=int, default=5)
    parser.add_argument("--replicas", type=int, nargs="*", default=[1, 2, 3], help="the configurations to measure")
    parser.add_argument("--handovers", type=int, default=5, help="SIGTERM hand-overs measured, quiet and busy each")
    args = parser.parse_args()
    numbers = itertools.count(1)
    stub = OpenAIStub(default=lambda body: plan_of(2) if request_schema(body) else f"Answer {next(numbers)}.")
    stub.delay = args.delay
    tmp = tempfile.mkdtemp(prefix="foreman-cluster-")  # the replicas' logs stay there
    print(f"{args.rounds} rounds started at once (3 model calls of {args.delay * 1000:.0f} ms each, one after "
          f"another; MAX_CONCURRENT_ROUNDS={SLOTS}), replicas on one PostgreSQL, {os.cpu_count()} cores, "
          f"{' '.join(f'{k}={v}' for k, v in POOLS.items())} (at most {MOST} connections a replica), "
          f"load average {' '.join(f'{x:.1f}' for x in os.getloadavg())} (replica logs in {tmp}):", flush=True)
    with stub:
        one = 0.0
        for n in args.replicas:
            rate, mid, p99, most = throughput(args.database_url, Path(tmp), stub, n, args.rounds)
            one = one or rate
            print(f"  {n} replica{'s' if n > 1 else ' '}: {rate:6.2f} rounds/s ({rate / one:.2f} x one replica), "
                  f"round time median {mid * 1000:.0f} ms, p99 {p99 * 1000:.0f} ms; most connections held by "
                  f"one replica {most} of {MOST}; load average now "
                  f"{' '.join(f'{x:.1f}' for x in os.getloadavg())}", flush=True)
        stub.delay = max(args.delay, 1.0)  # the victim's rounds must still wait for the model when it is killed
        takeovers = (takeover_times(args.database_url, Path(tmp), stub, args.takeovers, args.heartbeat_timeout)
                     if args.takeovers else [])
        handovers = {busy: handover_times(args.database_url, Path(tmp), stub, args.handovers, busy)
                     for busy in (False, True)} if args.handovers else {}
    if takeovers:
        print(f"takeover (SIGKILL -> the taker's first message, HEARTBEAT_TIMEOUT_SECONDS={args.heartbeat_timeout:g}, "
              f"model {stub.delay * 1000:.0f} ms): median {median(takeovers):.2f} s of {len(takeovers)} "
              f"({', '.join(f'{t:.2f}' for t in takeovers)}); beyond the timeout: "
              f"{median(takeovers) - args.heartbeat_timeout:.2f} s")
    for busy, times in handovers.items():
        print(f"hand-over (SIGTERM of a replica with 3 rounds at their tasks -> those rounds finished on the 2 "
              f"survivors, model {stub.delay * 1000:.0f} ms, "
              f"{f'{os.cpu_count()} busy-loop processes' if busy else 'quiet'}): median {median(times):.2f} s "
              f"of {len(times)} ({', '.join(f'{t:.2f}' for t in times)})")


if __name__ == "__main__":
    main()
