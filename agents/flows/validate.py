"""Validation of a flow's definition: every problem at once, each with its node id and a stable code.

Linear and iterative: inline bodies are walked with a stack, the graph by `agents.flows.graph`, and
"does this node run before that one" is one bit of a big-int ancestor set. bench/flow_validation.py:
a 500-node chain of templates in 23 ms of CPU, 5,000 nodes in 237 ms (x10.3: linear), a 5,000-node
cycle in 228 ms; nearly all of it is Jinja parsing each template once.

Codes: too_many_nodes, missing_start, too_many_starts, bad_id, duplicate_id, unknown_type,
bad_config, unknown_agent, map_body_not_a_node, loop_body_not_a_node, loop_without_max,
edge_to_nowhere, bad_branch, cycle, unreachable, undefined_variable, bad_expression, bad_template,
code_syntax, unknown_flow, subflow_cycle, bad_input.
"""

from __future__ import annotations

import re
from collections import deque
from collections.abc import Collection
from typing import Any, Final

import msgspec

from agents.flows import expressions, graph, templates
from agents.flows.definition import (
    ERROR_BRANCH,
    ConditionConfig,
    FlowDefinition,
    FlowRefConfig,
    LoopConfig,
    MapConfig,
    Node,
    NodeConfig,
    config_of,
    texts_of,
)
from agents.flows.errors import ConfigError, TemplateError
from agents.flows.node_checks import FlowExists, FlowVersion, Problem, SubflowEdges, check_config, check_subflow

IDENTIFIER: Final = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
# Names a node id cannot take: the scope's own names, and words CEL or Jinja2 read as keywords.
RESERVED: Final = frozenset({
    "inputs", "item", "index", "iteration", "nodes", "result", "loop", "self", "super", "varargs", "kwargs",
    "true", "false", "null", "none", "True", "False", "None", "in", "is", "and", "or", "not", "if", "else",
    "for", "as", "break", "const", "continue", "function", "import", "let", "namespace", "package", "return",
    "var", "void", "while", "has", "size", "int", "uint", "double", "string", "bytes", "bool", "list", "map",
    "type", "dyn", "range", "dict", "lipsum", "cycler", "joiner",
})
_INPUT_TYPES: Final = {"string": (str,), "number": (int, float), "boolean": (bool,), "list": (list,),
                       "files": (list,)}


class _Place(msgspec.Struct):
    """Where a node sits: its top-level ancestor's index and the map/loop bodies around it."""

    node: Node
    top: int  # index in defn.nodes of the top-level node this one is (or is inside)
    in_map: bool = False
    in_loop: bool = False
    own: frozenset[str] = frozenset()  # body ids its templates may also name (a loop's `until`)


def validate(defn: FlowDefinition, *, agents: Collection[str], max_nodes: int, flow_id: int | None = None,
             flow_exists: FlowExists | None = None, subflow_edges: SubflowEdges | None = None) -> list[Problem]:
    """Every problem in `defn`, in the definition's order; an empty list means it is valid.

    `agents` are the registered agents' names; `flow_exists(id, version)` says whether a sub-flow
    is there; `subflow_edges(id, version)` lists the sub-flows that flow uses, for finding a cycle
    back to `flow_id` (the flow being saved, None for a new one).
    """
    count = _count_nodes(defn, max_nodes)
    if count > max_nodes:
        return [Problem(None, "too_many_nodes", f"over {max_nodes} nodes ({count} counted, bodies included)")]
    problems: list[Problem] = []
    places = _places(defn, problems)
    top_ids: dict[str, int] = {}
    for i, node in enumerate(defn.nodes):
        top_ids.setdefault(node.id, i)  # a duplicate id is reported; edges name the first
    _check_ids(places, problems)
    _check_inputs(defn, problems)
    before = _check_graph(defn, top_ids, problems)
    all_ids = {place.node.id for place in places}
    for place in places:
        config = _config(place.node, problems)
        if config is None:
            continue
        for field, text, is_expr in texts_of(config):
            _check_text(place, field, text, is_expr, defn, top_ids, all_ids, before, problems)
        check_config(place.node, config, agents, problems)
        if isinstance(config, FlowRefConfig):
            check_subflow(place.node, config, flow_id, flow_exists, subflow_edges, problems)
    end = _Place(Node(id="", type="end"), top=-1)
    for name, text in defn.outputs.items():
        _check_text(end, f"outputs.{name}", text, False, defn, top_ids, all_ids, None, problems)
    order = {place.node.id: i for i, place in reversed(list(enumerate(places)))}
    problems.sort(key=lambda p: -1 if p.node_id is None else order.get(p.node_id, len(order)))
    return problems


def flow_refs(defn: FlowDefinition) -> list[tuple[int, FlowVersion]]:
    """The sub-flows `defn` runs (`flow` nodes, bodies included), each once: what `subflow_edges`
    answers for a stored flow, so the store can keep them beside it and answer without decoding."""
    found: dict[tuple[int, FlowVersion], None] = {}
    stack = list(reversed(defn.nodes))
    while stack:
        node = stack.pop()
        try:
            config = config_of(node)
        except ConfigError:
            continue
        if isinstance(config, FlowRefConfig):
            found[config.flow_id, config.version] = None
        elif isinstance(config, MapConfig | LoopConfig):
            stack.append(config.body)
    return list(found)


