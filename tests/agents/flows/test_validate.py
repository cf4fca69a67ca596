"""Validation: one test per kind of problem, each naming its node, and one flow with all of them."""

from __future__ import annotations

from typing import Any

import pytest

from agents.flows.definition import FlowDefinition
from agents.flows.node_checks import Problem
from agents.flows.validate import flow_refs, validate

AGENTS = {"analyst", "writer"}


def node(node_id: str, kind: str, **config: Any) -> dict[str, Any]:
    return {"id": node_id, "type": kind, "config": config}


def chain(*nodes: dict[str, Any], edges: list[dict[str, Any]] | None = None, inputs: dict[str, Any] | None = None,
          outputs: dict[str, str] | None = None) -> dict[str, Any]:
    """A flow `start -> nodes[0] -> nodes[1] -> ...` unless `edges` are given (then start's edge is added)."""
    ids = ["start", *(n["id"] for n in nodes)]
    if edges is None:
        edges = [{"source": a, "target": b} for a, b in zip(ids, ids[1:], strict=False)]
    return {"name": "test", "inputs": inputs if inputs is not None else {"word": {"type": "string"}},
            "nodes": [node("start", "start"), *nodes], "edges": edges, "outputs": outputs or {}}


def problems(raw: dict[str, Any], **kwargs: Any) -> list[Problem]:
    return validate(FlowDefinition.decode(raw), agents=kwargs.pop("agents", AGENTS), max_nodes=kwargs.pop("max_nodes", 500),
                    **kwargs)


def found(raw: dict[str, Any], **kwargs: Any) -> set[tuple[str | None, str]]:
    return {(p.node_id, p.code) for p in problems(raw, **kwargs)}


def test_a_valid_flow_of_every_node_type_has_no_problem() -> None:
    raw = chain(
        node("t1", "template", text="{{ inputs.word }}"),
        node("a", "agent", agent="analyst", instructions="Read {{ t1.output }}", inputs=["{{ start.files }}"]),
        node("c", "condition", cases=[{"name": "long", "expression": "size(t1.output) > 10"},
                                      {"name": "short", "expression": "inputs.word.contains('x')"}]),
        node("m", "map", items="inputs.items", concurrency=2,
             body=node("mb", "llm", prompt="{{ item }} ({{ index }}) after {{ a.output }}")),
        node("l", "loop", until="iteration >= 3 || lb.output == 'done'", maxIterations=5,
             body=node("lb", "code", code="result = len(inputs['word'])")),
        node("h", "human", message="Go on with {{ l.output }}?", actions=["go", "stop"], defaultAction="stop"),
        node("w", "http", url="https://example.org/{{ inputs.word }}", body={"q": "{{ h.output }}"}),
        node("f", "flow", flowId=7, version="draft"),
        node("e", "end"),
        edges=[{"source": "start", "target": "t1"}, {"source": "t1", "target": "a"}, {"source": "a", "target": "c"},
               {"source": "c", "target": "m", "branch": "long"}, {"source": "c", "target": "l", "branch": "short"},
               {"source": "c", "target": "e", "branch": "default"}, {"source": "m", "target": "h"},
               {"source": "l", "target": "h"}, {"source": "h", "target": "w", "branch": "go"},
               {"source": "w", "target": "f"}, {"source": "f", "target": "e"}, {"source": "h", "target": "e", "branch": "stop"}],
        inputs={"word": {"type": "string"}, "items": {"type": "list", "default": []}},
        outputs={"answer": "{{ f.output }} {{ m.output }}"})
    assert problems(raw, flow_exists=lambda flow_id, version: flow_id == 7) == []


def test_over_the_node_limit_is_one_problem_and_nothing_else() -> None:
    raw = chain(*[node(f"n{i}", "nonsense") for i in range(20)])
    assert problems(raw, max_nodes=10) == [Problem(None, "too_many_nodes", "over 10 nodes (21 counted, bodies included)")]


def test_nested_bodies_count_towards_the_node_limit() -> None:
    body = node("leaf", "template", text="{{ item }}")
    for i in range(30):
        body = node(f"m{i}", "map", items="[1]", body=body)
    raw = chain(body)
    assert found(raw, max_nodes=32) == set()  # start, 30 maps, the leaf
    assert found(raw, max_nodes=31) == {(None, "too_many_nodes")}


def test_no_start_and_two_starts() -> None:
    assert ("t", "unreachable") not in found({"name": "x", "nodes": [node("t", "template", text="x")]})
    assert found({"name": "x", "nodes": [node("t", "template", text="x")]}) == {(None, "missing_start")}
    assert ("s2", "too_many_starts") in found(chain(node("s2", "start")))


