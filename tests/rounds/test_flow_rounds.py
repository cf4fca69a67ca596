"""Flows over real HTTP on both databases: save, validate, run as a round (every node type that runs here),
node runs, a human node's wait and decision, a failing node, inputs checked, tenancy."""

from __future__ import annotations

import asyncio
import threading
from typing import Any

import pytest

from agents.model import Model, ModelRequest, ModelResponse, Usage
from app.config import ApiKey
from tests.harness import LiveServer, settings_for, wait_for, wait_status


class EchoModel(Model):
    """Answers every call with its last message in angle brackets, and counts the calls."""

    name = "echo"

    def __init__(self) -> None:
        self.calls: list[ModelRequest] = []

    async def complete(self, request: ModelRequest) -> ModelResponse:
        self.calls.append(request)
        if request.messages[-1]["content"].startswith("wait:"):  # answers once the test opens the gate
            await asyncio.to_thread(GATE.wait, 60)
        if request.schema is not None:
            return ModelResponse(text='{"ok": true}', data={"ok": True}, usage=Usage(calls=1), model=self.name)
        return ModelResponse(text=f"<{request.messages[-1]['content']}>", usage=Usage(calls=1), model=self.name)


MODEL = EchoModel()
GATE = threading.Event()


@pytest.fixture(scope="module")
def server(tmp_path_factory, module_database_url):
    settings = settings_for(tmp_path_factory.mktemp("flows"), module_database_url, api_keys=(ApiKey("alice", 1, 1), ApiKey("bob", 1, 2)))
    with LiveServer(settings, model=MODEL) as live:
        yield live


def n(id: str, type: str, **config: Any) -> dict[str, Any]:
    return {"id": id, "type": type, "config": config}


def e(source: str, target: str, branch: str | None = None) -> dict[str, Any]:
    return {"source": source, "target": target, **({"branch": branch} if branch else {})}


GREETING = {
    "name": "greeting", "description": "Greets, then asks the model",
    "inputs": {"word": {"type": "string"}, "items": {"type": "list", "default": ["a", "b", "c"]}},
    "nodes": [n("start", "start"), n("t", "template", text="Hello {{ inputs.word }}"),
              n("c", "condition", expression="size(inputs.items) > 2"),
              n("many", "llm", prompt="many: {{ t.output }}"), n("few", "template", text="few"),
              n("m", "map", items="inputs.items", concurrency=2,
                body={"id": "each", "type": "template", "config": {"text": "{{ index }}={{ item }}"}}),
              n("end", "end")],
    "edges": [e("start", "t"), e("t", "c"), e("c", "many", "true"), e("c", "few", "false"), e("start", "m"),
              e("many", "end"), e("few", "end"), e("m", "end")],
    "outputs": {"answer": "{{ many.output }}{{ few.output }}", "list": "{{ m.output | join(' ') }}"},
}


def run_flow(client, flow_id: int, inputs: dict[str, Any], version: Any = "draft", **extra: Any) -> str:
    started = client.post("/api/workflows/start", json={"flow": {"id": flow_id, "version": version, "inputs": inputs},
                                                        **extra})
    assert started.status_code == 200, started.text
    return started.json()["id"]


def test_a_flow_is_saved_read_listed_replaced_and_deleted(server):
    with server.client("alice") as alice, server.client("bob") as bob:
        created = alice.post("/api/flows", json=GREETING)
        assert created.status_code == 201, created.text
        flow = created.json()
        assert flow["name"] == "greeting" and len(flow["hash"]) == 64 and flow["draft"]["nodes"][1]["id"] == "t"
        assert alice.get(f"/api/flows/{flow['id']}").json()["hash"] == flow["hash"]
        assert [f["id"] for f in alice.get("/api/flows").json()["items"]][0] == flow["id"]
        assert bob.get(f"/api/flows/{flow['id']}").status_code == 404  # another user's flow is not there
        assert flow["id"] not in [f["id"] for f in bob.get("/api/flows").json()["items"]]
        changed = alice.put(f"/api/flows/{flow['id']}", json={**GREETING, "description": "changed"})
        assert changed.status_code == 200 and changed.json()["hash"] != flow["hash"]
        assert bob.delete(f"/api/flows/{flow['id']}").status_code == 404
        assert alice.delete(f"/api/flows/{flow['id']}").json() == {"deleted": "flow", "flowId": flow["id"]}
        assert alice.get(f"/api/flows/{flow['id']}").json()["code"] == "flow_not_found"


