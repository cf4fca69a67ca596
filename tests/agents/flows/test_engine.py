"""The flow engine against an in-memory journal: branches, joins, maps, loops, error strategies, waits,
resumption, the budget, and the same outputs whatever the concurrency."""

from __future__ import annotations

import random
from typing import Any

import pytest

from agents.flows.definition import FlowDefinition
from agents.flows.engine import FlowRunner
from agents.flows.runs import FlowLimits
from tests.agents.flows.memory import MemoryJournal, ScriptedEffects, run


def node(id: str, type: str, **config: Any) -> dict[str, Any]:
    return {"id": id, "type": type, "config": config}


def flow(nodes: list[dict[str, Any]], edges: list[tuple[str, str] | tuple[str, str, str]],
         outputs: dict[str, str] | None = None, inputs: dict[str, Any] | None = None) -> dict[str, Any]:
    return {"name": "t", "inputs": inputs or {"word": {"type": "string"}},
            "nodes": nodes, "edges": [{"source": e[0], "target": e[1], **({"branch": e[2]} if len(e) > 2 else {})}
                                      for e in edges],
            "outputs": outputs or {}}


async def test_a_chain_renders_each_nodes_output_into_the_next():
    result, journal, _ = await run(flow(
        [node("start", "start"), node("a", "template", text="{{ inputs.word }}!"),
         node("b", "llm", prompt="say {{ a.output }}"), node("end", "end")],
        [("start", "a"), ("a", "b"), ("b", "end")], {"answer": "{{ b.output }}"}), {"word": "hi"})
    assert result.status == "completed"
    assert result.outputs == {"answer": "<say hi!>"}
    assert journal.order == ["start", "a", "b", "end"]


async def test_a_condition_takes_one_branch_and_the_join_after_it_still_runs():
    definition = flow(
        [node("start", "start"), node("c", "condition", expression="inputs.word == 'yes'"),
         node("y", "template", text="took yes"), node("n", "template", text="took no"),
         node("j", "template", text="{{ y.output }}{{ n.output }}"), node("end", "end")],
        [("start", "c"), ("c", "y", "true"), ("c", "n", "false"), ("y", "j"), ("n", "j"), ("j", "end")],
        {"out": "{{ j.output }}"})
    result, journal, _ = await run(definition, {"word": "no"})
    assert result.outputs == {"out": "took no"}
    assert journal.runs["y"].status == "skipped"
    assert journal.runs["c"].branch == "false"


async def test_a_map_keeps_item_order_with_any_concurrency():
    definition = flow(
        [node("start", "start"),
         node("m", "map", items="inputs.items", concurrency=8,
              body={"id": "b", "type": "llm", "config": {"prompt": "{{ index }}:{{ item }}"}}),
         node("end", "end")],
        [("start", "m"), ("m", "end")], {"out": "{{ m.output | join(',') }}"},
        inputs={"items": {"type": "list"}})
    items = [f"x{i}" for i in range(1000)]
    result, journal, _ = await run(definition, {"items": items}, max_node_runs=1003)
    assert result.outputs["out"] == ",".join(f"<{i}:x{i}>" for i in range(1000))
    assert journal.runs["m"].items == 1000
    assert sum(1 for p in journal.runs if p.startswith("m[")) == 1000


async def test_a_map_over_what_is_not_a_list_fails_saying_what_it_got():
    definition = flow([node("start", "start"),
                       node("m", "map", items="inputs.word", body={"id": "b", "type": "template",
                                                                   "config": {"text": "{{ item }}"}}),
                       node("end", "end")], [("start", "m"), ("m", "end")])
    result, _, _ = await run(definition, {"word": "abc"})
    assert result.status == "failed" and result.failed_node == "m"
    assert "not a list" in result.error and "str" in result.error


async def test_a_loop_stops_when_until_holds_and_at_max_iterations():
    definition = flow([node("start", "start"),
                       node("l", "loop", until="iteration >= 3", maxIterations=10,
                            body={"id": "b", "type": "template", "config": {"text": "round {{ iteration }}"}}),
                       node("end", "end")], [("start", "l"), ("l", "end")], {"out": "{{ l.output }}"})
    result, journal, _ = await run(definition)
    assert result.outputs == {"out": "round 3"} and journal.runs["l"].iterations == 3
    capped = flow([node("start", "start"),
                   node("l", "loop", until="false", maxIterations=4,
                        body={"id": "b", "type": "template", "config": {"text": "{{ iteration }}"}}),
                   node("end", "end")], [("start", "l"), ("l", "end")], {"out": "{{ l.output }}"})
    result, journal, _ = await run(capped)
    assert result.status == "completed" and result.outputs == {"out": "4"}


