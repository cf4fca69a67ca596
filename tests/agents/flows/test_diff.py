"""The difference between two definitions, field by field, defaults not counted as changes."""

from __future__ import annotations

import copy
from typing import Any

import msgspec

from agents.flows.definition import FlowDefinition
from agents.flows.diff import FieldChange, FlowDiff

RAW: dict[str, Any] = {
    "name": "digest", "inputs": {"word": {"type": "string"}},
    "nodes": [{"id": "start", "type": "start"},
              {"id": "m", "type": "map", "config": {"items": "inputs.items", "body": {
                  "id": "b", "type": "llm", "config": {"prompt": "{{ item }}"}}}},
              {"id": "t", "type": "template", "config": {"text": "x"}}],
    "edges": [{"source": "start", "target": "m"}, {"source": "m", "target": "t"}],
    "outputs": {"answer": "{{ t.output }}"},
}


def test_the_same_flow_with_defaults_spelled_out_has_no_difference() -> None:
    spelled = copy.deepcopy(RAW)
    spelled["nodes"][1]["config"]["concurrency"] = 4
    assert FlowDiff.between(FlowDefinition.decode(RAW), FlowDefinition.decode(spelled)).empty


def test_every_kind_of_change_is_listed_with_its_fields() -> None:
    after = copy.deepcopy(RAW)
    after["description"] = "now described"
    after["nodes"][1]["config"]["body"]["config"]["prompt"] = "Summarise {{ item }}"
    after["nodes"][1]["config"]["concurrency"] = 8
    after["nodes"].pop()  # t removed
    after["nodes"].append({"id": "e", "type": "end"})
    after["edges"] = [{"source": "start", "target": "m"}, {"source": "m", "target": "e"}]
    after["inputs"]["word"]["default"] = "fox"
    after["inputs"]["n"] = {"type": "number"}
    after["outputs"] = {"answer": "{{ m.output }}"}
    changes = FlowDiff.between(FlowDefinition.decode(RAW), FlowDefinition.decode(after))
    assert changes.flow == [FieldChange("description", "", "now described")]
    assert (changes.nodes.added, changes.nodes.removed) == (["e"], ["t"])
    [node] = changes.nodes.changed
    assert node.key == "m" and node.fields == [
        FieldChange("config.body.config.prompt", "{{ item }}", "Summarise {{ item }}"),
        FieldChange("config.concurrency", 4, 8)]
    assert (changes.edges.added, changes.edges.removed, changes.edges.changed) == (["m -> e"], ["m -> t"], [])
    assert changes.inputs.added == ["n"]
    assert changes.inputs.changed[0].fields == [FieldChange("default", None, "fox")]
    assert changes.outputs.changed[0].fields == [FieldChange("template", "{{ t.output }}", "{{ m.output }}")]
    wire = msgspec.json.decode(msgspec.json.encode(changes))
    assert wire["flow"] == [{"field": "description", "from": "", "to": "now described"}]
