"""A flow's definition (CONTRACT.md "Flows: saved workflows"): typed nodes, edges, inputs and outputs.

The wire shape is camelCase; every struct is frozen and refuses fields it does not know, so a typo in
a saved flow (`maxIteration`) is an error when it is saved, not a default taken silently at run time.
A node's `config` stays a plain mapping on `Node` (its shape depends on `type`) and is decoded into
the type's own struct by `config_of`, which names the field at fault. Its JSON Schema, for editors and
other tools to validate flows with, is `FlowDefinition.json_schema()`.
"""

from __future__ import annotations

import copy
import functools
import re
from collections.abc import Iterator
from typing import Annotated, Any, Final, Literal

import msgspec

from agents.flows.errors import ConfigError, ShapeError

InputType = Literal["string", "number", "boolean", "list", "files"]
OnError = Literal["fail", "continue", "branch", "default"]
OnItemError = Literal["fail", "continue", "drop"]
HttpMethod = Literal["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"]

ERROR_BRANCH: Final = "error"  # the edge a node with `onError: "branch"` takes when it fails
DEFAULT_BRANCH: Final = "default"  # a condition's branch when none of its cases holds

NonNegative = Annotated[float, msgspec.Meta(ge=0)]


class _Wire(msgspec.Struct, rename="camel", frozen=True, forbid_unknown_fields=True, kw_only=True):
    """camelCase on the wire, immutable, unknown fields refused."""


class InputSpec(_Wire, frozen=True):
    """One declared input of a flow; `default` absent means the input is required."""

    type: InputType
    default: Any | msgspec.UnsetType = msgspec.UNSET
    description: str = ""


class RetryPolicy(_Wire, frozen=True):
    """How often a failed node is tried again (`max` more times), waiting `delaySeconds`, doubled each time."""

    max: Annotated[int, msgspec.Meta(ge=0, le=100)] = 0
    delay_seconds: NonNegative = 1.0


class Edge(_Wire, frozen=True):
    """`source` runs before `target`; with a `branch`, only when `source` takes that branch."""

    source: str
    target: str
    branch: str | None = None


class Node(_Wire, frozen=True):
    """One step of a flow; `config` is decoded by `config_of` according to `type`."""

    id: str
    type: str
    name: str = ""
    config: dict[str, Any] = {}
    retry: RetryPolicy | None = None
    timeout_seconds: Annotated[float, msgspec.Meta(gt=0)] | None = None
    on_error: OnError = "fail"
    default: Any = None


class FlowDefinition(_Wire, frozen=True):
    """A saved workflow: a graph of typed nodes from one `start`, and the templates of its outputs."""

    name: str
    description: str = ""
    inputs: dict[str, InputSpec] = {}
    nodes: list[Node] = []
    edges: list[Edge] = []
    outputs: dict[str, str] = {}

    @classmethod
    def decode(cls, raw: bytes | str | dict[str, Any]) -> FlowDefinition:
        """A definition from JSON (bytes or text) or already parsed data (a mapping from YAML, say; anything
        else is a `ShapeError` saying what it is)."""
        try:
            if isinstance(raw, bytes | str):
                return msgspec.json.decode(raw, type=cls)
            return msgspec.convert(raw, cls)
        except msgspec.ValidationError as error:
            path, message = _split(error, "$")
            raise ShapeError(path, message) from None
        except msgspec.DecodeError as error:
            raise ShapeError("$", f"not JSON: {error}") from None
        except RecursionError:
            raise ShapeError("$", "nested too deeply") from None

    @classmethod
    def json_schema(cls) -> dict[str, Any]:
        """The JSON Schema (2020-12) of a flow's definition, configs tied to node types (`_schema`)."""
        return copy.deepcopy(_schema())


# --- per-type configs -------------------------------------------------------------------------


class StartConfig(_Wire, frozen=True):
    """The flow's entry; its output is the flow's inputs."""


class EndConfig(_Wire, frozen=True):
    """A flow's exit; the flow's `outputs` templates are rendered when the run ends."""


class AgentConfig(_Wire, frozen=True):
    """A registered agent's task, as a plan's task: `inputs` are file ids or templates naming files."""

    agent: str
    instructions: str
    inputs: list[str] = []
    outputs: list[str] = []


class LlmConfig(_Wire, frozen=True):
    """One model call: `prompt` and `system` are templates; `schema` asks for structured output."""

    prompt: str
    system: str | None = None
    schema: dict[str, Any] | None = None


class Case(_Wire, frozen=True):
    """A named branch of a condition, taken when its expression holds (the first that holds wins)."""

    name: str
    expression: str


class ConditionConfig(_Wire, frozen=True):
    """Either one `expression` (branches "true"/"false") or named `cases` (plus "default")."""

    expression: str | None = None
    cases: list[Case] | None = None

    def branches(self) -> list[str]:
        """The branch names this condition can take."""
        if self.cases is not None:
            return [case.name for case in self.cases] + [DEFAULT_BRANCH]
        return ["true", "false"]


class MapConfig(_Wire, frozen=True):
    """`body` runs once per item of `items` (an expression giving a list); the output is the results in order."""

    items: str
    body: Node
    concurrency: Annotated[int, msgspec.Meta(ge=1, le=64)] = 4
    on_item_error: OnItemError = "fail"


class LoopConfig(_Wire, frozen=True):
    """`body` repeats until `until` holds, at most `maxIterations` times; the output is the last body's."""

    body: Node
    until: str
    max_iterations: Annotated[int, msgspec.Meta(ge=1)]


