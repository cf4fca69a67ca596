"""A flow's map on PostgreSQL with replicas: its items are shared among the live replicas (a DBOS queue),
at most the map's concurrency at once across all of them, each item run once, the results in item order;
a stop cuts the items where they run and starts no other (issue 45)."""

from __future__ import annotations

import time
from collections import Counter

from tests.harness import wait_for, wait_status
from tests.rounds.test_takeover import cluster


def mapped(concurrency: int, sep: str = ", ") -> dict:
    """A flow of one map of `llm` items (its `items` input), the answers joined by `sep` (bench/map_replicas.py too)."""
    return {"name": "mapped", "inputs": {"items": {"type": "list"}},
            "nodes": [{"id": "start", "type": "start"},
                      {"id": "m", "type": "map", "config": {"items": "inputs.items", "concurrency": concurrency,
                                                            "body": {"id": "ask", "type": "llm",
                                                                     "config": {"prompt": "{{ item }}"}}}},
                      {"id": "end", "type": "end"}],
            "edges": [{"source": "start", "target": "m"}, {"source": "m", "target": "end"}],
            "outputs": {"all": f"{{{{ m.output | join('{sep}') }}}}"}}


def most_at_once(records, delay: float) -> int:
    """The most model calls the stub was answering at once: each call's span is its answer time less the
    stub's delay, shrunk a little at both ends (a call that starts as another ends is not both at once)."""
    spans = [(r.answered_at - delay + 0.1, r.answered_at - 0.1) for r in records]
    edges = sorted([(a, 1) for a, _ in spans] + [(b, -1) for _, b in spans])
    most = now = 0
    for _, step in edges:
        now += step
        most = max(most, now)
    return most


def start(replica, items: list[str], concurrency: int) -> str:
    with replica.client() as client:
        flow_id = client.post("/api/flows", json=mapped(concurrency)).json()["id"]
        answer = client.post("/api/workflows/start", json={"flow": {"id": flow_id, "version": "draft",
                                                                    "inputs": {"items": items}}})
        assert answer.status_code == 200, answer.text
        return answer.json()["id"]


def test_a_maps_items_run_on_every_replica_once_each_within_its_concurrency(tmp_path, postgres_url, openai_stub):
    openai_stub.default = lambda body: f"done {body['messages'][-1]['content']}"
    openai_stub.delay = 1.0
    items = [f"item {i}" for i in range(12)]
    # Each replica runs 2 at once: a map of 4 at once runs on both.
    with cluster(tmp_path, postgres_url, openai_stub, ["r1", "r2"], FLOW_MAP_WORKERS="2") as rs:
        r1, r2 = rs.values()
        wid = start(r1, items, concurrency=4)
        with r2.client() as client:
            assert wait_status(client, wid, "completed", "failed", timeout=180)["status"] == "completed"
            last = client.get(f"/api/workflows/{wid}/messages").json()["items"][-1]
            runs = client.get(f"/api/workflows/{wid}/nodes").json()["items"]
    assert last["content"] == ", ".join(f"done {item}" for item in items)  # in item order
    assert all(n == 1 for n in Counter(r["path"] for r in runs).values())
    assert sorted(r["path"] for r in runs if r["path"].startswith("m[")) == sorted(f"m[{i}]" for i in range(12))
    asked = Counter(r.body["messages"][-1]["content"] for r in openai_stub.records)
    assert asked == Counter(items)  # each item asked once
    by_replica = {name: len(openai_stub.records_of(name)) for name in ("r1", "r2")}
    assert all(by_replica.values()), by_replica  # both replicas ran items
    assert 2 <= most_at_once(openai_stub.records, 1.0) <= 4  # the map's concurrency, across the replicas


def test_a_stop_cuts_a_shared_maps_items_and_starts_no_other(tmp_path, postgres_url, openai_stub):
    openai_stub.default = lambda body: f"done {body['messages'][-1]['content']}"
    openai_stub.delay = 3.0
    items = [f"item {i}" for i in range(10)]
    with cluster(tmp_path, postgres_url, openai_stub, ["r1", "r2"]) as rs:
        r1, r2 = rs.values()
        wid = start(r1, items, concurrency=2)
        wait_for(lambda: len(openai_stub.records) >= 2, 90, "two items to be asked")
        with r2.client() as client:
            assert client.post(f"/api/workflows/{wid}/stop").status_code == 200
            assert wait_status(client, wid, "stopped", timeout=30)["status"] == "stopped"
        asked = len(openai_stub.records)
        time.sleep(5)  # an item enqueued before the stop, taken off the queue after it, runs nothing
        assert len(openai_stub.records) == asked <= 4
        with r1.client() as client:
            runs = client.get(f"/api/workflows/{wid}/nodes").json()["items"]
        assert not [r for r in runs if r["path"].startswith("m[") and r["status"] == "succeeded"]