async def test_retries_then_each_on_error_strategy():
    base = [node("start", "start"), node("a", "llm", prompt="p"), node("end", "end")]
    edges = [("start", "a"), ("a", "end")]
    retried = [dict(base[0]), {**base[1], "retry": {"max": 2, "delaySeconds": 0}}, base[2]]
    result, journal, effects = await run(flow(retried, edges, {"o": "{{ a.output }}"}),
                                         effects=ScriptedEffects(fail={"a": 2}))
    assert result.status == "completed" and journal.runs["a"].attempts == 3 and effects.calls == ["a"] * 3
    failing = ScriptedEffects(fail={"a": 9})
    result, _, _ = await run(flow(base, edges), effects=failing)
    assert result.status == "failed" and result.failed_node == "a" and "model failed" in result.error
    cont = [base[0], {**base[1], "onError": "continue"}, base[2]]
    result, journal, _ = await run(flow(cont, edges, {"o": "[{{ a.output }}]"}), effects=ScriptedEffects(fail={"a": 9}))
    assert result.status == "completed" and result.outputs == {"o": "[]"} and journal.runs["a"].status == "failed"
    default = [base[0], {**base[1], "onError": "default", "default": "fallback"}, base[2]]
    result, _, _ = await run(flow(default, edges, {"o": "{{ a.output }}"}), effects=ScriptedEffects(fail={"a": 9}))
    assert result.outputs == {"o": "fallback"}
    branch = [base[0], {**base[1], "onError": "branch"}, node("h", "template", text="handled"),
              node("ok", "template", text="fine"), base[2]]
    result, journal, _ = await run(flow(branch, [("start", "a"), ("a", "h", "error"), ("a", "ok"), ("h", "end"),
                                                 ("ok", "end")], {"o": "{{ h.output }}{{ ok.output }}"}),
                                   effects=ScriptedEffects(fail={"a": 9}))
    assert result.outputs == {"o": "handled"} and journal.runs["ok"].status == "skipped"


async def test_a_skipped_node_says_which_node_before_it_failed_or_was_skipped():
    definition = flow([node("start", "start"), {**node("a", "llm", prompt="p"), "onError": "branch"},
                       node("b", "template", text="after a"), node("c", "template", text="after b"),
                       node("end", "end")], [("start", "a"), ("a", "b"), ("b", "c"), ("c", "end")])
    result, journal, _ = await run(definition, effects=ScriptedEffects(fail={"a": 9}))
    assert journal.runs["b"].error == "it depends on node 'a', which failed"
    assert journal.runs["c"].error == "it depends on node 'b', which was skipped"


async def test_join_all_runs_a_node_only_when_every_edge_into_it_is_taken():
    """A plan's tasks need every task they depend on (`agents.planning.as_flow`): one branch not taken is
    enough to skip the join, where a flow's join runs on one taken branch."""
    definition = flow([node("start", "start"), node("c", "condition", expression="inputs.word == 'yes'"),
                       node("y", "template", text="yes"), node("n", "template", text="no"),
                       node("j", "template", text="{{ y.output }}{{ n.output }}"), node("end", "end")],
                      [("start", "c"), ("c", "y", "true"), ("c", "n", "false"), ("y", "j"), ("n", "j"), ("j", "end")])
    result, journal, _ = await run(definition, {"word": "no"})
    assert journal.runs["j"].status == "succeeded"
    result, journal, _ = await run(definition, {"word": "no"}, join_all=True)
    assert journal.runs["j"].status == "skipped" and journal.runs["end"].status == "skipped"
    assert journal.runs["n"].status == "succeeded"


async def test_admit_skips_a_node_about_to_start_with_its_reason():
    refused: list[str] = []

    def admit(n: Any) -> str | None:
        refused.append(n.id)
        return "over budget" if n.id == "b" else None

    definition = flow([node("start", "start"), node("a", "llm", prompt="a"), node("b", "llm", prompt="b"),
                       node("c", "llm", prompt="c"), node("end", "end")],
                      [("start", "a"), ("start", "b"), ("b", "c"), ("a", "end"), ("c", "end")])
    result, journal, effects = await run(definition, admit=admit)
    assert journal.runs["b"].error == "over budget" and journal.runs["c"].status == "skipped"
    assert effects.calls == ["a"] and result.status == "completed" and "c" not in refused