def _count_nodes(defn: FlowDefinition, limit: int) -> int:
    """The nodes, bodies included, counted until the count passes `limit` (a huge flow is not walked)."""
    count = len(defn.nodes)
    stack = [node.config.get("body") for node in defn.nodes if node.type in ("map", "loop")]
    while stack and count <= limit:
        body = stack.pop()
        if isinstance(body, dict):
            count += 1
            config = body.get("config")
            if body.get("type") in ("map", "loop") and isinstance(config, dict):
                stack.append(config.get("body"))
    return count


def _places(defn: FlowDefinition, problems: list[Problem]) -> list[_Place]:
    """Every node, top-level first then each body, with where it sits; a body that is not a node is a problem."""
    places = [_Place(node, top=i) for i, node in enumerate(defn.nodes)]
    queue = deque(places)
    while queue:
        place = queue.popleft()
        node = place.node
        if node.type not in ("map", "loop"):
            continue
        raw = node.config.get("body")
        code = f"{node.type}_body_not_a_node"
        if not isinstance(raw, dict):
            problems.append(Problem(node.id, code, f"`config.body` of a {node.type} must be a node object"))
            continue
        try:
            body = msgspec.convert(raw, Node)
        except msgspec.ValidationError as error:
            problems.append(Problem(node.id, code, f"`config.body` is not a node: {error}"))
            continue
        if body.type in ("start", "end"):
            problems.append(Problem(node.id, code, f"a `{body.type}` node cannot be a {node.type}'s body"))
            continue
        inner = _Place(body, top=place.top, in_map=place.in_map or node.type == "map",
                       in_loop=place.in_loop or node.type == "loop")
        places.append(inner)
        queue.append(inner)
        if node.type == "loop":
            place.own = frozenset({body.id})
    return places


def _check_ids(places: list[_Place], problems: list[Problem]) -> None:
    seen: set[str] = set()
    for place in places:
        node_id = place.node.id
        if not IDENTIFIER.fullmatch(node_id):
            problems.append(Problem(node_id, "bad_id", f"node id {node_id!r} is not letters, digits and underscores"
                                    " starting with a letter"))
        elif node_id in RESERVED:
            problems.append(Problem(node_id, "bad_id", f"node id {node_id!r} is a reserved name"))
        if node_id in seen:
            problems.append(Problem(node_id, "duplicate_id", f"two nodes have the id {node_id!r}"))
        seen.add(node_id)


def _check_inputs(defn: FlowDefinition, problems: list[Problem]) -> None:
    for name, spec in defn.inputs.items():
        if not IDENTIFIER.fullmatch(name):
            problems.append(Problem(None, "bad_input", f"input name {name!r} is not letters, digits and underscores"))
        default = spec.default
        if default is not msgspec.UNSET and default is not None:
            ok = isinstance(default, _INPUT_TYPES[spec.type]) and not (spec.type == "number" and
                                                                        isinstance(default, bool))
            if not ok:
                problems.append(Problem(None, "bad_input", f"input {name!r}: default {default!r} is not a {spec.type}"))


def _check_graph(defn: FlowDefinition, top_ids: dict[str, int],
                 problems: list[Problem]) -> list[int | None]:
    """Edges, branches, the one start, cycles and reachability; the ancestor bit sets for variables."""
    starts = [node.id for node in defn.nodes if node.type == "start"]
    if not starts:
        problems.append(Problem(None, "missing_start", "the flow has no `start` node"))
    for extra in starts[1:]:
        problems.append(Problem(extra, "too_many_starts", f"a second `start` node ({starts[0]!r} is the first)"))
    pairs: list[tuple[int, int]] = []
    branches = {node.id: _branches(node) for node in defn.nodes}
    for edge in defn.edges:
        missing = [end for end in (edge.source, edge.target) if end not in top_ids]
        if missing:
            about = edge.source if edge.source in top_ids else edge.target if edge.target in top_ids else None
            problems.append(Problem(about, "edge_to_nowhere", f"edge {edge.source!r} -> {edge.target!r} names no node "
                                    + " and ".join(repr(m) for m in missing)))
            continue
        _check_branch(defn.nodes[top_ids[edge.source]], edge.branch, branches[edge.source], edge.target, problems)
        pairs.append((top_ids[edge.source], top_ids[edge.target]))
    succ = graph.successors(len(defn.nodes), pairs)
    for component in graph.cycles(succ):
        names = [defn.nodes[i].id for i in component]
        shown = ", ".join(names[:10]) + (f" and {len(names) - 10} more" if len(names) > 10 else "")
        problems.append(Problem(names[0], "cycle", f"a cycle through {shown}; repeat with a `loop` node instead"))
    if len(starts) >= 1:
        seen = graph.reachable(succ, top_ids[starts[0]])
        problems.extend(Problem(node.id, "unreachable", f"node {node.id!r} cannot be reached from {starts[0]!r}")
                        for i, node in enumerate(defn.nodes) if not seen[i] and top_ids[node.id] == i)
    return graph.ancestors(succ)


