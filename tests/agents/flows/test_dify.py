"""The Dify DSL translator alone (`agents.flows.from_dify`): references, literal braces, branches, the code
call, and refusal naming the node (the files and their import over HTTP: tests/rounds/test_flow_versions.py)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from agents.flows import DifyError, FlowDefinition, dify_coverage, from_dify, is_dify, load_yaml, validate_flow

HERE = Path(__file__).parent / "dify"


def app(*nodes: dict[str, Any], edges: list[tuple[str, str, str]] = ()) -> dict[str, Any]:  # type: ignore[assignment]
    return {"kind": "app", "version": "0.1.5", "app": {"name": "t", "mode": "workflow"},
            "workflow": {"graph": {"nodes": [{"id": i, "type": "custom", "data": d} for i, d in nodes],
                                   "edges": [{"source": s, "target": t, "sourceHandle": h} for s, t, h in edges]}}}


START = ("1", {"type": "start", "title": "Start", "variables": [{"variable": "q", "type": "text-input", "required": True}]})
END = ("9", {"type": "end", "outputs": [{"variable": "out", "value_selector": ["2", "text"]}]})


def test_references_become_ours_and_other_braces_stay_literal():
    llm = ("2", {"type": "llm", "prompt_template": [
        {"role": "system", "text": "Reply about {{topic}}."},
        {"role": "user", "text": "Q: {{#1.q#}} from {{#sys.user_id#}}"}]})
    found = from_dify(app(START, llm, END, edges=[("1", "2", "source"), ("2", "9", "source")]))
    nodes = {n["id"]: n for n in found.definition["nodes"]}
    assert nodes["n2"]["config"] == {"prompt": "Q: {{ inputs.q }} from {{ inputs.sys_user_id }}",
                                     "system": "Reply about {{ '{{' }}topic{{ '}}' }}."}
    assert found.definition["outputs"] == {"out": "{{ n2.output }}"}
    assert found.definition["inputs"]["sys_user_id"] == {"type": "string", "default": ""}
    assert not validate_flow(FlowDefinition.decode(found.definition), agents=(), max_nodes=100)
    assert (found.imported, found.nodes) == (3, 3)


def test_old_conditions_branch_true_and_false_and_code_calls_main():
    cond = ("2", {"type": "if-else", "logical_operator": "or", "conditions": [
        {"variable_selector": ["1", "q"], "comparison_operator": "contains", "value": "x"},
        {"variable_selector": ["1", "q"], "comparison_operator": "empty", "value": ""}]})
    code = ("3", {"type": "code", "code_language": "python3", "code": "def main(a):\n    return {'r': a}",
                  "variables": [{"variable": "a", "value_selector": ["1", "q"]}]})
    end = ("9", {"type": "end", "outputs": [{"variable": "r", "value_selector": ["3", "r"]}]})
    found = from_dify(app(START, cond, code, end, edges=[("1", "2", "source"), ("2", "3", "true"),
                                                         ("2", "9", "false"), ("3", "9", "source")]))
    nodes = {n["id"]: n for n in found.definition["nodes"]}
    assert nodes["n2"]["config"]["expression"] == '(string(inputs.q).contains("x")) || (size(inputs.q) == 0)'
    assert nodes["n3"]["config"]["code"].endswith("result = main(a=inputs['q'])\n")
    assert {(e["source"], e.get("branch")) for e in found.definition["edges"]} >= {("n2", "true"), ("n2", "false")}
    assert found.definition["outputs"] == {"r": "{{ n3.output.r }}"}
    assert not validate_flow(FlowDefinition.decode(found.definition), agents=(), max_nodes=100)


def test_a_node_without_a_counterpart_is_refused_naming_it():
    tool = ("2", {"type": "tool", "title": "Search"})
    data = app(START, tool, END, edges=[("1", "2", "source"), ("2", "9", "source")])
    with pytest.raises(DifyError) as caught:
        from_dify(data)
    assert (caught.value.node_id, caught.value.node_type) == ("2", "tool") and "Search" in str(caught.value)
    assert dify_coverage(data) == (2, 3)
    js = ("2", {"type": "code", "code_language": "javascript", "code": "function main() {}"})
    with pytest.raises(DifyError, match="javascript"):
        from_dify(app(START, js, END, edges=[("1", "2", "source"), ("2", "9", "source")]))
    assert not is_dify({"name": "a foreman flow", "nodes": []})


@pytest.mark.parametrize("name", ["translation_workflow.yml", "runLLMCode.yml", "Artifact.yml", "xiashuo_v2.yml",
                                  "handwritten_nodes.yml"])
def test_the_kept_files_translate_into_valid_flows(name):
    found = from_dify(load_yaml((HERE / name).read_bytes()))
    assert found.imported == found.nodes
    assert not validate_flow(FlowDefinition.decode(found.definition), agents=(), max_nodes=1000)