@pytest.mark.parametrize("bad", ["1st", "with-dash", "dotted.id", "inputs", "item", ""])
def test_an_id_that_cannot_be_a_template_name(bad: str) -> None:
    assert (bad, "bad_id") in found(chain(node(bad, "end")))


def test_a_duplicate_id_also_inside_a_body() -> None:
    assert ("t", "duplicate_id") in found(chain(node("t", "template", text="x"), node("t", "end")))
    raw = chain(node("m", "map", items="[1]", body=node("m", "template", text="{{ item }}")))
    assert ("m", "duplicate_id") in found(raw)


def test_an_unknown_type_also_inside_a_body() -> None:
    assert found(chain(node("x", "teleport"))) == {("x", "unknown_type")}
    assert ("b", "unknown_type") in found(chain(node("m", "map", items="[1]", body=node("b", "teleport"))))


def test_a_bad_config_names_its_field() -> None:
    [problem] = problems(chain(node("l", "llm", prompt="hi", temperature=2)))
    assert (problem.node_id, problem.code) == ("l", "bad_config") and "temperature" in problem.message
    [problem] = problems(chain(node("h", "human", message="ok?", actions=[])))
    assert problem.code == "bad_config" and "config.actions" in problem.message
    [problem] = problems(chain(node("h", "human", message="ok?", actions=["yes"], defaultAction="no")))
    assert problem.code == "bad_config" and "defaultAction" in problem.message
    [problem] = problems(chain(node("c", "condition", expression="true", cases=[])))
    assert problem.code == "bad_config" and "either" in problem.message
    [problem] = problems(chain(node("l", "llm", prompt="x", schema={"type": "nope"})))
    assert problem.code == "bad_config" and "JSON schema" in problem.message


def test_an_unknown_agent() -> None:
    assert found(chain(node("a", "agent", agent="wizard", instructions="x"))) == {("a", "unknown_agent")}


@pytest.mark.parametrize("body", [None, "a string", {"type": "llm"}, {"id": "b", "type": "llm", "extra": 1},
                                  {"id": "b", "type": "start"}])
def test_a_map_or_loop_body_that_is_not_a_node(body: Any) -> None:
    config = {"items": "[1]"} if body is None else {"items": "[1]", "body": body}
    assert found(chain(node("m", "map", **config))) == {("m", "map_body_not_a_node")}
    config = {"until": "true", "maxIterations": 2} | ({} if body is None else {"body": body})
    assert found(chain(node("l", "loop", **config))) == {("l", "loop_body_not_a_node")}


@pytest.mark.parametrize("maximum", [None, 0, -1, "3", True])
def test_a_loop_without_max_iterations(maximum: Any) -> None:
    config = {"until": "iteration > 2", "body": node("b", "template", text="x")}
    if maximum is not None:
        config["maxIterations"] = maximum
    assert found(chain(node("l", "loop", **config))) == {("l", "loop_without_max")}


def test_an_edge_to_nowhere_names_the_end_that_is_there() -> None:
    raw = chain(node("t", "template", text="x"))
    raw["edges"].append({"source": "t", "target": "ghost"})
    raw["edges"].append({"source": "phantom", "target": "nowhere"})
    assert found(raw) == {("t", "edge_to_nowhere"), (None, "edge_to_nowhere")}


def test_an_edge_into_a_body_node_is_to_nowhere() -> None:
    raw = chain(node("m", "map", items="[1]", body=node("b", "template", text="x")), node("e", "end"))
    raw["edges"].append({"source": "b", "target": "e"})
    assert (None, "edge_to_nowhere") in found(raw) or ("e", "edge_to_nowhere") in found(raw)


def test_bad_branches() -> None:
    raw = chain(node("c", "condition", expression="true"), node("e", "end"),
                edges=[{"source": "start", "target": "c"}, {"source": "c", "target": "e", "branch": "maybe"}])
    assert found(raw) == {("c", "bad_branch")}
    raw["edges"][1]["branch"] = None  # a condition's edge must say which branch
    assert found(raw) == {("c", "bad_branch")}
    raw = chain(node("t", "template", text="x"), node("e", "end"),
                edges=[{"source": "start", "target": "t"}, {"source": "t", "target": "e", "branch": "error"}])
    [problem] = problems(raw)
    assert problem.code == "bad_branch" and "onError" in problem.message
    raw["nodes"][1]["onError"] = "branch"
    assert problems(raw) == []
    raw = chain(node("h", "human", message="?", actions=["yes", "no"]), node("e", "end"),
                edges=[{"source": "start", "target": "h"}, {"source": "h", "target": "e", "branch": "perhaps"}])
    assert found(raw) == {("h", "bad_branch")}


