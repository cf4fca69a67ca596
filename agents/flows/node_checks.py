"""What a node's config can be wrong in beyond its struct's types (agents, code syntax, actions, cases, a
JSON schema), and whether a sub-flow it runs is there and never runs the flow being saved: the checks
`agents.flows.validate` runs per node, each problem a `Problem` with the node's id and a stable code."""

from __future__ import annotations

import ast
from collections import deque
from collections.abc import Callable, Collection, Iterable

import jsonschema
import msgspec

from agents.flows.definition import (
    ERROR_BRANCH,
    AgentConfig,
    CodeConfig,
    ConditionConfig,
    FlowRefConfig,
    HumanConfig,
    LlmConfig,
    Node,
    NodeConfig,
)

FlowVersion = int | str | None  # a version number, "draft", or None for the latest published
FlowExists = Callable[[int, FlowVersion], bool]
SubflowEdges = Callable[[int, FlowVersion], Iterable[tuple[int, FlowVersion]]]


class Problem(msgspec.Struct, frozen=True, rename="camel"):
    """One thing wrong with a definition: the node it is about (None: the flow itself), a stable code, a sentence."""

    node_id: str | None
    code: str
    message: str


def check_config(node: Node, config: NodeConfig, agents: Collection[str], problems: list[Problem]) -> None:
    """What a config's own struct cannot say: agents, code syntax, actions, cases, a JSON schema."""
    if isinstance(config, AgentConfig) and config.agent not in agents:
        problems.append(Problem(node.id, "unknown_agent", f"no agent is called {config.agent!r}"))
    elif isinstance(config, CodeConfig):
        try:
            ast.parse(config.code, mode="exec")
        except SyntaxError as error:
            problems.append(Problem(node.id, "code_syntax", f"config.code line {error.lineno}: {error.msg}"))
    elif isinstance(config, HumanConfig):
        _check_names(node, "config.actions", config.actions, problems)
        if config.default_action is not None and config.default_action not in config.actions:
            problems.append(Problem(node.id, "bad_config", f"config.defaultAction {config.default_action!r} is not"
                                    f" one of the actions ({', '.join(config.actions)})"))
    elif isinstance(config, ConditionConfig) and config.cases is not None:
        _check_names(node, "config.cases", [case.name for case in config.cases], problems)
        if any(case.name in ("default", ERROR_BRANCH) for case in config.cases):
            problems.append(Problem(node.id, "bad_config", "config.cases: `default` and `error` are reserved branch"
                                    " names"))
    elif isinstance(config, LlmConfig) and config.schema is not None:
        try:
            jsonschema.validators.validator_for(config.schema).check_schema(config.schema)
        except jsonschema.SchemaError as error:
            problems.append(Problem(node.id, "bad_config", f"config.schema is not a JSON schema: {error.message}"))


def _check_names(node: Node, field: str, names: list[str], problems: list[Problem]) -> None:
    if len(set(names)) != len(names):
        problems.append(Problem(node.id, "bad_config", f"{field}: a name appears twice"))
    if any(not name.strip() for name in names):
        problems.append(Problem(node.id, "bad_config", f"{field}: an empty name"))


def check_subflow(node: Node, config: FlowRefConfig, flow_id: int | None, flow_exists: FlowExists | None,
                   subflow_edges: SubflowEdges | None, problems: list[Problem]) -> None:
    """The sub-flow is there, and nothing it runs (however deep) runs the flow being saved."""
    if flow_exists is not None and not flow_exists(config.flow_id, config.version):
        which = "the latest" if config.version is None else config.version
        problems.append(Problem(node.id, "unknown_flow", f"no flow {config.flow_id} (version {which})"))
        return
    if flow_id is None:
        return
    if config.flow_id == flow_id:
        problems.append(Problem(node.id, "subflow_cycle", "the flow runs itself"))
        return
    if subflow_edges is None:
        return
    start: tuple[int, FlowVersion] = (config.flow_id, config.version)
    seen = {start}
    queue: deque[tuple[tuple[int, FlowVersion], list[int]]] = deque([(start, [config.flow_id])])
    while queue:
        (ref_id, version), path = queue.popleft()
        for ref in subflow_edges(ref_id, version):
            if ref[0] == flow_id:
                chain = " -> ".join(str(p) for p in [flow_id, *path, flow_id])
                problems.append(Problem(node.id, "subflow_cycle", f"sub-flows run this flow again: {chain}"))
                return
            if ref not in seen:
                seen.add(ref)
                queue.append((ref, [*path, ref[0]]))
