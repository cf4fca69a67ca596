"""A flow round of a replica killed on PostgreSQL is taken over by a survivor within the heartbeat: it
completes there, the items that had settled are not run again, each node run is stored once."""

from __future__ import annotations

import signal
from collections import Counter

from tests.harness import wait_for, wait_status
from tests.rounds.test_flow_map_replicas import mapped
from tests.rounds.test_takeover import TIMEOUT, cluster


def test_a_killed_replicas_flow_round_is_taken_over_and_finished_once(tmp_path, postgres_url, openai_stub):
    openai_stub.default = lambda body: f"done {body['messages'][-1]['content']}"
    openai_stub.delay = 1.0
    items = [f"item {i}" for i in range(5)]
    with cluster(tmp_path, postgres_url, openai_stub, ["r1", "r2"], HEARTBEAT_TIMEOUT_SECONDS=TIMEOUT) as rs:
        r1, r2 = rs.values()
        with r1.client() as client:
            flow_id = client.post("/api/flows", json=mapped(1)).json()["id"]
            wid = client.post("/api/workflows/start", json={"flow": {"id": flow_id, "version": "draft",
                                                                     "inputs": {"items": items}}}).json()["id"]
        # r1 runs the round; its map's items go to either replica (`app.rounds.item_queue`).
        wait_for(lambda: len(openai_stub.records) >= 3, 90, "the map to be in its middle")
        r1.signal(signal.SIGKILL)
        with r2.client() as client:
            assert wait_status(client, wid, "completed", "failed", timeout=120)["status"] == "completed"
            last = client.get(f"/api/workflows/{wid}/messages").json()["items"][-1]
            runs = client.get(f"/api/workflows/{wid}/nodes").json()["items"]
        assert last["content"] == ", ".join(f"done {item}" for item in items)
        assert all(n == 1 for n in Counter(r["path"] for r in runs).values())
        asked = Counter(r["messages"][-1]["content"] for r in openai_stub.requests)
        assert all(asked[item] <= 2 for item in items) and sum(asked.values()) <= len(items) + 1
        assert any("took over replica r1" in r.log() for r in (r2,))
