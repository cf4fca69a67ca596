"""Flows the protocol tests publish over REST and run through each protocol."""

from __future__ import annotations

from typing import Any


def n(id: str, type: str, **config: Any) -> dict[str, Any]:
    return {"id": id, "type": type, "config": config}


def e(source: str, target: str, branch: str | None = None) -> dict[str, Any]:
    return {"source": source, "target": target, **({"branch": branch} if branch else {})}


def greeting(name: str = "Greet people") -> dict[str, Any]:
    return {"name": name, "description": "Greets someone, politely or not",
            "inputs": {"who": {"type": "string", "description": "whom to greet"},
                       "polite": {"type": "boolean", "default": True}},
            "nodes": [n("start", "start"), n("c", "condition", expression="inputs.polite"),
                      n("p", "template", text="Good day, {{ inputs.who }}."), n("r", "template", text="Hi {{ inputs.who }}"),
                      n("end", "end")],
            "edges": [e("start", "c"), e("c", "p", "true"), e("c", "r", "false"), e("p", "end"), e("r", "end")],
            "outputs": {"greeting": "{{ p.output }}{{ r.output }}"}}


def gated(name: str = "Gated send") -> dict[str, Any]:
    return {"name": name, "description": "Asks before it sends", "inputs": {"word": {"type": "string"}},
            "nodes": [n("start", "start"), n("ask", "human", message="Send {{ inputs.word }}?", actions=["send", "drop"]),
                      n("send", "template", text="sent {{ inputs.word }}"), n("drop", "template", text="dropped"),
                      n("end", "end")],
            "edges": [e("start", "ask"), e("ask", "send", "send"), e("ask", "drop", "drop"), e("send", "end"),
                      e("drop", "end")],
            "outputs": {"out": "{{ send.output }}{{ drop.output }}"}}


def both(name: str = "Both") -> dict[str, Any]:
    """Two human nodes in parallel branches: they wait at once."""
    return {"name": name, "nodes": [
        n("start", "start"), n("a", "human", message="Ship A?", actions=["yes", "no"]),
        n("b", "human", message="Ship B?", actions=["go", "stop"]),
        n("ta", "template", text="A:{{ a.output }}"), n("tb", "template", text="B:{{ b.output }}"), n("end", "end")],
        "edges": [e("start", "a"), e("start", "b"), e("a", "ta"), e("b", "tb"), e("ta", "end"), e("tb", "end")],
        "outputs": {"out": "{{ ta.output }} {{ tb.output }}"}}


def held(name: str = "Held") -> dict[str, Any]:
    """An llm node whose prompt is "[hold] <token>": the protocol tests' model holds it until stopped."""
    return {"name": name, "inputs": {"token": {"type": "string"}},
            "nodes": [n("start", "start"), n("l", "llm", prompt="[hold] {{ inputs.token }}"), n("end", "end")],
            "edges": [e("start", "l"), e("l", "end")], "outputs": {"said": "{{ l.output }}"}}


def publish(rest: Any, definition: dict[str, Any], versions: int = 1) -> int:
    """Create the flow and publish its draft `versions` times; its id."""
    created = rest.post("/api/flows", json=definition)
    assert created.status_code == 201, created.text
    flow_id = created.json()["id"]
    for _ in range(versions):
        published = rest.post(f"/api/flows/{flow_id}/versions", json={})
        assert published.status_code in (200, 201), published.text
    return int(flow_id)
