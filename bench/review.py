"""Rounds that wait for the user: how soon a decision runs the plan, and what waiting rounds cost.

    python bench/review.py [--rounds 50] [--waiting 1000] [--pg-url postgresql+asyncpg://postgres@127.0.0.1/postgres]
                           [--seconds 5] [--turns 3]

A live server on 127.0.0.1 (SQLite, or PostgreSQL with --pg-url) with an instant model. Prints:

- the time from a decision's 200 (`POST .../review` approve, as the client receives it) to the
  first task's log ("Running task 1/..."; its timestamp, same machine clock), median and p99 over
  `--rounds` rounds;
- with `--waiting` rounds waiting for review at once: this process's threads and (PostgreSQL) the
  database connections it holds, before the rounds were started and while they all wait; and the
  rounds running in the engine (its tracked round tasks) while they wait;
- the empty poll (`bench/polling.py`'s: a completed round's messages after its last one, 50
  connections under wrk) with no round waiting, with the `--waiting` rounds waiting, and again with
  none once they are all stopped: the ratio of the poll's rate while they wait to its rate without
  them (the mean of before and after, so a drift of the shared machine shows as their gap), best of
  `--turns` turns of `--seconds` each (target: within 5 %). Two measures: the rate, and the server's
  CPU time per poll (this process's CPU time over the requests wrk had answered; the server runs
  in this process, wrk in its own), which other load on a shared machine moves far less.
"""

from __future__ import annotations

import argparse
import asyncio
import logging
import statistics
import sys
import tempfile
import threading
import time
from datetime import datetime
from pathlib import Path

from common import DelayedModel
from polling import wrk_run

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tests.harness import LiveServer, settings_for, unique_db_name, wait_for  # noqa: E402


def connections(url: str) -> int | None:
    if not url:
        return None
    import asyncpg

    async def count() -> int:
        conn = await asyncpg.connect(url.replace("postgresql+asyncpg://", "postgresql://"))
        try:
            return await conn.fetchval("SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() "
                                       "AND pid <> pg_backend_pid()")
        finally:
            await conn.close()

    return asyncio.run(count())


def wait_state(client, wid: str, status: str) -> dict:
    return wait_for(lambda: (s := client.get(f"/api/workflows/{wid}/status").json())["status"] == status and s,
                    600, f"{wid} {status}")


def latency(server: LiveServer, rounds: int) -> list[float]:
    delays = []
    with server.client() as client:
        for _ in range(rounds):
            wid = client.post("/api/workflows/start", json={"prompt": "Compare the figures.", "review": "plan"}).json()["id"]
            wait_state(client, wid, "waiting")
            answer = client.post(f"/api/workflows/{wid}/review", json={"decision": "approve"})
            received = time.time()
            assert answer.status_code == 200, answer.text

            def first_task() -> float | None:
                for entry in client.get(f"/api/workflows/{wid}/logs").json()["items"]:
                    if entry["message"].startswith("Running task"):
                        return datetime.fromisoformat(entry["timestamp"]).timestamp()
                return None

            delays.append(wait_for(first_task, 600, "the first task's log") - received)
            wait_state(client, wid, "completed")
    return delays


def empty_poll(server: LiveServer, seconds: int, turns: int) -> tuple[float, float]:
    """The empty poll's best rate (requests a second) and least server CPU per poll (µs) over `turns` turns."""
    with server.client() as client:
        wid = client.post("/api/workflows/start", json={"prompt": "Compare the figures."}).json()["id"]
        last = wait_state(client, wid, "completed")["lastMessageId"]
        poll = f"{server.url}/api/workflows/{wid}/messages?id={last}"
        assert client.get(poll).json()["items"] == []
    wrk_run(poll, 2, 50)  # warm-up, not counted: what the phase before left running settles
    rates, cpu = [], []
    for _ in range(turns):
        started = time.process_time()
        rate, answered = wrk_run(poll, seconds, 50)
        rates.append(rate)
        cpu.append((time.process_time() - started) / answered * 1e6)
    return max(rates), min(cpu)


def waiting_cost(server: LiveServer, count: int, url: str, seconds: int, turns: int) -> None:
    before_threads, before_conns = threading.active_count(), connections(url)
    engine = server.app.state.workflows.engine
    idle = empty_poll(server, seconds, turns)
    with server.client() as client:
        ids = [client.post("/api/workflows/start", json={"prompt": "Compare the figures.", "review": "plan"}).json()["id"]
               for _ in range(count)]
        for wid in ids:
            wait_state(client, wid, "waiting")
        time.sleep(2)  # the rounds' DBOS workflows have ended; let the pools settle
        threads, conns = threading.active_count(), connections(url)
        print(f"{count} rounds waiting at once: process threads {before_threads} before, {threads} while they wait; "
              f"round tasks running in the engine: {sum(len(t) for t in engine._tasks.values())}; "
              + (f"database connections {before_conns} before, {conns} while they wait" if url
                 else "SQLite: the service's connections are its fixed reader/writer threads"))
        busy = empty_poll(server, seconds, turns)
        for wid in ids:
            assert client.post(f"/api/workflows/{wid}/stop").status_code == 200
        for wid in ids:
            wait_state(client, wid, "stopped")
    after = empty_poll(server, seconds, turns)
    for i, (measure, unit) in enumerate((("rate", "req/s"), ("server CPU per poll", "µs"))):
        base = (idle[i] + after[i]) / 2
        print(f"empty poll {measure}: {idle[i]:.0f} {unit} with no round waiting, {busy[i]:.0f} with {count} waiting, "
              f"{after[i]:.0f} once they were stopped; ratio {busy[i] / base:.3f} (target within 5 %; before/after "
              f"gap {abs(idle[i] - after[i]) / base * 100:.1f} %), best of {turns} turns of {seconds} s, 50 connections")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=50)
    parser.add_argument("--waiting", type=int, default=1000)
    parser.add_argument("--pg-url", default="")
    parser.add_argument("--seconds", type=int, default=5)
    parser.add_argument("--turns", type=int, default=3)
    args = parser.parse_args()
    logging.getLogger("httpx").setLevel(logging.WARNING)  # a line per request of the bench's own client
    url = ""
    if args.pg_url:
        import asyncpg

        name = unique_db_name()

        async def admin(sql: str) -> None:
            conn = await asyncpg.connect(args.pg_url.replace("postgresql+asyncpg://", "postgresql://"))
            await conn.execute(sql)
            await conn.close()

        asyncio.run(admin(f'CREATE DATABASE "{name}"'))
        url = f"{args.pg_url.rsplit('/', 1)[0]}/{name}"
    try:
        with tempfile.TemporaryDirectory() as tmp, \
                LiveServer(settings_for(Path(tmp), url), DelayedModel(tasks=2)) as server:
            delays = sorted(latency(server, args.rounds))
            p99 = delays[min(len(delays) - 1, round(0.99 * (len(delays) - 1)))]
            print(f"decision 200 -> first task's log over {len(delays)} rounds ({'PostgreSQL' if url else 'SQLite'}): "
                  f"median {statistics.median(delays) * 1000:.1f} ms, p99 {p99 * 1000:.1f} ms")
            if args.waiting:
                waiting_cost(server, args.waiting, url, args.seconds, args.turns)
    finally:
        if url:
            asyncio.run(admin(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))


if __name__ == "__main__":
    main()
