"""One spelling of a definition: canonical JSON and its hash, and YAML in and out.

The canonical JSON has sorted keys, no insignificant whitespace, UTF-8 text (not \\u escapes), and
every default written out, also inside each node's `config` (a map with `concurrency` left out and
one with `"concurrency": 4` are the same flow, with the same hash). A config its type cannot decode
is kept as it was written, so a draft that does not validate still has a stable hash.

YAML is read with PyYAML's safe loader (libyaml's `CSafeLoader` when present: no Python objects,
only mappings, lists and scalars), after checking the document's size, depth and node count with
aliases expanded, so "billion laughs" is refused before it is built.
"""

from __future__ import annotations

import hashlib
from typing import Any, Final

import msgspec
import yaml

from agents.flows.definition import FlowDefinition, Node, config_of
from agents.flows.errors import ConfigError, YamlError

MAX_YAML_BYTES: Final = 2 * 1024 * 1024
MAX_YAML_DEPTH: Final = 64
MAX_YAML_NODES: Final = 200_000  # scalars, lists and mappings, counting each alias as what it names

_ENCODER: Final = msgspec.json.Encoder(order="sorted")
_Loader: Any = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
_Dumper: Any = getattr(yaml, "CSafeDumper", yaml.SafeDumper)


def _normal_node(node: Node) -> dict[str, Any]:
    """`node` as builtins with its config's defaults written out (its body's too, iteratively)."""
    out: dict[str, Any] = msgspec.to_builtins(node)
    stack = [(node, out)]
    while stack:
        current, target = stack.pop()
        try:
            config = config_of(current)
        except ConfigError:
            continue
        normal: dict[str, Any] = msgspec.to_builtins(config)
        body = getattr(config, "body", None)
        if isinstance(body, Node):
            normal["body"] = msgspec.to_builtins(body)
            stack.append((body, normal["body"]))
        target["config"] = normal
    return out


def normal_form(defn: FlowDefinition) -> dict[str, Any]:
    """`defn` as plain builtins, every default written out: what the canonical JSON and YAML encode."""
    out: dict[str, Any] = msgspec.to_builtins(defn)
    out["nodes"] = [_normal_node(node) for node in defn.nodes]
    return out


def canonical_json(defn: FlowDefinition) -> bytes:
    """`defn` as canonical JSON: sorted keys, compact, UTF-8, defaults included."""
    return _ENCODER.encode(normal_form(defn))


def definition_hash(defn: FlowDefinition) -> str:
    """The sha256 (hex) of `defn`'s canonical JSON: a version's `hash`."""
    return hashlib.sha256(canonical_json(defn)).hexdigest()


def load_yaml(text: str | bytes) -> dict[str, Any]:
    """A YAML document parsed safely into a mapping; a `YamlError` names the line at fault."""
    if len(text) > MAX_YAML_BYTES:
        raise YamlError(f"the document is over {MAX_YAML_BYTES // (1024 * 1024)} MiB")
    try:
        loader = _Loader(text)
        try:
            root = loader.get_single_node()
            if root is None:
                raise YamlError("the document is empty")
            _check_shape(root)
            data = loader.construct_document(root)
        finally:
            loader.dispose()
    except yaml.MarkedYAMLError as error:
        mark = error.problem_mark or error.context_mark
        raise YamlError(f"not YAML: {error.problem or error.context}",
                        line=mark.line + 1 if mark is not None else None) from None
    except yaml.YAMLError as error:
        raise YamlError(f"not YAML: {error}") from None
    if not isinstance(data, dict):
        raise YamlError(f"a flow is a mapping, not {type(data).__name__}", line=root.start_mark.line + 1)
    return data


def _check_shape(root: yaml.Node) -> None:
    """Refuse a document too deep or, with its aliases expanded, too large."""
    count = 0
    stack: list[tuple[yaml.Node, int]] = [(root, 1)]
    while stack:
        node, depth = stack.pop()
        count += 1
        if count > MAX_YAML_NODES:
            raise YamlError(f"the document has over {MAX_YAML_NODES:,} values (aliases expanded)",
                            line=node.start_mark.line + 1)
        if depth > MAX_YAML_DEPTH:
            raise YamlError(f"the document is nested over {MAX_YAML_DEPTH} levels deep", line=node.start_mark.line + 1)
        if isinstance(node, yaml.SequenceNode):
            stack.extend((child, depth + 1) for child in node.value)
        elif isinstance(node, yaml.MappingNode):
            for key, value in node.value:
                stack.append((key, depth + 1))
                stack.append((value, depth + 1))


def dump_yaml(defn: FlowDefinition) -> str:
    """`defn` as YAML (sorted keys, defaults included); `load_yaml` then `FlowDefinition.decode` gives the same hash."""
    text: str = yaml.dump(normal_form(defn), Dumper=_Dumper, sort_keys=True, allow_unicode=True,
                          default_flow_style=False, width=100)
    return text
