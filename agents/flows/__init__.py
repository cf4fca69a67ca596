"""Flows: saved workflow definitions (CONTRACT.md "Flows: saved workflows") and the engine that runs one.
Pure: no I/O and no other project module; the rest of the tree imports this interface, never the
package's modules (`tests/test_layers.py`).

- `definition`: the typed definition (msgspec, camelCase), `config_of`, `FlowDefinition.decode`;
- `validate`: every problem at once, with node ids and stable codes (`graph`: its algorithms);
- `templates` (Jinja2's sandbox) and `expressions` (CEL), and `scope`: what both read, and a run's inputs;
- `canonical`: canonical JSON, the hash, YAML (the JSON Schema: `FlowDefinition.json_schema`); `diff`: two definitions compared (`FlowDiff.between`);
- `engine`: `FlowRunner`, which runs a definition through the ports of `runs` (a journal and the effects,
  both the app's); `iteration`: its maps and loops, and `ItemRunner`, where a map's items may run;
  `subflows`: a sub-flow node's run, its paths under the node's;
- `dify`: a Dify DSL app translated into a definition;
- `formats`: what the service calls: a definition read from a body or a file in any accepted form, checked
  and identified (`Read.of`, raising one `DefinitionError`), and written as a file (`write_definition`);
- `errors`: the `FlowError` tree.
"""

from agents.flows.canonical import canonical_json, definition_hash, dump_yaml, load_yaml
from agents.flows.definition import (
    ERROR_BRANCH,
    AgentConfig,
    Edge,
    FlowDefinition,
    FlowRefConfig,
    HttpConfig,
    InputSpec,
    LlmConfig,
    Node,
)
from agents.flows.diff import FlowDiff
from agents.flows.dify import DifyError, DifyImport, from_dify, is_dify, literal
from agents.flows.dify import coverage as dify_coverage
from agents.flows.engine import FlowRunner
from agents.flows.errors import DefinitionError, FlowError, ShapeError, YamlError
from agents.flows.formats import InvalidFlowError, Read, Version, version_of, write_definition
from agents.flows.iteration import ItemRunner
from agents.flows.node_checks import Problem
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
from agents.flows.validate import validate as validate_flow

__all__ = [
    "ERROR_BRANCH", "AgentConfig", "Edge", "DefinitionError", "DifyError", "DifyImport", "dify_coverage", "from_dify", "is_dify", "literal", "FlowDiff", "Effects", "FlowDefinition", "FlowError", "FlowJournal", "FlowLimits",
    "FlowRefConfig", "FlowResult", "FlowRunner", "HttpConfig", "HumanWait", "InputSpec", "ItemRunner", "LlmConfig", "Node",
    "NodeError", "NodeRun", "Problem", "Produced", "YamlError", "canonical_json",
    "definition_hash", "dump_yaml", "load_yaml", "validate_flow",
    "InvalidFlowError", "Read", "ShapeError", "Version", "version_of", "write_definition",
]