def test_validation_names_every_problem_with_its_node(server):
    broken = {"name": "broken", "nodes": [n("start", "start"), n("a", "template", text="{{ inputs.missing }}"),
                                          n("b", "nosuch"), n("l", "loop", body=n("x", "template", text="x"),
                                                              until="iteration > 1")],
              "edges": [e("start", "a"), e("a", "ghost")]}
    with server.client("alice") as alice:
        answer = alice.post("/api/flows/validate", json=broken)
        assert answer.status_code == 400 and answer.json()["code"] == "invalid_flow"
        problems = {(p["nodeId"], p["code"]) for p in answer.json()["problems"]}
        assert ("a", "undefined_variable") in problems and ("b", "unknown_type") in problems
        assert any(code == "edge_to_nowhere" for _, code in problems)
        assert any(node == "l" for node, _ in problems)  # the loop without maxIterations
        assert alice.post("/api/flows", json=broken).status_code == 400  # creation uses the same validator
        assert alice.post("/api/flows/validate", json=GREETING).json() == {"valid": True}
        shape = alice.post("/api/flows/validate", json={"name": 3})
        assert shape.status_code == 400 and "name" in shape.json()["detail"]
        schema = alice.get("/api/flows/schema.json")
        assert schema.status_code == 200 and "properties" in str(schema.json())


def test_a_flow_runs_as_a_round_with_its_outputs_in_the_last_message(server):
    with server.client("alice") as alice:
        flow_id = alice.post("/api/flows", json=GREETING).json()["id"]
        calls = len(MODEL.calls)
        wf = run_flow(alice, flow_id, {"word": "Ada"})
        assert wait_status(alice, wf, "completed", "failed")["status"] == "completed"
        messages = alice.get(f"/api/workflows/{wf}/messages").json()["items"]
        assert messages[0]["role"] == "user"
        assert messages[0]["metadata"]["flow"]["id"] == flow_id
        assert messages[0]["metadata"]["flow"]["version"] == "draft"
        last = messages[-1]
        assert last["status"] == "last"
        assert "<many: Hello Ada>" in last["content"] and "0=a 1=b 2=c" in last["content"]
        steps = [m for m in messages if m["status"] == "step"]
        assert [m["metadata"]["node"] for m in steps] == ["many"]  # the model call's step message
        assert len(MODEL.calls) == calls + 1  # no planning call, no final review: one llm node
        runs = alice.get(f"/api/workflows/{wf}/nodes").json()
        by_path = {r["path"]: r for r in runs["items"]}
        assert by_path["few"]["status"] == "skipped" and by_path["c"]["branch"] == "true"
        assert by_path["m"]["items"] == 3 and by_path["m[2]"]["output"] == "2=c"
        logs = alice.get(f"/api/workflows/{wf}/logs").json()["items"]
        assert logs[-1]["progress"] == 100 and all(log["progress"] is not None for log in logs)
        assert any("Node many (llm) started" in log["message"] for log in logs)