class HumanConfig(_Wire, frozen=True):
    """A message to the user (a template) and the actions they may take, each a branch."""

    message: str
    actions: Annotated[list[str], msgspec.Meta(min_length=1)]
    timeout_seconds: Annotated[float, msgspec.Meta(gt=0)] | None = None
    default_action: str | None = None


class TemplateConfig(_Wire, frozen=True):
    """Renders `text`, a template; the text is the output."""

    text: str


class CodeConfig(_Wire, frozen=True):
    """Python that reads `inputs` and `nodes` and sets `result` (run in the sandbox of its own issue)."""

    code: str


class HttpConfig(_Wire, frozen=True):
    """A request to an operator-allowed host; `url`, header values and a string `body` are templates."""

    url: str
    method: HttpMethod = "GET"
    headers: dict[str, str] = {}
    body: str | dict[str, Any] | None = None
    timeout_seconds: Annotated[float, msgspec.Meta(gt=0)] | None = None
    fail_on_status: bool = True


class FlowRefConfig(_Wire, frozen=True):
    """Another flow run as one node: by id and version (none: the latest published; "draft": the draft)."""

    flow_id: int
    version: Annotated[int, msgspec.Meta(ge=1)] | Literal["draft"] | None = None


NodeConfig = (AgentConfig | LlmConfig | ConditionConfig | MapConfig | LoopConfig | HumanConfig | TemplateConfig
              | CodeConfig | HttpConfig | FlowRefConfig | StartConfig | EndConfig)

CONFIG_TYPES: Final[dict[str, type[NodeConfig]]] = {
    "start": StartConfig,
    "end": EndConfig,
    "agent": AgentConfig,
    "llm": LlmConfig,
    "condition": ConditionConfig,
    "map": MapConfig,
    "loop": LoopConfig,
    "human": HumanConfig,
    "template": TemplateConfig,
    "code": CodeConfig,
    "http": HttpConfig,
    "flow": FlowRefConfig,
}
NODE_TYPES: Final = frozenset(CONFIG_TYPES)

def texts_of(config: NodeConfig) -> Iterator[tuple[str, str, bool]]:
    """Each template (False) and expression (True) a config holds, with its field path (`config.prompt`).

    A body's texts are the body's own: `config_of(config.body)` has them."""
    if isinstance(config, AgentConfig):
        yield "config.instructions", config.instructions, False
        yield from ((f"config.inputs[{i}]", text, False) for i, text in enumerate(config.inputs))
    elif isinstance(config, LlmConfig):
        yield "config.prompt", config.prompt, False
        if config.system is not None:
            yield "config.system", config.system, False
    elif isinstance(config, ConditionConfig):
        if config.expression is not None:
            yield "config.expression", config.expression, True
        for i, case in enumerate(config.cases or ()):
            yield f"config.cases[{i}].expression", case.expression, True
    elif isinstance(config, MapConfig):
        yield "config.items", config.items, True
    elif isinstance(config, LoopConfig):
        yield "config.until", config.until, True
    elif isinstance(config, HumanConfig):
        yield "config.message", config.message, False
    elif isinstance(config, TemplateConfig):
        yield "config.text", config.text, False
    elif isinstance(config, HttpConfig):
        yield "config.url", config.url, False
        yield from ((f"config.headers.{k}", v, False) for k, v in config.headers.items())
        stack: list[tuple[str, Any]] = [("config.body", config.body)]
        while stack:
            path, value = stack.pop()
            if isinstance(value, str):
                yield path, value, False
            elif isinstance(value, dict):
                stack.extend((f"{path}.{k}", v) for k, v in value.items())
            elif isinstance(value, list):
                stack.extend((f"{path}[{i}]", v) for i, v in enumerate(value))


_AT = re.compile(r"^(?P<message>.*?)(?: - at `\$(?P<path>[^`]*)`)?$", re.DOTALL)


def _split(error: msgspec.MsgspecError, prefix: str) -> tuple[str, str]:
    """msgspec's message and path (`$.nodes[2].id`), the path rooted at `prefix`."""
    match = _AT.match(str(error))
    assert match is not None  # the pattern matches any text
    return prefix + (match["path"] or ""), match["message"]


def config_of(node: Node) -> NodeConfig:
    """`node.config` decoded as its type's config; a `ConfigError` names the field at fault."""
    kind = CONFIG_TYPES.get(node.type)
    if kind is None:
        raise ConfigError(node.id, "type", f"unknown node type {node.type!r}", code="unknown_type")
    try:
        config = msgspec.convert(node.config, kind)
    except msgspec.ValidationError as error:
        path, message = _split(error, "config")
        raise ConfigError(node.id, path, message) from None
    if isinstance(config, ConditionConfig) and (config.expression is None) == (config.cases is None):
        raise ConfigError(node.id, "config", "a condition has either `expression` or `cases`, not both or neither")
    return config


SCHEMA_DIALECT: Final = "https://json-schema.org/draft/2020-12/schema"


@functools.cache
def _schema() -> dict[str, Any]:
    """msgspec writes the structs' schema; a node's `config` is then tied to its `type` with one `if`/`then`
    per type (JSON Schema 2020-12), so an editor that reads `"type": "map"` checks `config` against the
    map's shape. Semantic rules (edges to existing nodes, no cycle, variables defined) are the validator's:
    a schema cannot say them."""
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
