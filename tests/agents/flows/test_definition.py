"""The definition's shape: camelCase decoding, typed configs, and errors that name the field at fault."""

from __future__ import annotations

from typing import Any

import msgspec
import pytest

from agents.flows.definition import (
    ConditionConfig,
    FlowDefinition,
    FlowRefConfig,
    HttpConfig,
    LoopConfig,
    MapConfig,
    Node,
    config_of,
)
from agents.flows.errors import ConfigError, DefinitionError

RAW: dict[str, Any] = {
    "name": "digest", "description": "d",
    "inputs": {"word": {"type": "string", "description": "w"}, "n": {"type": "number", "default": 2}},
    "nodes": [
        {"id": "start", "type": "start"},
        {"id": "m", "type": "map", "retry": {"max": 2, "delaySeconds": 0.5}, "timeoutSeconds": 30, "onError": "default",
         "default": [], "config": {"items": "inputs.items", "onItemError": "drop",
                                   "body": {"id": "b", "type": "llm", "config": {"prompt": "{{ item }}"}}}},
    ],
    "edges": [{"source": "start", "target": "m"}],
    "outputs": {"answer": "{{ m.output }}"},
}


def test_decodes_the_contracts_camel_case_shape() -> None:
    defn = FlowDefinition.decode(msgspec.json.encode(RAW))
    assert defn == FlowDefinition.decode(RAW)
    node = defn.nodes[1]
    assert node.retry is not None and node.retry.delay_seconds == 0.5 and node.timeout_seconds == 30
    assert node.on_error == "default" and node.default == []
    assert defn.inputs["word"].default is msgspec.UNSET and defn.inputs["n"].default == 2
    config = config_of(node)
    assert isinstance(config, MapConfig) and config.concurrency == 4 and config.on_item_error == "drop"
    assert isinstance(config.body, Node) and config.body.id == "b"


@pytest.mark.parametrize(("raw", "path"), [
    ({"name": "x", "nodes": [{"id": 1, "type": "end"}]}, "$.nodes[0].id"),
    ({"name": "x", "nodez": []}, "$"),
    ({"nodes": []}, "$"),
    ({"name": "x", "inputs": {"a": {"type": "str"}}}, "$.inputs[...].type"),
    ({"name": "x", "nodes": [{"id": "a", "type": "end", "onError": "explode"}]}, "$.nodes[0].onError"),
    ({"name": "x", "nodes": [{"id": "a", "type": "end", "retry": {"max": -1}}]}, "$.nodes[0].retry.max"),
])
def test_a_shape_error_names_its_path(raw: dict[str, Any], path: str) -> None:
    with pytest.raises(DefinitionError) as caught:
        FlowDefinition.decode(raw)
    assert caught.value.path == path


def test_not_json_is_a_definition_error() -> None:
    with pytest.raises(DefinitionError, match="not JSON"):
        FlowDefinition.decode(b'{"name": ')


def test_json_nested_without_end_is_a_definition_error() -> None:
    deep = b'{"name": "x", "nodes": [{"id": "a", "type": "end", "default": ' + b"[" * 100_000 + b"]" * 100_000 + b"}]}"
    with pytest.raises(DefinitionError, match="nested too deeply"):
        FlowDefinition.decode(deep)


@pytest.mark.parametrize(("config", "path"), [
    ({"items": "x"}, "config"),  # no body
    ({"items": "x", "body": {"id": "b", "type": "end"}, "concurrency": 0}, "config.concurrency"),
    ({"items": "x", "body": {"id": "b"}}, "config.body"),
    ({"items": 3, "body": {"id": "b", "type": "end"}}, "config.items"),
])
def test_a_config_error_names_its_node_and_field(config: dict[str, Any], path: str) -> None:
    with pytest.raises(ConfigError) as caught:
        config_of(Node(id="m", type="map", config=config))
    assert (caught.value.node_id, caught.value.path, caught.value.code) == ("m", path, "bad_config")


def test_configs_per_type() -> None:
    loop = config_of(Node(id="l", type="loop", config={"body": {"id": "b", "type": "end"}, "until": "true",
                                                         "maxIterations": 3}))
    assert isinstance(loop, LoopConfig) and loop.max_iterations == 3
    cases = config_of(Node(id="c", type="condition", config={"cases": [{"name": "big", "expression": "true"}]}))
    assert isinstance(cases, ConditionConfig) and cases.branches() == ["big", "default"]
    assert config_of(Node(id="c", type="condition", config={"expression": "true"})).branches() == ["true", "false"]  # type: ignore[union-attr]
    http = config_of(Node(id="h", type="http", config={"url": "https://x", "body": {"a": 1}}))
    assert isinstance(http, HttpConfig) and http.method == "GET" and http.fail_on_status
    assert config_of(Node(id="f", type="flow", config={"flowId": 3, "version": "draft"})) == FlowRefConfig(
        flow_id=3, version="draft")
    with pytest.raises(ConfigError, match="unknown node type") as caught:
        config_of(Node(id="x", type="teleport"))
    assert caught.value.code == "unknown_type"


def test_structs_are_frozen() -> None:
    defn = FlowDefinition(name="x")
    with pytest.raises(AttributeError):
        defn.name = "y"  # type: ignore[misc]
