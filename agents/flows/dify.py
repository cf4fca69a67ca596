"""A Dify DSL app (`kind: app`, `workflow.graph.nodes/edges`, DSL versions 0.1 to 0.7) translated into a
Foreman definition (plain builtins, for `FlowDefinition.decode` and the validator).

Each Dify node type that has a counterpart maps to one node: `start` (its variables become the flow's
inputs), `llm` (its prompt template: the system turn and the user turns), `if-else` (its cases, or the
0.1 `conditions`, as CEL; edges keep the `sourceHandle` as their branch, `false` being the default
branch), `iteration` (a map whose body is the iteration's one inner node), `loop` (its body, `loop_count`
and break conditions), `human-input` (its form text and actions), `code` (Python: `main` called with its
variables), `http-request`, `template-transform`, `variable-aggregator` (a template: one branch ran),
`answer` (a template, and the flow's output) and `end` (its outputs). References `{{#node.var#}}` and
value selectors `[node, var]` become ours: `inputs.var` for the start node and `sys.*`, `node.output`
(with `.var` where the Dify node outputs a mapping). A node type with no counterpart raises `DifyError`
naming the node and its type: nothing is half-imported.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any, Final

from agents.flows.errors import DefinitionError
from agents.flows.validate import IDENTIFIER, RESERVED

SUPPORTED: Final = frozenset({"start", "llm", "if-else", "iteration", "loop", "human-input", "code", "http-request",
                              "template-transform", "variable-aggregator", "answer", "end"})
INNER_STARTS: Final = frozenset({"iteration-start", "loop-start"})  # a body's entry marker: no node of ours
_REF: Final = re.compile(r"\{\{#([A-Za-z0-9_\-]+(?:\.[A-Za-z0-9_\-]+)+)#\}\}")
_LITERAL: Final = re.compile(r"\{\{|\}\}|\{%|%\}|\{#|#\}")
_NUMERIC: Final = {"=": "==", "≠": "!=", ">": ">", "<": "<", "≥": ">=", "≤": "<="}
_INPUT_TYPES: Final = {"number": "number", "file": "files", "file-list": "files", "checkbox": "boolean"}


def _quoted(match: re.Match[str]) -> str:
    return "{{ '" + match.group() + "' }}"


def literal(text: str) -> str:
    """`text` as a template that renders it as it is (its brace pairs quoted)."""
    return _LITERAL.sub(_quoted, text)


class DifyError(DefinitionError):
    """A Dify app that cannot be imported: `node_id` and `node_type` name the node at fault (None: the app)."""

    code = "dify_unsupported"

    def __init__(self, message: str, node_id: str | None = None, node_type: str | None = None) -> None:
        super().__init__(message)
        self.node_id, self.node_type = node_id, node_type

    @property
    def detail(self) -> str:
        return f"The Dify app cannot be imported: {self}. Nothing was saved."

    @property
    def extra(self) -> dict[str, Any]:
        return {"nodeId": self.node_id, "nodeType": self.node_type}


@dataclass(frozen=True)
class DifyImport:
    """The translated definition, and how many of the app's nodes (body markers left out) it has."""

    definition: dict[str, Any]
    nodes: int
    imported: int


def is_dify(data: Any) -> bool:
    """Whether a parsed file is a Dify DSL app rather than a Foreman definition."""
    if not isinstance(data, dict) or not isinstance(data.get("workflow"), dict):
        return False  # the oldest exports have no `kind`, but an `app` and a `workflow.graph`
    return data.get("kind") == "app" or (isinstance(data.get("app"), dict) and "graph" in data["workflow"])


def coverage(data: dict[str, Any]) -> tuple[int, int]:
    """(nodes with a counterpart, nodes) of a Dify app, without translating it."""
    nodes = [n for n in _graph(data)[0] if _type(n) not in INNER_STARTS]
    return sum(_type(n) in SUPPORTED for n in nodes), len(nodes)


def _graph(data: dict[str, Any]) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    graph = (data.get("workflow") or {}).get("graph") or {}
    nodes, edges = graph.get("nodes") or [], graph.get("edges") or []
    if not isinstance(nodes, list) or not isinstance(edges, list) or not all(isinstance(n, dict) for n in nodes):
        raise DifyError("workflow.graph.nodes and .edges must be lists of mappings")
    return [n for n in nodes if _type(n) != "" and n.get("type") != "custom-note"], [
        e for e in edges if isinstance(e, dict)]