def _branches(node: Node) -> list[str] | None:
    """The branches `node` may take, or None when its config is too broken to say (reported elsewhere)."""
    names: list[str] = []
    if node.type == "condition":
        try:
            config = config_of(node)
        except ConfigError:
            return None
        assert isinstance(config, ConditionConfig)
        names = config.branches()
    elif node.type == "human":
        actions = node.config.get("actions")
        if not isinstance(actions, list):
            return None
        names = [a for a in actions if isinstance(a, str)]
    if node.on_error == "branch":
        names.append(ERROR_BRANCH)
    return names


def _check_branch(source: Node, branch: str | None, allowed: list[str] | None, target: str,
                  problems: list[Problem]) -> None:
    if allowed is None:
        return
    if branch is None:
        if source.type == "condition":
            problems.append(Problem(source.id, "bad_branch", f"edge {source.id!r} -> {target!r} from a condition"
                                    f" names no branch (one of {', '.join(allowed)})"))
        return
    if branch not in allowed:
        hint = f"one of {', '.join(allowed)}" if allowed else "it takes no branches"
        if branch == ERROR_BRANCH and source.on_error != "branch":
            hint = "set `onError: \"branch\"` on the node to take it"
        problems.append(Problem(source.id, "bad_branch", f"edge {source.id!r} -> {target!r}: branch {branch!r} is not"
                                f" one {source.id!r} can take ({hint})"))


def _config(node: Node, problems: list[Problem]) -> NodeConfig | None:
    if node.type == "loop" and not _positive_int(node.config.get("maxIterations")):
        problems.append(Problem(node.id, "loop_without_max", "a loop needs `maxIterations`, a whole number of at"
                                " least 1"))
        return None
    if node.type in ("map", "loop") and not isinstance(node.config.get("body"), dict):
        return None  # reported as a body that is not a node
    try:
        return config_of(node)
    except ConfigError as error:
        if node.type in ("map", "loop") and error.path.startswith("config.body"):
            return None  # reported as a body that is not a node
        problems.append(Problem(node.id, error.code, f"{error.path}: {error.message}"))
        return None


def _positive_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value >= 1


def _check_text(place: _Place, field: str, text: str, is_expr: bool, defn: FlowDefinition, top_ids: dict[str, int],
                all_ids: set[str], before: list[int | None] | None, problems: list[Problem]) -> None:
    """A template's or an expression's syntax, and every name it reads."""
    node_id = place.node.id or None
    if is_expr:
        problem = expressions.check(text)
        if problem is not None:
            problems.append(Problem(node_id, "bad_expression", f"{field}: {problem}"))
            return
        names = expressions.expression_names(text)
    else:
        try:
            names = templates.template_names(text)
        except TemplateError as error:
            problems.append(Problem(node_id, "bad_template", f"{field}: {error}"))
            return
    # A loop's `until` reads `iteration` and its body's output; a body reads what its container may.
    is_until = field == "config.until"
    for name in sorted(names):
        why = _undefined(name, place, is_until, defn, top_ids, all_ids, before)
        if why:
            problems.append(Problem(node_id, "undefined_variable", f"{field}: {why}"))


def _undefined(name: str, place: _Place, is_until: bool, defn: FlowDefinition, top_ids: dict[str, int],
               all_ids: set[str], before: list[int | None] | None) -> str | None:
    """Why `name` cannot be read where `place` reads it, or None when it can."""
    head, _, rest = name.partition(".")
    field = rest.partition(".")[0]
    if head == "inputs":
        if field and field not in defn.inputs:
            return f"`{name}`: the flow declares no input {field!r}"
        return None
    if head in ("item", "index"):
        return None if place.in_map else f"`{head}` is only defined inside a map's body"
    if head == "env":  # a secret from the environment (FLOW_SECRET_ENV), for a request only
        if place.node.type != "http":
            return f"`{name}`: secrets (`env`) are read by http nodes only, never by a model, code or output"
        return None if field else "`env` alone: name the variable, as `env.API_TOKEN`"
    if head == "iteration":
        return None if place.in_loop or is_until else "`iteration` is only defined inside a loop"
    if is_until and head in place.own:
        return None if field in ("", "output", "files") else f"`{name}`: a node has `output` and `files`"
    if head in templates.GLOBALS:
        return None
    if head not in top_ids:
        if head in all_ids:
            return f"`{name}`: {head!r} is inside a map or loop body; read its container's output instead"
        return f"`{name}`: no input, node or variable is called {head!r}"
    if field not in ("", "output", "files"):
        return f"`{name}`: a node has `output` and `files`, not {field!r}"
    if place.top >= 0 and before is not None:
        ancestors = before[place.top]
        if ancestors is not None and not ancestors >> top_ids[head] & 1:
            return f"`{name}`: {head!r} does not run before {defn.nodes[place.top].id!r} (no path of edges leads from it)"
    return None
