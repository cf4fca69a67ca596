"""A flow's map shared among 1, 2 and 3 replicas on one PostgreSQL database: items per second.

    python bench/map_replicas.py [--database-url URL] [--items 96] [--delay 0.5] [--workers 4] [--replicas 1 2 3]

Each configuration gets a fresh database (FOREMAN_TEST_PG_URL's server) and its replicas (`python -m app`,
FLOW_MAP_WORKERS=`--workers`: the items one replica runs at once). One flow, started on the first replica:
a map of `--items` `llm` items with concurrency workers x replicas (one replica alone runs its items in the
round, without the queue), the model the OpenAI-compatible test stub on
127.0.0.1 answering each call after `--delay` seconds. The time is from the start's answer to the round's
end (the database's own stamps); every item is checked to have been asked once and the output to keep the
items' order. Printed: items per second, the ratio to one replica (measured in this run), and how many
items each replica ran.
"""

from __future__ import annotations

import argparse
import os
import tempfile
from collections import Counter
from contextlib import ExitStack
from pathlib import Path

from cluster import POOLS, SERVER, Database, start_replicas, wait_rows

from tests.harness import pg_fetch
from tests.openai_stub import OpenAIStub
from tests.rounds.test_flow_map_replicas import mapped


def measure(server: str, tmp: Path, stub: OpenAIStub, replicas: int, items: int, workers: int,
            concurrency: int) -> tuple[float, dict[str, int]]:
    """Items per second of one map over `replicas`, and the items each replica ran."""
    stub.records.clear()
    with Database(server) as url, ExitStack() as stack:
        names = [f"m{replicas}r{i}" for i in range(1, replicas + 1)]
        nodes = start_replicas(stack, tmp, url, stub, names, FLOW_MAP_WORKERS=str(workers), **POOLS)
        asked = [f"item {i}" for i in range(items)]
        with nodes[0].client() as client:
            flow_id = client.post("/api/flows", json=mapped(concurrency, "|")).json()["id"]
            answer = client.post("/api/workflows/start", json={"flow": {"id": flow_id, "version": "draft",
                                                                        "inputs": {"items": asked}}})
            if answer.status_code != 200:
                raise SystemExit(f"the start answered {answer.status_code}: {answer.text}")
            wid = answer.json()["id"]
        wait_rows(url, f"SELECT 1 FROM workflows WHERE id = '{wid}' AND status <> 'running'", 900,
                  "the flow round to end", every=0.25)
        [row] = pg_fetch(url, f"SELECT w.status, w.started_at, max(l.timestamp) AS ended FROM workflows w "
                              f"JOIN logs l ON l.workflow_id = w.id WHERE w.id = '{wid}' GROUP BY w.id, w.status")
        if row["status"] != "completed":
            raise SystemExit(f"the flow round ended {row['status']} (logs in {tmp})")
        with nodes[0].client() as client:
            last = client.get(f"/api/workflows/{wid}/messages").json()["items"][-1]["content"]
        if last != "|".join(f"done {a}" for a in asked):
            raise SystemExit("the map's output lost its items' order")
        count = Counter(r.body["messages"][-1]["content"] for r in stub.records)
        if count != Counter(asked):
            raise SystemExit(f"items were not asked once each: {sum(count.values())} calls for {items} items")
        seconds = (row["ended"] - row["started_at"]).total_seconds()
        return items / seconds, {name: len(stub.records_of(name)) for name in names}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--database-url", default=SERVER, help="a PostgreSQL server (a database is made per run)")
    parser.add_argument("--items", type=int, default=96)
    parser.add_argument("--delay", type=float, default=0.5, help="seconds the model takes per call")
    parser.add_argument("--workers", type=int, default=4, help="FLOW_MAP_WORKERS: items a replica runs at once")
    parser.add_argument("--replicas", type=int, nargs="*", default=[1, 2, 3])
    args = parser.parse_args()
    stub = OpenAIStub(default=lambda body: f"done {body['messages'][-1]['content']}")
    stub.delay = args.delay
    tmp = tempfile.mkdtemp(prefix="foreman-map-replicas-")
    print(f"a map of {args.items} llm items, concurrency {args.workers} x replicas, FLOW_MAP_WORKERS={args.workers}, model "
          f"{args.delay * 1000:.0f} ms a call; {os.cpu_count()} cores, load average "
          f"{' '.join(f'{x:.1f}' for x in os.getloadavg())} (replica logs in {tmp}):", flush=True)
    with stub:
        one = 0.0
        for n in args.replicas:
            rate, ran = measure(args.database_url, Path(tmp), stub, n, args.items, args.workers, args.workers * n)
            one = one or rate
            print(f"  {n} replica{'s' if n > 1 else ' '}: {rate:6.2f} items/s ({rate / one:.2f} x one replica); "
                  f"items run by each: {', '.join(f'{k} {v}' for k, v in ran.items())}", flush=True)


if __name__ == "__main__":
    main()
