"""What the service calls to take a definition (`agents.flows.Read.of`): a body or a file in any
accepted form, one error type whose subclasses keep the contract's codes and sentences, the version's
identity; and a definition written out (`write_definition`). The routes over HTTP:
tests/rounds/test_flow_versions.py and tests/rounds/test_flow_rounds.py."""

from __future__ import annotations

import hashlib
import json
from typing import Any

import pytest

from agents.flows import DefinitionError, FlowDefinition, Read, canonical_json, write_definition

FLOW: dict[str, Any] = {
    "name": "greet", "inputs": {"who": {"type": "string"}},
    "nodes": [{"id": "start", "type": "start"}, {"id": "t", "type": "template", "config": {"text": "hi {{ inputs.who }}"}},
              {"id": "end", "type": "end"}],
    "edges": [{"source": "start", "target": "t"}, {"source": "t", "target": "end"}],
    "outputs": {"text": "{{ t.output }}"},
}
DIFY: dict[str, Any] = {
    "kind": "app", "version": "0.1.5", "app": {"name": "d", "mode": "workflow"},
    "workflow": {"graph": {"nodes": [
        {"id": "1", "type": "custom", "data": {"type": "start", "variables": [
            {"variable": "q", "type": "text-input", "required": True}]}},
        {"id": "9", "type": "custom", "data": {"type": "end", "outputs": [
            {"variable": "out", "value_selector": ["1", "q"]}]}}],
        "edges": [{"source": "1", "target": "9", "sourceHandle": "source"}]}},
}


def read(sent: Any, media: str | None = None) -> Read:
    return Read.of(sent, agents=("writer",), max_nodes=50, media=media)


def refusal(sent: Any, media: str | None = None) -> DefinitionError:
    with pytest.raises(DefinitionError) as caught:
        read(sent, media)
    return caught.value


def test_a_body_a_yaml_file_and_a_json_file_are_one_version() -> None:
    body = read(FLOW)
    assert (body.source, body.nodes, body.imported) == ("foreman", 3, 3)
    version = body.version
    assert version.canonical == canonical_json(version.definition).decode()
    assert version.hash == hashlib.sha256(version.canonical.encode()).hexdigest()
    as_yaml = read(write_definition(version.definition, "yaml").encode(), "application/yaml")
    as_json = read(json.dumps(FLOW, indent=2).encode(), "application/json")
    assert as_yaml.version == as_json.version == version
    assert write_definition(version.definition, "json") == version.canonical
    assert FlowDefinition.decode(version.canonical) == version.definition


def test_a_dify_app_is_translated_and_counted() -> None:
    found = read(json.dumps(DIFY).encode(), "application/json")
    assert (found.source, found.nodes, found.imported) == ("dify", 2, 2)
    assert found.version.definition.name == "d"


def test_a_shape_error_says_where_with_the_flows_code() -> None:
    error = refusal({"name": "x", "nodes": [{"id": 1, "type": "end"}]})
    assert error.code == "invalid_flow"
    assert error.detail == "The flow definition is not valid: Expected `str`, got `int` (at $.nodes[0].id)."
    assert error.extra == {"problems": [{"nodeId": None, "code": "bad_shape",
                                         "message": "Expected `str`, got `int` (at $.nodes[0].id)"}]}
    assert refusal([FLOW]).code == "invalid_flow"  # not a mapping: a shape error, not a crash


def test_every_problem_is_listed_and_five_are_named() -> None:
    nodes = [{"id": f"a{i}", "type": "agent", "config": {"agent": "nobody", "instructions": "x"}} for i in range(7)]
    error = refusal({"name": "x", "nodes": nodes})
    assert error.code == "invalid_flow" and len(error.extra["problems"]) >= 7
    assert error.detail.startswith(f"The flow has {len(error.extra['problems'])} problems: ")
    assert error.detail.endswith("more). Nothing was saved.")
    assert {"nodeId": "a0", "code": "unknown_agent"} in [
        {k: p[k] for k in ("nodeId", "code")} for p in error.extra["problems"]]


@pytest.mark.parametrize(("raw", "media", "detail", "extra"), [
    (b"x" * (2 * 1024 * 1024 + 1), "application/yaml", "The file is over 2 MiB.", {}),
    (b"\xff\xfe", "application/yaml", "The file is not UTF-8 text.", {}),
    (b"name: a\x00", "application/yaml", "The file holds a NUL character.", {}),
    (b"name: a\nnodes:\n  - id: [\n", "application/yaml", None, {"line": 4}),
    (b'{"name": ', "application/json", None, {"line": 2}),  # the end of the text, after the last line
])
def test_a_file_that_is_no_definition_is_a_bad_import(raw: bytes, media: str, detail: str | None,
                                                       extra: dict[str, Any]) -> None:
    error = refusal(raw, media)
    assert error.code == "bad_import" and error.extra == extra
    if detail is not None:
        assert error.detail == detail
    else:
        kind = "JSON" if media.endswith("json") else "YAML"
        assert error.detail.startswith(f"The file is not a flow's {kind}: not YAML: ")


def test_a_dify_node_without_a_counterpart_names_it() -> None:
    app = json.loads(json.dumps(DIFY))
    app["workflow"]["graph"]["nodes"].insert(1, {"id": "2", "type": "custom", "data": {"type": "tool", "title": "S"}})
    error = refusal(json.dumps(app).encode(), "application/json")
    assert error.code == "dify_unsupported" and error.extra == {"nodeId": "2", "nodeType": "tool"}
    assert error.detail.startswith("The Dify app cannot be imported: ")
    assert error.detail.endswith(". Nothing was saved.")
