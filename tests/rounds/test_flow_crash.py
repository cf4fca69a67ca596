"""A flow round killed with SIGKILL mid-map and mid-loop, then restarted: it completes, and no item or
iteration that had finished is run again (the model calls are counted at the stub)."""

from __future__ import annotations

from collections import Counter
from typing import Any

import pytest

from tests.harness import wait_status
from tests.openai_stub import Hold, Reply
from tests.rounds.test_crash import Service

pytestmark = pytest.mark.heavy


@pytest.fixture
def service(tmp_path, openai_stub, database_url):
    svc = Service(tmp_path, openai_stub.base_url, database_url)
    yield svc
    svc.stop()


def save_and_run(client, definition: dict[str, Any], inputs: dict[str, Any]) -> str:
    flow = client.post("/api/flows", json=definition)
    assert flow.status_code == 201, flow.text
    started = client.post("/api/workflows/start", json={"flow": {"id": flow.json()["id"], "version": "draft",
                                                                 "inputs": inputs}})
    assert started.status_code == 200, started.text
    return started.json()["id"]


def prompts(openai_stub) -> Counter:
    """How often each prompt (the last message of a request) reached the model."""
    return Counter(r["messages"][-1]["content"] for r in openai_stub.requests)


def test_a_flow_killed_mid_map_runs_only_the_items_not_done(service, openai_stub):
    items = [f"item {i}" for i in range(6)]
    # Concurrency 2: items 0-3 answer, 4 and 5 are held when the service is killed. Each answer is
    # chosen by its item, not by the order requests arrive in: on a busy machine item 1's request came
    # after items 2 and 3 had been answered (CI-like run, 29 Nov), and a script in arrival order gave it
    # item 3's answer.
    openai_stub.default = lambda body: "done " + body["messages"][-1]["content"].removeprefix("item ")
    openai_stub.hold_when = lambda record: record.body["messages"][-1]["content"] in ("item 4", "item 5")
    service.start()
    client = service.client()
    wid = save_and_run(client, {
        "name": "mapped", "inputs": {"items": {"type": "list"}},
        "nodes": [{"id": "start", "type": "start"},
                  {"id": "m", "type": "map", "config": {"items": "inputs.items", "concurrency": 2,
                                                        "body": {"id": "ask", "type": "llm",
                                                                 "config": {"prompt": "{{ item }}"}}}},
                  {"id": "end", "type": "end"}],
        "edges": [{"source": "start", "target": "m"}, {"source": "m", "target": "end"}],
        "outputs": {"all": "{{ m.output | join(', ') }}"}}, {"items": items})
    assert openai_stub.wait_requests(6, timeout=120), "the held items never called the model"
    service.kill()
    openai_stub.hold_when = None
    openai_stub.default = lambda body: "done again"
    openai_stub.release()
    service.start()
    assert wait_status(client, wid, "completed", "failed", timeout=240)["status"] == "completed"
    asked = prompts(openai_stub)
    assert [asked[item] for item in items] == [1, 1, 1, 1, 2, 2]  # only the held ones ran again
    last = client.get(f"/api/workflows/{wid}/messages").json()["items"][-1]
    assert last["content"] == "done 0, done 1, done 2, done 3, done again, done again"
    runs = client.get(f"/api/workflows/{wid}/nodes").json()["items"]
    assert Counter(r["path"] for r in runs)["m[4]"] == 1  # each item run stored once
    logs = [e["message"] for e in client.get(f"/api/workflows/{wid}/logs").json()["items"]]
    assert not [text for text, n in Counter(logs).items() if n > 1]


def test_a_flow_killed_mid_loop_goes_on_from_the_iteration_it_was_in(service, openai_stub):
    openai_stub.script([Reply("turn 1"), Reply("turn 2"), Hold(then="lost")])
    service.start()
    client = service.client()
    wid = save_and_run(client, {
        "name": "looped", "nodes": [
            {"id": "start", "type": "start"},
            {"id": "l", "type": "loop", "config": {"until": "iteration >= 4", "maxIterations": 9,
                                                   "body": {"id": "say", "type": "llm",
                                                            "config": {"prompt": "turn {{ iteration }}"}}}},
            {"id": "end", "type": "end"}],
        "edges": [{"source": "start", "target": "l"}, {"source": "l", "target": "end"}],
        "outputs": {"last": "{{ l.output }}"}}, {})
    assert openai_stub.wait_requests(3, timeout=120), "the third iteration never called the model"
    service.kill()
    openai_stub.release()
    openai_stub.script([Reply("turn 3"), Reply("turn 4")])
    service.start()
    assert wait_status(client, wid, "completed", "failed", timeout=240)["status"] == "completed"
    asked = prompts(openai_stub)
    assert [asked[f"turn {i}"] for i in range(1, 5)] == [1, 1, 2, 1]
    assert client.get(f"/api/workflows/{wid}/messages").json()["items"][-1]["content"] == "turn 4"
    runs = client.get(f"/api/workflows/{wid}/nodes").json()["items"]
    assert [r["path"] for r in runs].count("l#3") == 1 and next(r for r in runs if r["path"] == "l")["iterations"] == 4


def test_a_run_keeps_its_version_through_a_publish_and_a_sigkill(service, openai_stub):
    openai_stub.script([Reply("one"), Hold(then="lost")])
    service.start()
    client = service.client()

    def definition(tag: str) -> dict[str, Any]:
        return {"name": "versioned", "inputs": {"items": {"type": "list"}},
                "nodes": [{"id": "start", "type": "start"},
                          {"id": "m", "type": "map", "config": {"items": "inputs.items", "concurrency": 1,
                                                                "body": {"id": "ask", "type": "llm",
                                                                         "config": {"prompt": tag + " {{ item }}"}}}},
                          {"id": "end", "type": "end"}],
                "edges": [{"source": "start", "target": "m"}, {"source": "m", "target": "end"}],
                "outputs": {"all": "{{ m.output | join(', ') }}"}}

    flow_id = client.post("/api/flows", json=definition("v1")).json()["id"]
    assert client.post(f"/api/flows/{flow_id}/versions", json={"name": "first"}).status_code == 201
    wid = client.post("/api/workflows/start", json={"flow": {"id": flow_id, "inputs": {"items": ["a", "b", "c"]}}}
                      ).json()["id"]
    assert openai_stub.wait_requests(2, timeout=120), "the second item never called the model"
    client.put(f"/api/flows/{flow_id}", json=definition("v2"))
    assert client.post(f"/api/flows/{flow_id}/versions", json={"name": "second"}).json()["version"] == 2
    service.kill()
    openai_stub.release()
    openai_stub.script([Reply("two"), Reply("three")])
    service.start()
    assert wait_status(client, wid, "completed", "failed", timeout=240)["status"] == "completed"
    asked = prompts(openai_stub)
    assert asked == Counter({"v1 a": 1, "v1 b": 2, "v1 c": 1})  # version 1 throughout, item a not run again
    messages = client.get(f"/api/workflows/{wid}/messages").json()["items"]
    assert messages[0]["metadata"]["flow"]["version"] == 1
    assert messages[-1]["content"] == "one, two, three"
