"""Flows over AG-UI (the `ag-ui-protocol` package's models over real HTTP): `forwardedProps.flow` runs a saved
flow on a thread, its node states in the run's state; a human node ends the run with the canonical interrupt
outcome (a stable interruptId), the next run's `resume` takes its action once (again, or an unknown one: a
RUN_ERROR that decides nothing); another user cannot run the flow."""

from __future__ import annotations

import uuid

from tests.protocols.flows import both, gated, publish
from tests.protocols.test_agui import run, run_input


def _flow_run(thread: str, flow_id: int, inputs: dict) -> dict:
    body = run_input(thread, "")
    body["messages"], body["forwardedProps"] = [], {"flow": {"id": flow_id, "inputs": inputs}}
    return body


def _nodes(events: list, start: list | None = None) -> list[dict]:
    """The run's `nodes` as a client holds them: the snapshot's, then each STATE_DELTA's operations on them
    applied (a node state is added once, at the end: `add /nodes/-`)."""
    nodes = list(start if start is not None else next(e for e in events if e.type.value == "STATE_SNAPSHOT")
                 .snapshot["nodes"])
    for op in (op for e in events if e.type.value == "STATE_DELTA" for op in e.delta if op.path.startswith("/nodes")):
        assert (op.op, op.path) == ("add", "/nodes/-"), op
        nodes.append(op.value)
    return nodes


def _resume(thread: str, interrupt_id: str, payload: dict) -> dict:
    body = run_input(thread, "")
    body["messages"], body["resume"] = [], [{"interruptId": interrupt_id, "status": "resolved", "payload": payload}]
    return body


def test_a_human_node_is_an_interrupt_resumed_once_with_node_states(server):
    thread = "flow-" + uuid.uuid4().hex
    with server.client("k1") as client:
        flow_id = publish(client, gated(f"Gated {uuid.uuid4().hex[:6]}"))
        first = run(client, _flow_run(thread, flow_id, {"word": "it"}))
        end = first[-1]
        assert end.type.value == "RUN_FINISHED" and end.outcome.type == "interrupt", end
        [interrupt] = end.outcome.interrupts
        assert interrupt.reason == "human_node" and interrupt.message.startswith("Send it?")
        assert interrupt.response_schema["properties"]["decision"]["enum"] == ["send", "drop"]
        nodes = _nodes(first)
        assert [(n["nodeId"], n["status"]) for n in nodes] == [("start", "succeeded"), ("ask", "waiting")]

        wrong = run(client, _resume(thread, interrupt.id, {"decision": "maybe"}))
        assert [e.type.value for e in wrong] == ["RUN_STARTED", "RUN_ERROR"]  # still waiting
        second = run(client, _resume(thread, interrupt.id, {"decision": "send"}))
        assert second[-1].type.value == "RUN_FINISHED" and second[-1].outcome is None
        snapshot = next(e for e in second if e.type.value == "STATE_SNAPSHOT").snapshot
        assert "start" in [n["nodeId"] for n in snapshot["nodes"]]  # a resumed flow: its nodes so far
        assert "sent it" in "".join(e.delta for e in second if e.type.value == "TEXT_MESSAGE_CONTENT")
        listed = _nodes(second)
        last_nodes = {n["nodeId"]: n for n in listed}
        assert len(listed) == len(last_nodes)  # each node once, however many reads saw it
        assert last_nodes["send"]["status"] == "succeeded" and last_nodes["ask"]["branch"] == "send"
        assert last_nodes["drop"]["status"] == "skipped" and last_nodes["end"]["status"] == "succeeded"

        again = run(client, _resume(thread, interrupt.id, {"decision": "send"}))
        assert [e.type.value for e in again] == ["RUN_STARTED", "RUN_ERROR"]
        assert again[-1].code == "interrupt_resolved"
        unknown = run(client, _resume(thread, "review-999999999", {"decision": "send"}))
        assert unknown[-1].code == "unknown_interrupt"

    with server.client("k2") as other:  # another user's flow is not theirs to run
        answer = other.post("/api/ag-ui", json=_flow_run("other-" + uuid.uuid4().hex, flow_id, {"word": "x"}))
        assert answer.status_code == 404 and answer.json()["code"] == "flow_not_found"


def test_human_nodes_waiting_at_once_are_one_interrupt_each_and_one_resume_answers_them(server):
    thread = "both-" + uuid.uuid4().hex
    with server.client("k1") as client:
        flow_id = publish(client, both(f"Both {uuid.uuid4().hex[:6]}"))
        first = run(client, _flow_run(thread, flow_id, {}))
        outcome = first[-1].outcome
        assert first[-1].type.value == "RUN_FINISHED" and outcome.type == "interrupt", first[-1]
        asked = {i.metadata["nodeId"]: i for i in outcome.interrupts}
        assert set(asked) == {"a", "b"} and len({i.id for i in outcome.interrupts}) == 2
        assert asked["a"].message.startswith("Ship A?") and asked["b"].message.startswith("Ship B?")
        assert asked["b"].response_schema["properties"]["decision"]["enum"] == ["go", "stop"]
        assert {n["nodeId"]: n["status"] for n in _nodes(first)} == {"start": "succeeded", "a": "waiting",
                                                                      "b": "waiting"}

        # An entry for a node's interrupt with another node's action: refused, nothing decided.
        wrong = run(client, _resume_all(thread, [(asked["b"].id, {"decision": "yes"})]))
        assert [e.type.value for e in wrong] == ["RUN_STARTED", "RUN_ERROR"] and wrong[-1].code == "unknown_action"
        # One resume answers both (the second taken when the round waits on it alone).
        second = run(client, _resume_all(thread, [(asked["b"].id, {"decision": "go"}),
                                                  (asked["a"].id, {"decision": "no"})]))
        assert second[-1].type.value == "RUN_FINISHED" and second[-1].outcome is None, second[-1]
        assert "A:no B:go" in "".join(e.delta for e in second if e.type.value == "TEXT_MESSAGE_CONTENT")
        states = {n["nodeId"]: n for n in _nodes(second)}
        assert states["a"]["branch"] == "no" and states["b"]["branch"] == "go" and states["end"]["status"] == "succeeded"
        again = run(client, _resume_all(thread, [(asked["a"].id, {"decision": "no"})]))
        assert again[-1].code == "interrupt_resolved"


def _resume_all(thread: str, answers: list[tuple[str, dict]]) -> dict:
    body = run_input(thread, "")
    body["messages"], body["resume"] = [], [{"interruptId": i, "status": "resolved", "payload": p} for i, p in answers]
    return body
