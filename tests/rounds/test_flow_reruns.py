"""Rounds and flows, both ways, over real HTTP on both databases: a planned round saved as a flow and run
on the same files (the same agents in the same order, no planning call, counted at the model); a flow
round failed by a model error rerun from its failure (what succeeded makes no model call again, its node
runs say `reusedFrom`), and forked from a middle node with a changed input."""

from __future__ import annotations

from typing import Any

import pytest

from agents.model import ModelRequest, ModelResponse, Usage
from app.config import ApiKey
from tests.harness import LiveServer, plan_of, settings_for, wait_status
from tests.rounds.test_flow_rounds import e, n, run_flow
from tests.scripted import ScriptedModel


class Flaky(ScriptedModel):
    """The scripted model (plans with `plan`, answers the rest), except that while `broken` names a text, a
    call whose prompt holds it fails as an overloaded provider does."""

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.broken = ""

    async def complete(self, request: ModelRequest) -> ModelResponse:
        prompt = str(request.messages[-1]["content"]) if request.messages else ""
        if self.broken and self.broken in prompt:
            self.requests.append(request)
            raise RuntimeError("the provider is overloaded (503)")
        if request.purpose == "task" and request.agent == "llm":
            self.requests.append(request)
            return ModelResponse(text=f"<{prompt}>", usage=Usage(calls=1), model=self.name)
        return await super().complete(request)


PLAN = {**plan_of(3, chain=True)}
PLAN["objWorkplan"] = [dict(t, instructions=f"{t['instructions']} Then: Compare the pumps.") for t in PLAN["objWorkplan"]]
MODEL = Flaky(plan=PLAN)


@pytest.fixture(scope="module")
def server(tmp_path_factory, module_database_url):
    settings = settings_for(tmp_path_factory.mktemp("flow-reruns"), module_database_url,
                            api_keys=(ApiKey("alice", 1, 1), ApiKey("bob", 1, 2)))
    with LiveServer(settings, model=MODEL) as live:
        yield live


def calls_since(start: int) -> list[ModelRequest]:
    return MODEL.requests[start:]


def test_a_round_saved_as_a_flow_runs_the_same_agents_without_planning(server):
    with server.client("alice") as alice, server.client("bob") as bob:
        files = alice.post("/api/files", files=[("files", ("pumps.txt", b"Pump A runs at 40 bar, pump B at 60."))])
        file_id = files.json()[0]["id"]
        before = len(MODEL.requests)
        started = alice.post("/api/workflows/start", json={"prompt": "Compare the pumps.", "listFileId": [file_id]})
        wf = started.json()["id"]
        assert wait_status(alice, wf, "completed", "failed")["status"] == "completed"
        planned = calls_since(before)
        assert any(r.purpose == "plan" for r in planned)
        agents = [(r.agent, r.purpose) for r in planned if r.purpose not in ("plan", "repair", "review", "final")]

        made = alice.post("/api/flows", json={"fromRound": {"workflowId": wf, "round": 1}, "name": "pumps"})
        assert made.status_code == 201, made.text
        draft = made.json()["draft"]
        assert [x["type"] for x in draft["nodes"]] == ["start", "agent", "agent", "agent", "end"]
        assert [x["config"]["agent"] for x in draft["nodes"][1:4]] == ["analyst"] * 3
        assert {(x["source"], x["target"]) for x in draft["edges"]} == {("start", "t1"), ("t1", "t2"), ("t2", "t3"),
                                                                       ("t3", "end")}
        assert draft["inputs"]["documents"]["type"] == "files"
        assert draft["inputs"]["request"] == {"type": "string", "default": "Compare the pumps.",
                                              "description": "The request"}
        assert draft["nodes"][1]["config"]["instructions"] == "Look at part 1 of the request. Then: {{ inputs.request }}"
        assert draft["nodes"][1]["config"]["inputs"] == ["{{ inputs.documents }}"]
        assert bob.post("/api/flows", json={"fromRound": {"workflowId": wf, "round": 1}, "name": "x"}).status_code == 404
        assert alice.post("/api/flows", json={"fromRound": {"workflowId": wf, "round": 9}, "name": "x"}).json()[
            "code"] == "round_not_found"

        before = len(MODEL.requests)
        run = run_flow(alice, made.json()["id"], {}, listFileId=[file_id])
        assert wait_status(alice, run, "completed", "failed")["status"] == "completed"
        again = calls_since(before)
        assert not any(r.purpose == "plan" for r in again)  # no planning call
        assert [(r.agent, r.purpose) for r in again] == agents  # the same agents, in the same order
        steps = [m for m in alice.get(f"/api/workflows/{run}/messages").json()["items"] if m["status"] == "step"]
        assert [m["metadata"]["node"] for m in steps] == ["t1", "t2", "t3"]