async def test_a_timeout_fails_the_node_saying_so():
    definition = flow([node("start", "start"), {**node("a", "llm", prompt="p"), "timeoutSeconds": 0.05},
                       node("end", "end")], [("start", "a"), ("a", "end")])
    result, _, _ = await run(definition, effects=ScriptedEffects(delay=1.0))
    assert result.status == "failed" and "timeoutSeconds" in result.error


async def test_a_human_node_waits_and_its_decision_takes_its_branch_once():
    definition = flow([node("start", "start"), node("h", "human", message="ok {{ inputs.word }}?",
                                                    actions=["approve", "reject"]),
                       node("yes", "llm", prompt="go"), node("no", "template", text="stopped"),
                       node("side", "llm", prompt="side"), node("end", "end")],
                      [("start", "h"), ("start", "side"), ("h", "yes", "approve"), ("h", "no", "reject"),
                       ("yes", "end"), ("no", "end"), ("side", "end")], {"o": "{{ yes.output }}{{ no.output }}"})
    result, journal, effects = await run(definition, {"word": "w"})
    assert result.status == "waiting" and result.waits[0].message == "ok w?"
    assert effects.calls == ["side"]  # what does not depend on the wait ran
    journal.decisions["h"] = "reject"
    result, journal, effects = await run(definition, {"word": "w"}, journal=journal)
    assert result.status == "completed" and result.outputs == {"o": "stopped"}
    assert effects.calls == []  # nothing ran twice


async def test_a_resumed_run_runs_only_what_did_not_settle():
    definition = flow([node("start", "start"),
                       node("m", "map", items="inputs.items", concurrency=2,
                            body={"id": "b", "type": "llm", "config": {"prompt": "{{ item }}"}}),
                       node("end", "end")], [("start", "m"), ("m", "end")], {"o": "{{ m.output | join('') }}"},
                      inputs={"items": {"type": "list"}})
    first, journal, _ = await run(definition, {"items": list("abcdef")})
    kept = {p: r for p, r in journal.runs.items() if p in ("start", "m[0]", "m[1]", "m[4]")}
    result, journal, effects = await run(definition, {"items": list("abcdef")}, journal=MemoryJournal(kept))
    assert result.outputs == first.outputs
    assert sorted(effects.calls) == ["b", "b", "b"]  # items 2, 3 and 5 only


async def test_the_node_budget_ends_a_runaway_run():
    definition = flow([node("start", "start"),
                       node("m", "map", items="inputs.items", onItemError="continue",
                            body={"id": "b", "type": "template", "config": {"text": "{{ item }}"}}),
                       node("end", "end")], [("start", "m"), ("m", "end")], inputs={"items": {"type": "list"}})
    result, _, _ = await run(definition, {"items": list(range(50))}, max_node_runs=20)
    assert result.status == "failed" and "FLOW_MAX_NODE_RUNS" in result.error


def generated(seed: int) -> tuple[dict[str, Any], dict[str, Any]]:
    """A random layered graph of templates, llm calls, conditions, maps and loops, and its inputs."""
    rng = random.Random(seed)
    nodes = [node("start", "start")]
    edges: list[tuple[str, ...]] = []
    layers = [["start"]]
    count = 0
    for _ in range(rng.randint(2, 5)):
        layer = []
        for _ in range(rng.randint(1, 4)):
            count += 1
            nid = f"n{count}"
            parent = rng.choice(layers[-1])
            ref = "inputs.word" if parent == "start" else f"{parent}.output"
            kind = rng.choice(["template", "llm", "map", "loop", "condition"])
            if kind == "template":
                nodes.append(node(nid, "template", text=f"t({{{{ {ref} }}}})"))
            elif kind == "llm":
                nodes.append(node(nid, "llm", prompt=f"l({{{{ {ref} }}}})"))
            elif kind == "map":
                nodes.append(node(nid, "map", items="inputs.items", concurrency=rng.randint(1, 8),
                                  body={"id": f"{nid}b", "type": "llm",
                                        "config": {"prompt": f"{{{{ item }}}}-{{{{ {ref} }}}}"}}))
            elif kind == "loop":
                nodes.append(node(nid, "loop", until=f"iteration >= {rng.randint(1, 3)}", maxIterations=5,
                                  body={"id": f"{nid}b", "type": "llm", "config": {"prompt": "i{{ iteration }}"}}))
            else:
                nodes.append(node(nid, "condition", expression=f"size(inputs.items) > {rng.randint(0, 6)}"))
            if parent != "start" and any(n["id"] == parent and n["type"] == "condition" for n in nodes):
                edges.append((parent, nid, rng.choice(["true", "false"])))
            else:
                edges.append((parent, nid))
            layer.append(nid)
        layers.append(layer)
    nodes.append(node("end", "end"))
    for nid in layers[-1]:
        edges.append((nid, "end"))
    outputs = {n["id"]: "{{ " + n["id"] + ".output }}" for n in nodes[1:-1]}
    definition = flow(nodes, edges, outputs, inputs={"word": {"type": "string"}, "items": {"type": "list"}})
    return definition, {"word": f"w{seed}", "items": [f"i{k}" for k in range(rng.randint(0, 7))]}


