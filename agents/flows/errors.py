"""The errors of a flow's definition: one small tree under `FlowError`, each naming where it is."""

from __future__ import annotations

from typing import Any


class FlowError(ValueError):
    """Base of every error `agents.flows` raises on purpose: something in a definition is wrong."""


class DefinitionError(FlowError):
    """A definition that cannot be taken as it was sent, whichever way it came (a request's body, a file, a
    Dify app): the one error `Read.of` raises. `code` is the contract's stable error code, `detail`
    the sentence the person reads, `extra` what the answer carries beside it; each subclass keeps its own."""

    code = "invalid_flow"

    @property
    def detail(self) -> str:
        return f"{self}."

    @property
    def extra(self) -> dict[str, Any]:
        return {}


class ShapeError(DefinitionError):
    """The definition is not the contract's shape; `path` says where (`$.nodes[2].config`)."""

    def __init__(self, path: str, message: str) -> None:
        super().__init__(f"{message} (at {path})")
        self.path = path
        self.message = message

    @property
    def detail(self) -> str:
        return f"The flow definition is not valid: {self.message} (at {self.path})."

    @property
    def extra(self) -> dict[str, Any]:
        return {"problems": [{"nodeId": None, "code": "bad_shape", "message": f"{self.message} (at {self.path})"}]}


class FileError(DefinitionError):
    """A file that is no definition's text at all: too large, not UTF-8, holding a NUL character."""

    code = "bad_import"


class ConfigError(FlowError):
    """A node's `config` is not its type's shape; `path` is relative to the node (`config.body.type`), `code`
    the validation problem's code (a problem of a definition that was read, not a refusal to read it)."""

    def __init__(self, node_id: str, path: str, message: str, *, code: str = "bad_config") -> None:
        super().__init__(f"{message} (at {path})")
        self.path = path
        self.message = message
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


class YamlError(FileError):
    """A YAML document is not valid YAML, is too large or too deep; `line` is 1-based when known, `kind` what
    the file was sent as ("YAML", or "JSON": JSON is read as YAML)."""

    def __init__(self, message: str, *, line: int | None = None, kind: str = "YAML") -> None:
        super().__init__(message if line is None else f"{message} (line {line})")
        self.message = message
        self.line = line
        self.kind = kind

    @property
    def detail(self) -> str:
        return f"The file is not a flow's {self.kind}: {self}."

    @property
    def extra(self) -> dict[str, Any]:
        return {"line": self.line}