CHAIN = {"name": "chain", "inputs": {"topic": {"type": "string"}},
         "nodes": [n("start", "start"), n("s1", "llm", prompt="step 1 on {{ inputs.topic }}"),
                   *[n(f"s{i}", "llm", prompt=f"step {i} after {{{{ s{i - 1}.output | length }}}}") for i in range(2, 11)],
                   n("end", "end")],
         "edges": [e("start", "s1"), *[e(f"s{i - 1}", f"s{i}") for i in range(2, 11)], e("s10", "end")],
         "outputs": {"last": "{{ s10.output }}"}}


def test_a_failed_run_reruns_from_its_failure_reusing_what_succeeded(server):
    with server.client("alice") as alice, server.client("bob") as bob:
        flow_id = alice.post("/api/flows", json=CHAIN).json()["id"]
        MODEL.broken = "step 8 "
        before = len(MODEL.requests)
        wf = run_flow(alice, flow_id, {"topic": "pumps"})
        assert wait_status(alice, wf, "completed", "failed")["status"] == "failed"
        first = calls_since(before)
        assert len(first) == 8  # 1 to 7 answered, 8 failed
        MODEL.broken = ""  # the provider is back

        assert bob.post(f"/api/workflows/{wf}/rerun", json={}).status_code == 404
        before = len(MODEL.requests)
        answer = alice.post(f"/api/workflows/{wf}/rerun", json={})
        assert answer.status_code == 200, answer.text
        assert answer.json()["currentRound"] == 2
        assert wait_status(alice, wf, "completed", "failed")["status"] == "completed"
        second = calls_since(before)
        assert [r.hints.node for r in second] == ["s8", "s9", "s10"]  # nodes 1-7: no model call
        print(f"\nrerun of a 10-node chain failed at node 8: {len(second)} model calls instead of 10 "
              f"({10 - len(second)} saved)")
        runs = {r["nodeId"]: r for r in alice.get(f"/api/workflows/{wf}/nodes", params={"round": 2}).json()["items"]}
        assert all(runs[f"s{i}"]["reusedFrom"] == 1 for i in range(1, 8))
        assert all(runs[f"s{i}"]["reusedFrom"] is None and runs[f"s{i}"]["status"] == "succeeded"
                   for i in range(8, 11))
        user = [m for m in alice.get(f"/api/workflows/{wf}/messages").json()["items"] if m["role"] == "user"][-1]
        assert user["metadata"]["forkOf"] == {"round": 1, "node": "s8"}
        assert "reuse" not in user["metadata"]["flow"]
        old = {r["nodeId"]: r for r in alice.get(f"/api/workflows/{wf}/nodes", params={"round": 1}).json()["items"]}
        assert old["s8"]["status"] == "failed" and "s9" not in old  # the earlier round is as it was

        before = len(MODEL.requests)  # a fork of the rerun: what it reused names the round that ran it
        assert alice.post(f"/api/workflows/{wf}/rerun", json={"fromNode": "s10"}).status_code == 200
        assert wait_status(alice, wf, "completed", "failed")["status"] == "completed"
        assert [r.hints.node for r in calls_since(before)] == ["s10"]
        runs = {r["nodeId"]: r for r in alice.get(f"/api/workflows/{wf}/nodes", params={"round": 3}).json()["items"]}
        assert [runs[f"s{i}"]["reusedFrom"] for i in range(1, 11)] == [1] * 7 + [2, 2, None]


def test_a_fork_from_a_middle_node_with_a_changed_input(server):
    forked = {**CHAIN, "nodes": [*CHAIN["nodes"][:5], n("s5", "llm", prompt="step 5 on {{ inputs.topic }}"),
                                 *CHAIN["nodes"][6:]]}
    with server.client("alice") as alice:
        flow_id = alice.post("/api/flows", json=forked).json()["id"]
        wf = run_flow(alice, flow_id, {"topic": "pumps"})
        assert wait_status(alice, wf, "completed", "failed")["status"] == "completed"
        before = len(MODEL.requests)
        answer = alice.post(f"/api/workflows/{wf}/rerun", json={"round": 1, "fromNode": "s5",
                                                                 "inputs": {"topic": "valves"}})
        assert answer.status_code == 200, answer.text
        assert wait_status(alice, wf, "completed", "failed")["status"] == "completed"
        second = calls_since(before)
        assert [r.hints.node for r in second] == [f"s{i}" for i in range(5, 11)]
        assert "step 5 on valves" in str(second[0].messages)
        user = [m for m in alice.get(f"/api/workflows/{wf}/messages").json()["items"] if m["role"] == "user"][-1]
        assert user["metadata"]["forkOf"] == {"round": 1, "node": "s5"}
        assert user["metadata"]["flow"]["inputs"] == {"topic": "valves"}
        bad = alice.post(f"/api/workflows/{wf}/rerun", json={"fromNode": "nope"})
        assert bad.status_code == 400 and bad.json()["code"] == "unknown_node"
        plain = alice.post("/api/workflows/start", json={"prompt": "hello"}).json()["id"]
        wait_status(alice, plain, "completed", "failed")
        assert alice.post(f"/api/workflows/{plain}/rerun", json={}).json()["code"] == "not_a_flow_round"

