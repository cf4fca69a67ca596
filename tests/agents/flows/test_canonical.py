"""Canonical JSON, its hash, YAML in and out, and the published JSON Schema."""

from __future__ import annotations

import json
from typing import Any

import jsonschema
import pytest

from agents.flows.canonical import canonical_json, definition_hash, dump_yaml, load_yaml
from agents.flows.definition import FlowDefinition
from agents.flows.errors import YamlError

RAW: dict[str, Any] = {
    "name": "digest", "inputs": {"word": {"type": "string"}},
    "nodes": [
        {"id": "start", "type": "start"},
        {"id": "m", "type": "map", "config": {"items": "inputs.items", "body": {
            "id": "b", "type": "loop", "config": {"until": "iteration > 1", "maxIterations": 2,
                                                  "body": {"id": "c", "type": "llm", "config": {"prompt": "é {{ item }}"}}}}}},
    ],
    "edges": [{"source": "start", "target": "m"}],
    "outputs": {"answer": "{{ m.output }}"},
}


def _reordered(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _reordered(value[k]) for k in reversed(list(value))}
    if isinstance(value, list):
        return [_reordered(v) for v in value]
    return value


def test_the_hash_ignores_key_order_and_whitespace() -> None:
    a = FlowDefinition.decode(json.dumps(RAW).encode())
    b = FlowDefinition.decode(json.dumps(_reordered(RAW), indent=4).encode())
    assert canonical_json(a) == canonical_json(b) and definition_hash(a) == definition_hash(b)


def test_defaults_are_written_out_so_spelling_one_does_not_change_the_hash() -> None:
    spelled = json.loads(json.dumps(RAW))
    spelled["nodes"][1]["config"] |= {"concurrency": 4, "onItemError": "fail"}
    spelled["nodes"][1]["onError"] = "fail"
    spelled["description"] = ""
    assert definition_hash(FlowDefinition.decode(spelled)) == definition_hash(FlowDefinition.decode(RAW))
    changed = json.loads(json.dumps(RAW))
    changed["nodes"][1]["config"]["body"]["config"]["body"]["config"]["prompt"] = "other"
    assert definition_hash(FlowDefinition.decode(changed)) != definition_hash(FlowDefinition.decode(RAW))


def test_canonical_json_is_compact_sorted_utf8() -> None:
    text = canonical_json(FlowDefinition.decode(RAW))
    assert text.startswith(b'{"description":"","edges":[{"branch":null,"source":"start","target":"m"}]')
    assert "é".encode() in text and b"\\u" not in text and b'": ' not in text and b", " not in text
    assert len(definition_hash(FlowDefinition.decode(RAW))) == 64


def test_yaml_export_then_import_gives_the_same_hash() -> None:
    defn = FlowDefinition.decode(RAW)
    text = dump_yaml(defn)
    assert "concurrency: 4" in text
    assert definition_hash(FlowDefinition.decode(load_yaml(text))) == definition_hash(defn)


@pytest.mark.parametrize(("text", "why", "line"), [
    ("name: x\nedges: []\nnodes:\n  - id: a\n   bad: 1\ndescription: y\n", "not YAML", 5),
    ("- 1\n- 2\n", "mapping", 1),
    ("", "empty", None),
    ("a: " + "[" * 100 + "]" * 100, "nested", 1),
    ("!!python/object/apply:os.system ['true']", "not YAML", 1),
    ("a: &a [x,x,x,x,x,x,x,x,x]\n" + "".join(f"{chr(98 + i)}: &{chr(98 + i)} [" + ",".join([f"*{chr(97 + i)}"] * 9)
                                              + "]\n" for i in range(8)), "aliases", None),
])
def test_bad_yaml_is_refused_with_its_line(text: str, why: str, line: int | None) -> None:
    with pytest.raises(YamlError, match=why) as caught:
        load_yaml(text)
    if line is not None:
        assert caught.value.line == line


def test_the_json_schema_accepts_a_definition_and_ties_configs_to_types() -> None:
    schema = FlowDefinition.json_schema()
    jsonschema.Draft202012Validator.check_schema(schema)
    validator = jsonschema.Draft202012Validator(schema)
    assert list(validator.iter_errors(RAW)) == []
    bad = json.loads(json.dumps(RAW))
    bad["nodes"][1]["config"]["body"]["config"]["body"]["config"]["prompt"] = 3  # an llm's prompt is text
    assert [e.message for e in validator.iter_errors(bad)] == ["3 is not of type 'string'"]
    bad["nodes"][1]["type"] = "teleport"
    assert any("teleport" in e.message for e in validator.iter_errors(bad))