@pytest.mark.parametrize("seed", range(200))
async def test_generated_flows_give_the_same_outputs_sequentially_and_with_concurrency_8(seed):
    definition, inputs = generated(seed)
    one, _, _ = await run(definition, inputs, concurrency=1, effects=ScriptedEffects())
    many, _, _ = await run(definition, inputs, concurrency=8, effects=ScriptedEffects(delay=0.001))
    assert one.status == many.status
    assert one.outputs == many.outputs


async def test_a_maps_items_sent_elsewhere_settle_once_in_order_and_a_resumed_map_sends_only_the_rest():
    # `spread` runs an item as another replica would: a runner of its own over the same journal, with
    # what the run settled in view (`Runner.run_item`); the map records the run it settled.
    definition = flow([node("start", "start"),
                       node("m", "map", items="inputs.items", concurrency=3,
                            body={"id": "b", "type": "llm", "config": {"prompt": "{{ inputs.word }}{{ item }}"}}),
                       node("end", "end")], [("start", "m"), ("m", "end")], {"o": "{{ m.output | join('') }}"},
                      inputs={"word": {"type": "string"}, "items": {"type": "list"}})
    parsed, inputs = FlowDefinition.decode(definition), {"word": "w", "items": list("abcdef")}
    journal, effects, sent = MemoryJournal(), ScriptedEffects(delay=0.001), []

    async def elsewhere(body, path, extra):
        sent.append(path)
        other = FlowRunner(parsed, effects, journal, FlowLimits())
        other.inputs = inputs
        for at, settled in (await journal.recorded()).items():
            other.record(at, settled)
        return await other.item(body, path, extra)

    result = await FlowRunner(parsed, effects, journal, FlowLimits(), spread=elsewhere).run(inputs)
    assert result.outputs == {"o": "<wa><wb><wc><wd><we><wf>"}
    assert sorted(sent) == [f"m[{i}]" for i in range(6)] and len(effects.calls) == 6
    kept = MemoryJournal({p: r for p, r in journal.runs.items() if p in ("start", "m[1]", "m[4]")})
    sent.clear()
    journal = kept
    again = await FlowRunner(parsed, effects, kept, FlowLimits(), spread=elsewhere).run(inputs)
    assert again.outputs == result.outputs and sorted(sent) == ["m[0]", "m[2]", "m[3]", "m[5]"]


async def test_a_maps_items_that_compute_at_once_are_not_sent_elsewhere():
    definition = flow([node("start", "start"),
                       node("m", "map", items="inputs.items",
                            body={"id": "b", "type": "template", "config": {"text": "{{ item }}"}}),
                       node("end", "end")], [("start", "m"), ("m", "end")], {"o": "{{ m.output | join('') }}"},
                      inputs={"items": {"type": "list"}})

    async def elsewhere(body, path, extra):
        raise AssertionError("a template item was sent elsewhere")

    result, _, _ = await run(definition, {"items": list("xyz")}, spread=elsewhere)
    assert result.outputs == {"o": "xyz"}


async def test_an_item_the_app_gives_back_runs_here_counted_once_against_the_budget():
    definition = flow([node("start", "start"),
                       node("m", "map", items="inputs.items", concurrency=2,
                            body={"id": "b", "type": "llm", "config": {"prompt": "{{ item }}"}}),
                       node("end", "end")], [("start", "m"), ("m", "end")], {"o": "{{ m.output | join('') }}"},
                      inputs={"items": {"type": "list"}})

    async def alone(body, path, extra):
        return None  # no other replica: the item runs in the round

    result, journal, effects = await run(definition, {"items": list("abc")}, spread=alone, max_node_runs=6)
    assert result.outputs == {"o": "<a><b><c>"} and len(effects.calls) == 3  # start, m, 3 items, end: 6 runs
    over, _, _ = await run(definition, {"items": list("abcd")}, spread=alone, max_node_runs=6)
    assert over.status == "failed" and "FLOW_MAX_NODE_RUNS" in over.error
