"""Sub-flows run by the engine against an in-memory journal (`agents.flows.subflows`): the effects give only
the definition; the engine scopes the sub-flow's paths under its node's, checks its inputs and its depth."""

from __future__ import annotations

from typing import Any

from tests.agents.flows.memory import ScriptedEffects, run
from tests.agents.flows.test_engine import flow, node


def calling(flow_id: int, prompt: str, node_id: str = "sub") -> dict[str, Any]:
    """A flow that asks the model (node `ask`), then runs flow `flow_id` as node `node_id`."""
    return flow([node("start", "start"), node("ask", "llm", prompt=prompt),
                 node(node_id, "flow", flowId=flow_id, version="draft"), node("end", "end")],
                [("start", "ask"), ("ask", node_id), (node_id, "end")],
                {"said": f"{{{{ ask.output }}}} {{{{ {node_id}.output | tojson }}}}"})


INNER = flow([node("start", "start"), node("up", "template", text="{{ inputs.word | upper }}"),
              node("tone", "llm", prompt="{{ inputs.tone }}"), node("end", "end")],
             [("start", "up"), ("up", "tone"), ("tone", "end")], {"shout": "{{ up.output }}"},
             {"word": {"type": "string"}, "tone": {"type": "string", "default": "calm"}})


async def test_a_sub_flows_node_runs_sit_under_its_node_and_its_inputs_take_their_defaults():
    effects = ScriptedEffects(flows={1: INNER, 2: calling(1, "mid: {{ inputs.word }}")})
    result, journal, _ = await run(calling(2, "top: {{ inputs.word }}", "mid"), {"word": "hey"}, effects=effects)
    assert result.status == "completed", result.error
    assert {"ask", "mid", "mid/ask", "mid/sub", "mid/sub/up", "mid/sub/tone"} <= set(journal.runs)
    assert effects.paths == ["ask", "mid/ask", "mid/sub/tone"]  # the effects see every path from the top
    assert journal.runs["mid/sub/tone"].output == "<calm>"
    assert journal.runs["mid"].output == {"said": '<mid: hey> {"shout": "HEY"}'}


async def test_a_sub_flow_without_an_input_it_needs_or_nested_too_deep_fails_its_node():
    needs = flow([node("start", "start"), node("end", "end")], [("start", "end")], {},
                 {"word": {"type": "string"}, "city": {"type": "string"}})
    result, journal, _ = await run(calling(1, "x"), {"word": "hey"}, effects=ScriptedEffects(flows={1: needs}))
    assert result.status == "failed" and "flow 1 needs inputs this flow does not have: city" in journal.runs["sub"].error
    itself = calling(1, "again")  # flow 1 runs itself: six deep is refused
    result, journal, _ = await run(itself, {"word": "hey"}, effects=ScriptedEffects(flows={1: itself}))
    assert result.status == "failed"
    sixth = "sub/" * 5 + "sub"
    assert journal.runs["sub/" * 5 + "ask"].status == "succeeded" and sixth + "/ask" not in journal.runs
    assert "sub-flows nest deeper than 5" in journal.runs[sixth].error
    result, journal, _ = await run(calling(7, "x"), {"word": "hey"})
    assert result.status == "failed" and journal.runs["sub"].error == "there is no flow 7"
