"""The JSON Schema of a flow's definition, for editors and other tools to validate flows with.

msgspec writes the structs' schema; a node's `config` is then tied to its `type` with one
`if`/`then` per type (JSON Schema 2020-12), so an editor that reads `"type": "map"` checks `config`
against the map's shape. Semantic rules (edges to existing nodes, no cycle, variables defined)
are the validator's: a schema cannot say them.
"""

from __future__ import annotations

import copy
import functools
from typing import Any, Final

import msgspec

from agents.flows.definition import CONFIG_TYPES, FlowDefinition

SCHEMA_DIALECT: Final = "https://json-schema.org/draft/2020-12/schema"


@functools.cache
def _schema() -> dict[str, Any]:
    names = {kind: f"{kind.capitalize()}NodeConfig" for kind in CONFIG_TYPES}
    (root, *configs), defs = msgspec.json.schema_components([FlowDefinition, *CONFIG_TYPES.values()],
                                                            ref_template="#/$defs/{name}")
    for kind, ref in zip(CONFIG_TYPES, configs, strict=True):
        # The config structs are named for Python (`LlmConfig`); the published names say the node type.
        name = ref["$ref"].rsplit("/", 1)[1]
        defs[names[kind]] = defs.pop(name)
    text = msgspec.json.encode(defs).decode()
    for kind, ref in zip(CONFIG_TYPES, configs, strict=True):
        text = text.replace(f'"{ref["$ref"]}"', f'"#/$defs/{names[kind]}"')
    defs = msgspec.json.decode(text)
    node = defs["Node"]
    node["properties"]["type"] = {"enum": sorted(CONFIG_TYPES), "description": "The node's type."}
    node["allOf"] = [{"if": {"properties": {"type": {"const": kind}}, "required": ["type"]},
                      "then": {"properties": {"config": {"$ref": f"#/$defs/{names[kind]}"}}}}
                     for kind in CONFIG_TYPES]
    return {"$schema": SCHEMA_DIALECT, "title": "Foreman flow definition", **root, "$defs": defs}


def definition_json_schema() -> dict[str, Any]:
    """The JSON Schema (2020-12) of a flow's definition, configs tied to node types."""
    return copy.deepcopy(_schema())
