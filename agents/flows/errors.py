"""The errors of a flow's definition: one small tree under `FlowError`, each naming where it is."""

from __future__ import annotations


class FlowError(ValueError):
    """Base of every error `agents.flows` raises on purpose: something in a definition is wrong."""


class DefinitionError(FlowError):
    """The definition is not the contract's shape; `path` says where (`$.nodes[2].config`)."""

    def __init__(self, path: str, message: str) -> None:
        super().__init__(f"{message} (at {path})")
        self.path = path
        self.message = message


class ConfigError(DefinitionError):
    """A node's `config` is not its type's shape; `path` is relative to the node (`config.body.type`)."""

    def __init__(self, node_id: str, path: str, message: str, *, code: str = "bad_config") -> None:
        super().__init__(path, message)
        self.node_id = node_id
        self.code = code

    def __str__(self) -> str:
        return f"node {self.node_id!r}: {self.message} (at {self.path})"


class TemplateError(FlowError):
    """A template does not parse, or fails while rendering; `line` is 1-based when known."""

    def __init__(self, message: str, *, line: int | None = None) -> None:
        super().__init__(message if line is None else f"{message} (line {line})")
        self.message = message
        self.line = line


class ExpressionError(FlowError):
    """An expression does not parse, or fails while evaluating (a missing key, a type mismatch)."""


class YamlError(FlowError):
    """A YAML document is not valid YAML, is too large or too deep; `line` is 1-based when known."""

    def __init__(self, message: str, *, line: int | None = None) -> None:
        super().__init__(message if line is None else f"{message} (line {line})")
        self.message = message
        self.line = line