def test_a_cycle_not_made_by_a_loop() -> None:
    raw = chain(node("a", "template", text="x"), node("b", "template", text="y"))
    raw["edges"].append({"source": "b", "target": "a"})
    [problem] = problems(raw)
    assert (problem.node_id, problem.code) == ("a", "cycle") and "a, b" in problem.message
    raw["edges"].append({"source": "b", "target": "b"})
    assert found(raw) == {("a", "cycle")}


def test_a_self_edge_is_a_cycle() -> None:
    raw = chain(node("a", "template", text="x"))
    raw["edges"].append({"source": "a", "target": "a"})
    assert found(raw) == {("a", "cycle")}


def test_an_unreachable_node() -> None:
    raw = chain(node("a", "template", text="x"), node("lost", "end"), edges=[{"source": "start", "target": "a"}])
    assert found(raw) == {("lost", "unreachable")}


@pytest.mark.parametrize(("text", "why"), [
    ("{{ inputs.wrod }}", "no input 'wrod'"),
    ("{{ n9.output }}", "'n9'"),
    ("{{ later.output }}", "does not run before"),
    ("{{ t.output }}", "does not run before"),  # a node reading itself
    ("{{ a.outptu }}", "`output` and `files`"),
    ("{{ item }}", "inside a map"),
    ("{{ index }}", "inside a map"),
    ("{{ iteration }}", "inside a loop"),
    ("{{ mb.output }}", "inside a map or loop body"),
])
def test_an_undefined_variable_in_a_template(text: str, why: str) -> None:
    raw = chain(node("a", "template", text="x"),
                node("m", "map", items="[1]", body=node("mb", "template", text="{{ item }}")),
                node("t", "template", text=text), node("later", "end"))
    [problem] = problems(raw)
    assert (problem.node_id, problem.code) == ("t", "undefined_variable") and why in problem.message


@pytest.mark.parametrize("expression", ["inputs.n > 2", "nope == 1", "item > 1", "t.output == 'x'"])
def test_an_undefined_variable_in_an_expression(expression: str) -> None:
    raw = chain(node("c", "condition", expression=expression), node("t", "end"),
                edges=[{"source": "start", "target": "c"}, {"source": "c", "target": "t", "branch": "true"}])
    assert found(raw) == {("c", "undefined_variable")}


def test_names_bound_inside_an_expression_or_template_are_not_variables() -> None:
    raw = chain(node("c", "condition", expression="[1, 2].exists(x, x > 1) && inputs.word.contains('x')"),
                node("t", "template", text="{% for w in inputs.word %}{{ w }}{{ loop.index }}{% endfor %}{{ range(2) }}"),
                edges=[{"source": "start", "target": "c"}, {"source": "c", "target": "t", "branch": "true"}])
    assert problems(raw) == []


def test_the_outputs_and_a_loops_until_read_what_they_may() -> None:
    raw = chain(node("l", "loop", until="iteration >= 2 && body.output != ''", maxIterations=3,
                     body=node("body", "template", text="{{ iteration }}")),
                outputs={"answer": "{{ l.output }}", "bad": "{{ inputs.nope }}"})
    assert found(raw) == {(None, "undefined_variable")}


def test_a_bad_expression() -> None:
    [problem] = problems(chain(node("m", "map", items="inputs.word >", body=node("b", "template", text="x"))))
    assert (problem.node_id, problem.code) == ("m", "bad_expression") and "config.items" in problem.message


def test_a_bad_template_says_its_line() -> None:
    [problem] = problems(chain(node("t", "template", text="line one\n{{ inputs.word ")))
    assert (problem.node_id, problem.code) == ("t", "bad_template") and "line 2" in problem.message


def test_code_that_does_not_parse() -> None:
    [problem] = problems(chain(node("c", "code", code="result = 1\nif True print(2)")))
    assert (problem.node_id, problem.code) == ("c", "code_syntax") and "line 2" in problem.message


def test_an_unknown_sub_flow_and_a_sub_flow_cycle() -> None:
    raw = chain(node("f", "flow", flowId=2))
    assert found(raw, flow_exists=lambda flow_id, version: False) == {("f", "unknown_flow")}
    assert found(raw, flow_id=2) == {("f", "subflow_cycle")}
    uses = {2: [(3, None)], 3: [(4, "draft")], 4: [(1, 1)]}
    [problem] = problems(raw, flow_id=1, subflow_edges=lambda flow_id, version: uses.get(flow_id, []))
    assert problem.code == "subflow_cycle" and "1 -> 2 -> 3 -> 4 -> 1" in problem.message
    uses[4] = [(2, None)]  # a cycle among the others, not through this flow: theirs to report, and it ends
    assert problems(raw, flow_id=1, subflow_edges=lambda flow_id, version: uses.get(flow_id, [])) == []