def test_a_node_that_runs_a_while_shows_its_start_as_it_runs_and_every_log_lands_in_order(server):
    slow = {"name": "slow", "nodes": [n("start", "start"), n("t", "template", text="now"),
                                      n("slow", "llm", prompt="wait: {{ t.output }}"), n("end", "end")],
            "edges": [e("start", "t"), e("t", "slow"), e("slow", "end")], "outputs": {"o": "{{ slow.output }}"}}
    with server.client("alice") as alice:
        flow_id = alice.post("/api/flows", json=slow).json()["id"]
        GATE.clear()
        wf = run_flow(alice, flow_id, {})
        try:
            def shown() -> list[str] | None:
                texts = [log["message"] for log in alice.get(f"/api/workflows/{wf}/logs").json()["items"]]
                return texts if any("Node slow (llm) started" in text for text in texts) else None

            running = wait_for(shown, 30, "the slow node's start log")
            # While the model has not answered: the nodes before it settled, it started, nothing after it.
            assert alice.get(f"/api/workflows/{wf}/status").json()["status"] == "running"
            assert any("Node t (template) finished" in text for text in running)
            assert not any("Node slow (llm) finished" in text or "Node end" in text for text in running)
            assert [r["path"] for r in alice.get(f"/api/workflows/{wf}/nodes").json()["items"]] == ["start", "t"]
        finally:
            GATE.set()
        assert wait_status(alice, wf, "completed", "failed")["status"] == "completed"
        texts = [log["message"] for log in alice.get(f"/api/workflows/{wf}/logs").json()["items"]]
        nodes = [text for text in texts if text.startswith("Node ")]
        assert nodes == [f"Node {node} ({kind}) {word}" for node, kind in (("start", "start"), ("t", "template"),
                                                                            ("slow", "llm"), ("end", "end"))
                         for word in ("started", "finished")]
        runs = alice.get(f"/api/workflows/{wf}/nodes").json()["items"]
        assert [(r["path"], r["status"]) for r in runs] == [(p, "succeeded") for p in ("start", "t", "slow", "end")]


def test_bad_inputs_are_refused_naming_each(server):
    with server.client("alice") as alice:
        flow_id = alice.post("/api/flows", json=GREETING).json()["id"]
        bad = alice.post("/api/workflows/start", json={"flow": {"id": flow_id, "version": "draft",
                                                                "inputs": {"items": "x", "other": 1}}})
        assert bad.status_code == 400 and bad.json()["code"] == "invalid_inputs"
        text = bad.json()["detail"]
        assert "'word'" in text and "'items'" in text and "other" in text
        unpublished = alice.post("/api/workflows/start", json={"flow": {"id": flow_id, "inputs": {"word": "x"}}})
        assert unpublished.status_code == 400 and unpublished.json()["code"] == "flow_not_published"
        with server.client("bob") as bob:
            assert bob.post("/api/workflows/start", json={"flow": {"id": flow_id, "version": "draft",
                                                                   "inputs": {"word": "x"}}}).status_code == 404


def test_a_published_version_runs_and_keeps_its_definition(server):
    with server.client("alice") as alice:
        flow_id = alice.post("/api/flows", json=GREETING).json()["id"]
        published = alice.post(f"/api/flows/{flow_id}/versions", json={"name": "v1", "comment": "first"})
        assert published.status_code == 201 and published.json()["version"] == 1
        alice.put(f"/api/flows/{flow_id}", json={**GREETING, "outputs": {"answer": "changed"}})
        wf = run_flow(alice, flow_id, {"word": "Bo"}, version=None)
        assert wait_status(alice, wf, "completed", "failed")["status"] == "completed"
        messages = alice.get(f"/api/workflows/{wf}/messages").json()["items"]
        assert messages[0]["metadata"]["flow"]["version"] == 1
        assert "<many: Hello Bo>" in messages[-1]["content"]  # version 1, not the changed draft


def test_a_failing_node_fails_the_round_naming_it(server):
    failing = {"name": "fails", "nodes": [n("start", "start"), n("code", "code", code="raise ValueError('no such row')"),
                                          n("end", "end")],
               "edges": [e("start", "code"), e("code", "end")]}
    with server.client("alice") as alice:
        flow_id = alice.post("/api/flows", json=failing).json()["id"]
        wf = run_flow(alice, flow_id, {})
        assert wait_status(alice, wf, "completed", "failed")["status"] == "failed"
        last = alice.get(f"/api/workflows/{wf}/messages").json()["items"][-1]
        assert last["status"] == "last" and "node code" in last["content"] and "no such row" in last["content"]


