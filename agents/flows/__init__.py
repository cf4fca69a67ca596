"""Flows: saved workflow definitions (typed nodes and edges), their templates, expressions and validation,
and the engine that runs one (`FlowRunner`, through the journal and effects ports the app implements).

Pure: no I/O and no other `agents` module. The rest of the tree imports this interface, never the
package's modules (`tests/test_layers.py`).
"""

from agents.flows.canonical import canonical_json, definition_hash, dump_yaml, load_yaml
from agents.flows.definition import (
    AgentConfig,
    FlowDefinition,
    FlowRefConfig,
    HttpConfig,
    InputSpec,
    LlmConfig,
    Node,
    decode_definition,
)
from agents.flows.engine import FlowRunner
from agents.flows.errors import DefinitionError, FlowError, YamlError
from agents.flows.runs import (
    Effects,
    FlowJournal,
    FlowLimits,
    FlowResult,
    HumanWait,
    NodeError,
    NodeRun,
    Produced,
)
from agents.flows.schema import definition_json_schema
from agents.flows.validate import Problem
from agents.flows.validate import validate as validate_flow

__all__ = [
    "AgentConfig", "DefinitionError", "Effects", "FlowDefinition", "FlowError", "FlowJournal", "FlowLimits",
    "FlowRefConfig", "FlowResult", "FlowRunner", "HttpConfig", "HumanWait", "InputSpec", "LlmConfig", "Node",
    "NodeError", "NodeRun", "Problem", "Produced", "YamlError", "canonical_json", "decode_definition",
    "definition_hash", "definition_json_schema", "dump_yaml", "load_yaml", "validate_flow",
]
