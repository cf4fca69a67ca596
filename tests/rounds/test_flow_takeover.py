"""A flow round of a replica killed on PostgreSQL is taken over by a survivor within the heartbeat: it
completes there, the items that had settled are not run again, each node run is stored once."""

from __future__ import annotations

import signal
from collections import Counter

from tests.harness import wait_for, wait_status
from tests.rounds.test_takeover import TIMEOUT, cluster


def test_a_killed_replicas_flow_round_is_taken_over_and_finished_once(tmp_path, postgres_url, openai_stub):
    openai_stub.default = lambda body: f"done {body['messages'][-1]['content']}"
    openai_stub.delay = 1.0
    items = [f"item {i}" for i in range(5)]
    mapped = {"name": "mapped", "inputs": {"items": {"type": "list"}},
              "nodes": [{"id": "start", "type": "start"},
                        {"id": "m", "type": "map", "config": {"items": "inputs.items", "concurrency": 1,
                                                              "body": {"id": "ask", "type": "llm",
                                                                       "config": {"prompt": "{{ item }}"}}}},
                        {"id": "end", "type": "end"}],
              "edges": [{"source": "start", "target": "m"}, {"source": "m", "target": "end"}],
              "outputs": {"all": "{{ m.output | join(', ') }}"}}
    with cluster(tmp_path, postgres_url, openai_stub, ["r1", "r2"], HEARTBEAT_TIMEOUT_SECONDS=TIMEOUT) as rs:
        r1, r2 = rs.values()
        with r1.client() as client:
            flow_id = client.post("/api/flows", json=mapped).json()["id"]
            wid = client.post("/api/workflows/start", json={"flow": {"id": flow_id, "version": "draft",
                                                                     "inputs": {"items": items}}}).json()["id"]
        wait_for(lambda: len(openai_stub.records_of("r1")) >= 3, 90, "r1 to be in the middle of the map")
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