def test_a_human_node_waits_and_the_decision_takes_its_branch(server):
    gated = {"name": "gated", "inputs": {"word": {"type": "string"}},
             "nodes": [n("start", "start"), n("ask", "human", message="Send {{ inputs.word }}?",
                                                 actions=["send", "drop"]),
                       n("send", "llm", prompt="sending {{ inputs.word }}"), n("drop", "template", text="dropped"),
                       n("end", "end")],
             "edges": [e("start", "ask"), e("ask", "send", "send"), e("ask", "drop", "drop"), e("send", "end"),
                       e("drop", "end")],
             "outputs": {"out": "{{ send.output }}{{ drop.output }}"}}
    with server.client("alice") as alice:
        flow_id = alice.post("/api/flows", json=gated).json()["id"]
        wf = run_flow(alice, flow_id, {"word": "it"})
        status = wait_status(alice, wf, "waiting")
        assert status["waitingFor"]["kind"] == "node"
        assert status["waitingFor"]["decisions"] == ["send", "drop"]
        asked = alice.get(f"/api/workflows/{wf}/messages").json()["items"][-1]
        assert asked["content"] == "Send it?"
        wrong = alice.post(f"/api/workflows/{wf}/review", json={"decision": "maybe"})
        assert wrong.status_code in (400, 409)
        assert alice.get(f"/api/workflows/{wf}/status").json()["status"] == "waiting"
        taken = alice.post(f"/api/workflows/{wf}/review", json={"decision": "drop"})
        assert taken.status_code == 200, taken.text
        assert wait_status(alice, wf, "completed", "failed")["status"] == "completed"
        assert alice.get(f"/api/workflows/{wf}/messages").json()["items"][-1]["content"] == "dropped"
        runs = {r["path"]: r for r in alice.get(f"/api/workflows/{wf}/nodes").json()["items"]}
        assert runs["ask"]["branch"] == "drop" and runs["send"]["status"] == "skipped"


def test_an_agent_node_runs_a_registered_agent_on_the_files(server):
    summary = {"name": "summary", "inputs": {"docs": {"type": "files"}},
               "nodes": [n("start", "start"),
                         n("read", "agent", agent="analyst", instructions="What is this document about?",
                           inputs=["{{ inputs.docs }}"]),
                         n("end", "end")],
               "edges": [e("start", "read"), e("read", "end")], "outputs": {"answer": "{{ read.output }}"}}
    with server.client("alice") as alice:
        flow_id = alice.post("/api/flows", json=summary).json()["id"]
        files = alice.post("/api/files", files=[("files", ("notes.txt", b"The pump runs at 40 bar."))]).json()
        wf = run_flow(alice, flow_id, {}, listFileId=[files[0]["id"]])
        assert wait_status(alice, wf, "completed", "failed")["status"] == "completed"
        messages = alice.get(f"/api/workflows/{wf}/messages").json()["items"]
        step = next(m for m in messages if m["status"] == "step")
        assert step["agentName"] == "analyst" and step["metadata"]["node"] == "read"
        assert messages[0]["metadata"]["flow"]["inputs"]["docs"] == [files[0]["id"]]


def test_a_human_node_nobody_answers_takes_its_default_action(server):
    timed = {"name": "timed", "nodes": [n("start", "start"),
                                        n("ask", "human", message="Go?", actions=["go", "wait"], timeoutSeconds=0.5,
                                          defaultAction="wait"),
                                        n("go", "template", text="went"), n("wait", "template", text="waited"),
                                        n("end", "end")],
             "edges": [e("start", "ask"), e("ask", "go", "go"), e("ask", "wait", "wait"), e("go", "end"),
                       e("wait", "end")],
             "outputs": {"out": "{{ go.output }}{{ wait.output }}"}}
    with server.client("alice") as alice:
        flow_id = alice.post("/api/flows", json=timed).json()["id"]
        wf = run_flow(alice, flow_id, {})
        assert wait_status(alice, wf, "completed", "failed", "stopped")["status"] == "completed"
        messages = alice.get(f"/api/workflows/{wf}/messages").json()["items"]
        assert messages[-1]["content"] == "waited"
        asked = next(m for m in messages if m["metadata"].get("human"))
        assert asked["metadata"]["human"]["state"] == "timedOut"
        logs = alice.get(f"/api/workflows/{wf}/logs").json()["items"]
        assert any("default action wait was taken" in log["message"] for log in logs)