def _type(node: dict[str, Any]) -> str:
    data = node.get("data")
    return str(data.get("type", "")) if isinstance(data, dict) else ""


class _Translator:
    def __init__(self, data: dict[str, Any]) -> None:
        self.nodes, self.edges = _graph(data)
        self.by_id = {str(n.get("id")): n for n in self.nodes}
        self.ids: dict[str, str] = {}
        for node in self.nodes:
            raw, kind = str(node.get("id")), _type(node)
            ours = "start" if kind == "start" else "end" if kind == "end" else raw.replace("-", "_")
            if not IDENTIFIER.fullmatch(ours) or ours in RESERVED:
                ours = f"n{ours}" if IDENTIFIER.fullmatch(f"n{ours}") else f"node{len(self.ids)}"
            while ours in self.ids.values():
                ours += "_"
            self.ids[raw] = ours
        self.inputs: dict[str, dict[str, Any]] = {}
        self.outputs: dict[str, str] = {}
        self.parent: dict[str, str] = {}  # inner node -> its iteration or loop
        for node in self.nodes:
            d = node["data"]
            owner = node.get("parentId") or d.get("iteration_id") or d.get("loop_id")
            if owner and (d.get("isInIteration") or d.get("isInLoop") or node.get("parentId")):
                self.parent[str(node.get("id"))] = str(owner)

    # --- references ---------------------------------------------------------------------------

    def ref(self, selector: Any, within: str | None = None) -> str:
        """A Dify value selector `[node, var, ...]` as one of our expressions."""
        if not isinstance(selector, list) or len(selector) < 2:
            raise DifyError(f"a variable selector {selector!r} is not [node, variable]", within)
        source, var, rest = str(selector[0]), str(selector[1]), [str(s) for s in selector[2:]]
        if source in ("sys", "env", "conversation"):
            name = var if source == "sys" and var in ("query", "files") else f"{source}_{var}"
            kind = "files" if var == "files" else "string"
            self.inputs.setdefault(name, {"type": kind, "default": [] if kind == "files" else ""})
            return ".".join(["inputs", name, *rest])
        node = self.by_id.get(source)
        if node is None:
            raise DifyError(f"a reference names node {source!r}, which the app does not have", within)
        kind = _type(node)
        if kind == "start":
            return ".".join(["inputs", var, *rest])
        if source in (self.parent.get(within or ""), ) and var in ("item", "index"):
            return var  # an iteration's current item, inside its body
        ours = self.ids[source]
        if kind == "http-request":
            field = {"status_code": "status", "body": "body", "headers": "headers"}.get(var)
            return f"{ours}.files" if var == "files" else f"{ours}.output.{field or var}"
        if kind in ("code", "human-input") and var not in ("output", "text"):
            return ".".join([f"{ours}.output", var, *rest])
        return ".".join([f"{ours}.output", *rest])

    def text(self, value: Any, within: str) -> str:
        """A Dify text with `{{#node.var#}}` references as one of our templates; any other brace pair is
        literal text in Dify, and stays literal here."""
        raw, out, at = str(value or ""), [], 0
        for match in _REF.finditer(raw):
            out += [_LITERAL.sub(_quoted, raw[at:match.start()]),
                    "{{ " + self.ref(match.group(1).split("."), within) + " }}"]
            at = match.end()
        return "".join([*out, _LITERAL.sub(_quoted, raw[at:])])

    def named(self, text: str, variables: Any, within: str) -> str:
        """A Jinja2 text of a template-transform whose names are its variables, each as our reference."""
        for var in variables or []:
            name, ref = str(var.get("variable", "")), self.ref(var.get("value_selector"), within)
            if name:
                text = re.sub(r"(\{[{%][^}]*?)(?<![.\w])" + re.escape(name) + r"(?!\w)",
                              lambda m, r=ref: m.group(1) + r, text)  # type: ignore[misc]
        return text

    # --- conditions ---------------------------------------------------------------------------

    def condition(self, cond: dict[str, Any], within: str) -> str:
        left = self.ref(cond.get("variable_selector"), within)
        op = str(cond.get("comparison_operator", "")).strip()
        raw = cond.get("value", "")
        value = self.text(raw, within) if isinstance(raw, str) else raw
        literal = json.dumps(value) if not isinstance(value, str) or "{{" not in value else \
            value.replace("{{", "").replace("}}", "").strip()
        if op in _NUMERIC:
            try:
                number = float(str(raw))
                literal = str(int(number)) if number.is_integer() else str(number)
            except ValueError:
                pass
            return f"{left} {_NUMERIC[op]} {literal}"
        text = {"contains": f"string({left}).contains({literal})",
                "not contains": f"!string({left}).contains({literal})",
                "start with": f"string({left}).startsWith({literal})",
                "end with": f"string({left}).endsWith({literal})",
                "is": f"string({left}) == {literal}", "is not": f"string({left}) != {literal}",
                "empty": f"size({left}) == 0", "not empty": f"size({left}) > 0",
                "null": f"{left} == null", "not null": f"{left} != null",
                "in": f"{left} in {literal}", "not in": f"!({left} in {literal})"}.get(op)
        if text is None:
            raise DifyError(f"the comparison {op!r} has no counterpart", within, "if-else")
        return text

    def conditions(self, conds: Any, operator: Any, within: str) -> str:
        parts = [f"({self.condition(c, within)})" for c in conds or []]
        return (" || " if operator == "or" else " && ").join(parts) or "true"

    # --- nodes --------------------------------------------------------------------------------

    def node(self, node: dict[str, Any]) -> dict[str, Any]:
        raw, d, kind = str(node.get("id")), node["data"], _type(node)
        ours: dict[str, Any] = {"id": self.ids[raw], "type": kind, "name": str(d.get("title") or "")}
        config = getattr(self, "_" + kind.replace("-", "_"))(raw, d)
        ours["type"], ours["config"] = config.pop("$type"), config
        retry = d.get("retry_config") or {}
        if retry.get("retry_enabled"):
            ours["retry"] = {"max": int(retry.get("max_retries") or 0),
                             "delaySeconds": float(retry.get("retry_interval") or 1000) / 1000}
        strategy = d.get("error_strategy")
        if strategy == "fail-branch":
            ours["onError"] = "branch"
        elif strategy == "default-value":
            ours["onError"] = "default"
        return ours

    def _start(self, raw: str, d: dict[str, Any]) -> dict[str, Any]:
        for var in d.get("variables") or []:
            kind = _INPUT_TYPES.get(str(var.get("type")), "string")
            spec: dict[str, Any] = {"type": kind, "description": str(var.get("label") or "")}
            if not var.get("required", True):
                spec["default"] = var.get("default") if var.get("default") is not None else \
                    {"string": "", "number": 0, "boolean": False, "files": []}[kind]
            self.inputs[str(var["variable"])] = spec
        return {"$type": "start"}

    def _end(self, raw: str, d: dict[str, Any]) -> dict[str, Any]:
        for out in d.get("outputs") or []:
            self.outputs[str(out["variable"])] = "{{ " + self.ref(out.get("value_selector"), raw) + " }}"
        return {"$type": "end"}

    def _answer(self, raw: str, d: dict[str, Any]) -> dict[str, Any]:
        self.outputs["answer" if "answer" not in self.outputs else f"answer_{self.ids[raw]}"] = \
            "{{ " + self.ids[raw] + ".output }}"
        return {"$type": "template", "text": self.text(d.get("answer"), raw)}

    def _llm(self, raw: str, d: dict[str, Any]) -> dict[str, Any]:
        template = d.get("prompt_template") or []
        if isinstance(template, dict):  # a completion model's single prompt
            template = [{"role": "user", "text": template.get("text", "")}]
        jinja = (d.get("prompt_config") or {}).get("jinja2_variables")

        def turn(t: dict[str, Any]) -> str:
            if t.get("edition_type") == "jinja2":
                return self.named(str(t.get("jinja2_text") or ""), jinja, raw)
            return self.text(t.get("text"), raw)
        system = [turn(t) for t in template if t.get("role") == "system"]
        user = [turn(t) for t in template if t.get("role") != "system"]
        context = d.get("context") or {}
        if context.get("enabled") and context.get("variable_selector"):
            ctx = "{{ " + self.ref(context["variable_selector"], raw) + " }}"
            system, user = [s.replace("{{#context#}}", ctx) for s in system], [u.replace("{{#context#}}", ctx)
                                                                                 for u in user]
        config: dict[str, Any] = {"$type": "llm", "prompt": "\n\n".join(user) or "\n\n".join(system)}
        if system and user:
            config["system"] = "\n\n".join(system)
        return config

    def _if_else(self, raw: str, d: dict[str, Any]) -> dict[str, Any]:
        if d.get("cases") is None:  # DSL 0.1: one condition list, branches true and false
            return {"$type": "condition",
                    "expression": self.conditions(d.get("conditions"), d.get("logical_operator"), raw)}
        cases = [{"name": str(c.get("case_id") or c.get("id")),
                  "expression": self.conditions(c.get("conditions"), c.get("logical_operator"), raw)}
                 for c in d["cases"]]
        return {"$type": "condition", "cases": cases}

    def _body(self, raw: str, kind: str) -> dict[str, Any]:
        inner = [n for n in self.nodes if self.parent.get(str(n.get("id"))) == raw and _type(n) not in INNER_STARTS]
        if len(inner) != 1:
            raise DifyError(f"the {kind} has {len(inner)} nodes inside; a body here is one node", raw, kind)
        return self.node(inner[0])

    def _iteration(self, raw: str, d: dict[str, Any]) -> dict[str, Any]:
        mode = {"continue-on-error": "continue", "remove-abnormal-output": "drop"}.get(str(d.get("error_handle_mode")),
                                                                                   "fail")
        config: dict[str, Any] = {"$type": "map", "items": self.ref(d.get("iterator_selector"), raw),
                                  "body": self._body(raw, "iteration"), "onItemError": mode}
        config["concurrency"] = min(64, int(d.get("parallel_nums") or 10)) if d.get("is_parallel") else 1
        return config

    def _loop(self, raw: str, d: dict[str, Any]) -> dict[str, Any]:
        until = self.conditions(d.get("break_conditions"), d.get("logical_operator"), raw) \
            if d.get("break_conditions") else "false"
        return {"$type": "loop", "body": self._body(raw, "loop"), "until": until,
                "maxIterations": int(d.get("loop_count") or 10)}

    def _human_input(self, raw: str, d: dict[str, Any]) -> dict[str, Any]:
        actions = [str(a.get("id") or a.get("title")) for a in d.get("user_actions") or d.get("actions") or []]
        if not actions:
            raise DifyError("the human input has no actions", raw, "human-input")
        config: dict[str, Any] = {"$type": "human", "actions": actions,
                                  "message": self.text(d.get("form_content") or d.get("title") or "Decide", raw)}
        timeout = d.get("timeout")
        if isinstance(timeout, (int, float)) and timeout > 0:
            unit = {"day": 86400, "hour": 3600, "minute": 60}.get(str(d.get("timeout_unit")), 3600)
            config["timeoutSeconds"] = float(timeout) * unit
            config["defaultAction"] = actions[-1]
        return config

    def _code(self, raw: str, d: dict[str, Any]) -> dict[str, Any]:
        if str(d.get("code_language", "python3")) != "python3":
            raise DifyError(f"code in {d.get('code_language')} has no counterpart (Python only)", raw, "code")
        args = []
        for var in d.get("variables") or []:
            path = self.ref(var.get("value_selector"), raw).split(".")
            head = f"inputs[{path[1]!r}]" if path[0] == "inputs" else f"nodes[{path[0]!r}][{path[1]!r}]"
            args.append(f"{var['variable']}={head}" + "".join(f"[{p!r}]" for p in path[2:]))
        code = str(d.get("code") or "").rstrip()
        return {"$type": "code", "code": f"{code}\n\n\nresult = main({', '.join(args)})\n"}

    def _http_request(self, raw: str, d: dict[str, Any]) -> dict[str, Any]:
        headers: dict[str, str] = {}
        for line in str(d.get("headers") or "").splitlines():
            key, _, value = line.partition(":")
            if key.strip():
                headers[key.strip()] = self.text(value.strip(), raw)
        auth = d.get("authorization") or {}
        if auth.get("type") == "api-key" and isinstance(auth.get("config"), dict):
            cfg = auth["config"]
            name = str(cfg.get("header") or "Authorization")
            prefix = {"bearer": "Bearer ", "basic": "Basic "}.get(str(cfg.get("type")), "")
            headers[name] = prefix + self.text(cfg.get("api_key"), raw)
        config: dict[str, Any] = {"$type": "http", "method": str(d.get("method") or "get").upper(),
                                  "url": self.text(d.get("url"), raw)}
        body = d.get("body") or {}
        data = body.get("data") if isinstance(body, dict) else None
        if isinstance(data, list):  # DSL 0.1.3 on: a list of {key, type, value}
            data = "&".join(f"{x.get('key')}={x.get('value')}" if x.get("key") else str(x.get("value") or "")
                            for x in data) if body.get("type") != "json" else \
                "".join(str(x.get("value") or "") for x in data)
        if data and body.get("type") != "none":
            config["body"] = self.text(data, raw)
        if headers:
            config["headers"] = headers
        timeout = (d.get("timeout") or {}).get("read") if isinstance(d.get("timeout"), dict) else None
        if isinstance(timeout, (int, float)) and timeout > 0:
            config["timeoutSeconds"] = float(timeout)
        return config

    def _template_transform(self, raw: str, d: dict[str, Any]) -> dict[str, Any]:
        return {"$type": "template", "text": self.named(str(d.get("template") or ""), d.get("variables"), raw)}

    def _variable_aggregator(self, raw: str, d: dict[str, Any]) -> dict[str, Any]:
        refs = [self.ref(s, raw) for s in d.get("variables") or []]
        return {"$type": "template", "text": "".join("{{ " + r + " }}" for r in refs)}

    # --- the app ------------------------------------------------------------------------------

    def run(self, data: dict[str, Any]) -> DifyImport:
        top = [n for n in self.nodes if str(n.get("id")) not in self.parent and _type(n) not in INNER_STARTS]
        counted = [n for n in self.nodes if _type(n) not in INNER_STARTS]
        missing = [n for n in counted if _type(n) not in SUPPORTED]
        if missing:
            listed = ", ".join(f"{n.get('id')} ({_type(n)}, {n['data'].get('title', '')!r})" for n in missing)
            raise DifyError(f"{len(missing)} of its {len(counted)} nodes have no counterpart here: {listed}",
                            str(missing[0].get("id")), _type(missing[0]))
        nodes = [self.node(n) for n in top]
        kept = {str(n.get("id")) for n in top}
        edges = []
        for edge in self.edges:
            source, target = str(edge.get("source")), str(edge.get("target"))
            if source not in kept or target not in kept:
                continue  # an edge inside an iteration's or a loop's body
            handle, kind = str(edge.get("sourceHandle") or "source"), _type(self.by_id[source])
            ours: dict[str, Any] = {"source": self.ids[source], "target": self.ids[target]}
            if handle == "fail-branch":
                ours["branch"] = "error"
            elif kind == "if-else":
                cases = self.by_id[source]["data"].get("cases")
                ours["branch"] = "default" if handle == "false" and cases is not None else handle
            elif kind == "human-input":
                ours["branch"] = handle
            edges.append(ours)
        if not any(n["type"] == "end" for n in nodes):  # a chatflow ends in its answers
            nodes.append({"id": "end", "type": "end", "config": {}})
            edges += [{"source": n["id"], "target": "end"} for n, raw in zip(nodes, top, strict=False)
                      if _type(raw) == "answer"]
        app = data.get("app") or {}
        definition = {"name": str(app.get("name") or "Dify app")[:200], "description": str(app.get("description") or ""),
                      "inputs": self.inputs, "nodes": nodes, "edges": edges, "outputs": self.outputs}
        return DifyImport(definition, len(counted), len(counted))


def from_dify(data: dict[str, Any]) -> DifyImport:
    """The Dify app `data` (parsed YAML) as a Foreman definition, or `DifyError` naming what has no counterpart."""
    if not is_dify(data):
        raise DifyError("not a Dify app (kind: app with a workflow)")
    mode = str((data.get("app") or {}).get("mode") or "workflow")
    if mode not in ("workflow", "advanced-chat"):
        raise DifyError(f"a Dify {mode} app has no graph to import (only workflow and chatflow apps have one)")
    try:
        return _Translator(data).run(data)
    except (KeyError, TypeError, AttributeError, ValueError) as exc:
        if isinstance(exc, DifyError):
            raise
        raise DifyError(f"the app's graph is not the DSL's shape: {type(exc).__name__} {exc}") from None