def test_bad_inputs() -> None:
    raw = chain(inputs={"bad name": {"type": "string"}, "n": {"type": "number", "default": "three"},
                        "flag": {"type": "number", "default": True}, "ok": {"type": "number", "default": 2.5}})
    assert [p.code for p in problems(raw)] == ["bad_input"] * 3


def test_one_flow_with_every_problem_names_each_with_its_node() -> None:
    raw = chain(
        node("start", "start"),  # a second start with the same id
        node("s2", "start"),
        node("bad-id", "end"),
        node("ufo", "teleport"),
        node("cfg", "llm", prompt="x", temperature=1),
        node("ag", "agent", agent="wizard", instructions="x"),
        node("mp", "map", items="[1]", body="not a node"),
        node("lp", "loop", until="true", maxIterations=2, body=7),
        node("lx", "loop", until="true", body=node("lxb", "template", text="x")),
        node("cond", "condition", expression="true"),
        node("cy1", "template", text="x"),
        node("cy2", "template", text="x"),
        node("lost", "end"),
        node("undef", "template", text="{{ inputs.wrod }}"),
        node("expr", "condition", expression="inputs.word >"),
        node("tpl", "template", text="{% if %}"),
        node("py", "code", code="def f(:"),
        node("sub", "flow", flowId=1),
        node("ghosted", "end"),
        edges=[{"source": "start", "target": n} for n in ("s2", "bad-id", "ufo", "cfg", "ag", "mp", "lp", "lx", "cond",
                                                           "undef", "expr", "tpl", "py", "sub", "ghosted")]
        + [{"source": "cond", "target": "cy1", "branch": "maybe"}, {"source": "cy1", "target": "cy2"},
           {"source": "cy2", "target": "cy1"}, {"source": "ghosted", "target": "ghost"}],
        inputs={"n": {"type": "number", "default": "x"}, "word": {"type": "string"}})
    assert found(raw, flow_id=1) == {
        (None, "bad_input"), ("start", "duplicate_id"), ("start", "too_many_starts"), ("s2", "too_many_starts"), ("bad-id", "bad_id"),
        ("ufo", "unknown_type"), ("cfg", "bad_config"), ("ag", "unknown_agent"), ("mp", "map_body_not_a_node"),
        ("lp", "loop_body_not_a_node"), ("lx", "loop_without_max"), ("cond", "bad_branch"), ("cy1", "cycle"),
        ("lost", "unreachable"), ("undef", "undefined_variable"), ("expr", "bad_expression"), ("tpl", "bad_template"),
        ("py", "code_syntax"), ("sub", "subflow_cycle"), ("ghosted", "edge_to_nowhere"),
    }


def large_chain(count: int, *, cycle: bool = False) -> dict[str, Any]:
    """`start -> n0 -> n1 -> ...`, each template reading the one before; with `cycle`, the last leads back to n0."""
    nodes = [node("n0", "template", text="{{ inputs.word }}")]
    nodes += [node(f"n{i}", "template", text=f"{{{{ n{i - 1}.output }}}}") for i in range(1, count)]
    raw = chain(*nodes)
    if cycle:
        raw["edges"].append({"source": f"n{count - 1}", "target": "n0"})
    return raw


def test_a_500_node_chain_is_valid() -> None:
    assert problems(large_chain(499)) == []


def test_a_5000_node_cycle_is_one_problem_without_recursion() -> None:
    found_problems = problems(large_chain(5_000, cycle=True), max_nodes=10_000)
    assert [(p.node_id, p.code) for p in found_problems] == [("n0", "cycle")]
    assert "and 4990 more" in found_problems[0].message


def test_a_reference_across_a_5000_node_graph_is_checked_against_its_ancestors() -> None:
    raw = large_chain(5_000)
    raw["nodes"][1]["config"]["text"] = "{{ n4999.output }}"  # n0 reads the last node: it runs after
    [problem] = problems(raw, max_nodes=10_000)
    assert (problem.node_id, problem.code) == ("n0", "undefined_variable")


def test_the_sub_flows_a_definition_runs_bodies_included() -> None:
    raw = chain(node("f", "flow", flowId=2), node("m", "map", items="[1]", body=node("g", "flow", flowId=3,
                                                                                    version="draft")),
                node("h", "flow", flowId=2))
    assert flow_refs(FlowDefinition.decode(raw)) == [(2, None), (3, "draft")]