def test_a_flow_node_runs_another_flow_and_takes_its_outputs(server):
    inner = {"name": "inner", "inputs": {"word": {"type": "string"}},
             "nodes": [n("start", "start"), n("up", "template", text="{{ inputs.word | upper }}"), n("end", "end")],
             "edges": [e("start", "up"), e("up", "end")], "outputs": {"shout": "{{ up.output }}!"}}
    with server.client("alice") as alice, server.client("bob") as bob:
        inner_id = alice.post("/api/flows", json=inner).json()["id"]
        outer = {"name": "outer", "inputs": {"word": {"type": "string"}},
                 "nodes": [n("start", "start"), n("sub", "flow", flowId=inner_id, version="draft"),
                           n("end", "end")],
                 "edges": [e("start", "sub"), e("sub", "end")], "outputs": {"out": "{{ sub.output.shout }}"}}
        outer_id = alice.post("/api/flows", json=outer).json()["id"]
        wf = run_flow(alice, outer_id, {"word": "hey"})
        assert wait_status(alice, wf, "completed", "failed")["status"] == "completed"
        assert alice.get(f"/api/workflows/{wf}/messages").json()["items"][-1]["content"] == "HEY!"
        paths = [r["path"] for r in alice.get(f"/api/workflows/{wf}/nodes").json()["items"]]
        assert "sub/up" in paths and "sub" in paths
        stolen = bob.post("/api/flows", json={**outer, "name": "stolen"}).json()["id"]  # bob names alice's flow
        wf = run_flow(bob, stolen, {"word": "x"})
        assert wait_status(bob, wf, "completed", "failed")["status"] == "failed"
        assert f"there is no flow {inner_id}" in bob.get(f"/api/workflows/{wf}/messages").json()["items"][-1]["content"]



def test_sub_flows_within_sub_flows_keep_their_paths_and_messages_and_nest_at_most_five_deep(server):
    """The engine gives a sub-flow's nodes paths relative to it; the round keys its node runs and messages by
    the path from the top. Before, a sub-flow's llm message was never written (it waited under `ask`, the
    journal looked for `mid/ask`), a sub-flow's own sub-flow ran under `sub/` instead of `mid/sub/`, and the
    depth guard counted from the sub-flow it was in, so it never tripped."""
    inner = {"name": "inner2", "inputs": {"word": {"type": "string"}},
             "nodes": [n("start", "start"), n("up", "template", text="{{ inputs.word | upper }}"), n("end", "end")],
             "edges": [e("start", "up"), e("up", "end")], "outputs": {"shout": "{{ up.output }}"}}
    with server.client("alice") as alice:
        inner_id = alice.post("/api/flows", json=inner).json()["id"]
        def asking_then(name: str, prompt: str, node: str, flow_id: int, outputs: dict[str, str]) -> int:
            """A flow that asks the model (node `ask`), then runs flow `flow_id` as node `node`."""
            return alice.post("/api/flows", json={
                "name": name, "inputs": {"word": {"type": "string"}}, "outputs": outputs,
                "nodes": [n("start", "start"), n("ask", "llm", prompt=prompt),
                          n(node, "flow", flowId=flow_id, version="draft"), n("end", "end")],
                "edges": [e("start", "ask"), e("ask", node), e(node, "end")]}).json()["id"]

        mid_id = asking_then("mid", "mid: {{ inputs.word }}", "sub", inner_id,
                             {"said": "{{ ask.output }} {{ sub.output.shout }}"})
        outer_id = asking_then("outer2", "top: {{ inputs.word }}", "mid", mid_id,
                               {"out": "{{ ask.output }} / {{ mid.output.said }}"})
        wf = run_flow(alice, outer_id, {"word": "hey"})
        assert wait_status(alice, wf, "completed", "failed")["status"] == "completed"
        messages = alice.get(f"/api/workflows/{wf}/messages").json()["items"]
        assert messages[-1]["content"] == "<top: hey> / <mid: hey> HEY"
        said = {m["metadata"].get("node"): m["content"] for m in messages if m["agentName"] == "llm"}
        assert said == {"ask": "<top: hey>", "mid/ask": "<mid: hey>"}
        paths = {r["path"] for r in alice.get(f"/api/workflows/{wf}/nodes").json()["items"]}
        assert {"ask", "mid", "mid/ask", "mid/sub", "mid/sub/up"} <= paths and "sub/up" not in paths

        # A chain of flows each running the one before (saving refuses a cycle; versions can still chain deep):
        # five sub-flows deep run, six are refused by the depth guard.
        chain = [alice.post("/api/flows", json=inner).json()["id"]]
        for level in range(6):
            step = {"name": f"level{level}", "inputs": {"word": {"type": "string"}},
                    "nodes": [n("start", "start"), n("down", "flow", flowId=chain[-1], version="draft"), n("end", "end")],
                    "edges": [e("start", "down"), e("down", "end")], "outputs": {"shout": "{{ down.output.shout }}"}}
            chain.append(alice.post("/api/flows", json=step).json()["id"])
        wf = run_flow(alice, chain[5], {"word": "deep"})
        assert wait_status(alice, wf, "completed", "failed")["status"] == "completed"
        assert alice.get(f"/api/workflows/{wf}/messages").json()["items"][-1]["content"] == "DEEP"
        wf = run_flow(alice, chain[6], {"word": "deeper"})
        assert wait_status(alice, wf, "completed", "failed")["status"] == "failed"
        assert "sub-flows nest deeper than 5" in alice.get(f"/api/workflows/{wf}/messages").json()["items"][-1]["content"]


def test_two_human_nodes_wait_at_once_and_are_decided_in_either_order(server):
    both = {"name": "both", "nodes": [
        n("start", "start"), n("a", "human", message="Ship A?", actions=["yes", "no"]),
        n("b", "human", message="Ship B?", actions=["go", "stop"]),
        n("ta", "template", text="A:{{ a.output }}"), n("tb", "template", text="B:{{ b.output }}"), n("end", "end")],
        "edges": [e("start", "a"), e("start", "b"), e("a", "ta"), e("b", "tb"), e("ta", "end"), e("tb", "end")],
        "outputs": {"out": "{{ ta.output }} {{ tb.output }}"}}
    with server.client("alice") as alice:
        flow_id = alice.post("/api/flows", json=both).json()["id"]
        wf = run_flow(alice, flow_id, {})
        waiting = wait_status(alice, wf, "waiting")["waitingFor"]
        asked = {node["nodeId"]: node for node in waiting["nodes"]}
        assert set(asked) == {"a", "b"} and asked["b"]["actions"] == ["go", "stop"]
        questions = [m["content"] for m in alice.get(f"/api/workflows/{wf}/messages").json()["items"]
                     if m["metadata"].get("human")]
        assert sorted(questions) == ["Ship A?", "Ship B?"]
        # The second node first, named by its message; an action of the other node is refused for it.
        wrong = alice.post(f"/api/workflows/{wf}/review", json={"decision": "yes", "messageId": asked["b"]["messageId"]})
        assert wrong.status_code == 400 and wrong.json()["code"] == "unknown_action"
        took = alice.post(f"/api/workflows/{wf}/review", json={"decision": "go", "messageId": asked["b"]["messageId"]})
        assert took.status_code == 200, took.text
        again = wait_status(alice, wf, "waiting")["waitingFor"]
        assert [node["nodeId"] for node in again["nodes"]] == ["a"]
        assert again["nodes"][0]["messageId"] == asked["a"]["messageId"]  # still the message it asked in
        took = alice.post(f"/api/workflows/{wf}/review", json={"decision": "no", "messageId": asked["a"]["messageId"]})
        assert took.status_code == 200, took.text
        assert wait_status(alice, wf, "completed", "failed")["status"] == "completed"
        messages = alice.get(f"/api/workflows/{wf}/messages").json()["items"]
        assert messages[-1]["content"] == "A:no B:go"
        assert sorted(m["content"] for m in messages if m["metadata"].get("human")) == ["Ship A?", "Ship B?"]  # once each
        runs = {r["path"]: r for r in alice.get(f"/api/workflows/{wf}/nodes").json()["items"]}
        assert runs["a"]["branch"] == "no" and runs["b"]["branch"] == "go"
