"""A definition as people send it and as it is kept: read from a request's body or from a file in any
accepted form (Foreman's JSON or YAML, or a Dify app translated), checked, and given its identity; and
written out as a file in a format.

Every way in fails with one error type, `DefinitionError`: its subclasses keep the contract's stable codes
and sentences (`invalid_flow` for a shape or the problems found, `bad_import` for a file that is not YAML
or JSON, `dify_unsupported` for a Dify app with no counterpart here), so the service maps one type to its
answer. What the service keeps is HTTP and storage: which route took the definition, and where it is stored
under its hash.
"""

from __future__ import annotations

import hashlib
from collections.abc import Collection
from dataclasses import dataclass
from typing import Any, Final, Literal

from agents.flows.canonical import MAX_YAML_BYTES, canonical_json, dump_yaml, load_yaml
from agents.flows.definition import FlowDefinition
from agents.flows.dify import from_dify, is_dify
from agents.flows.errors import DefinitionError, FileError, YamlError
from agents.flows.node_checks import Problem
from agents.flows.validate import validate

MAX_FILE_BYTES: Final = MAX_YAML_BYTES  # a file imported is read as YAML: the parser's own limit, said first
SHOWN_PROBLEMS: Final = 5  # problems named in the sentence; the answer lists them all


class InvalidFlowError(DefinitionError):
    """A definition of the contract's shape that does not validate: `problems` lists every one, each with
    its node."""

    def __init__(self, problems: list[Problem]) -> None:
        super().__init__("; ".join(f"{p.node_id or 'flow'}: {p.message}" for p in problems))
        self.problems = problems

    @property
    def detail(self) -> str:
        count = len(self.problems)
        head = "; ".join(f"{p.node_id or 'flow'}: {p.message}" for p in self.problems[:SHOWN_PROBLEMS])
        more = f" (and {count - SHOWN_PROBLEMS} more)" if count > SHOWN_PROBLEMS else ""
        return f"The flow has {count} problem{'' if count == 1 else 's'}: {head}{more}. Nothing was saved."

    @property
    def extra(self) -> dict[str, Any]:
        return {"problems": [{"nodeId": p.node_id, "code": p.code, "message": p.message} for p in self.problems]}


@dataclass(frozen=True)
class Version:
    """A definition with its identity: its canonical JSON (what is stored) and that JSON's sha256 (its `hash`)."""

    definition: FlowDefinition
    canonical: str
    hash: str


def version_of(definition: FlowDefinition) -> Version:
    """`definition` with its canonical JSON and hash, the JSON encoded once."""
    body = canonical_json(definition)
    return Version(definition, body.decode(), hashlib.sha256(body).hexdigest())


@dataclass(frozen=True)
class Read:
    """A definition read, checked and identified; what was sent (`foreman`, or a `dify` app), and how many
    nodes it had and how many of them have a counterpart here (the same for Foreman's own)."""

    version: Version
    source: Literal["foreman", "dify"]
    nodes: int
    imported: int

    @classmethod
    def of(cls, sent: Any, *, agents: Collection[str], max_nodes: int, flow_id: int | None = None,
           media: str | None = None) -> Read:
        """`sent` as a definition that validates, with its identity: a request's parsed JSON body, or (with
        `media`, the type it came as) a file's bytes, YAML or JSON, Foreman's definition or a Dify app. It is
        checked against the registered `agents`, `max_nodes` and, for a flow being replaced, its `flow_id` (a
        sub-flow cycle back to it). Raises `DefinitionError`, the first thing wrong (every problem at once)."""
        source: Literal["foreman", "dify"] = "foreman"
        counts: tuple[int, int] | None = None
        if media is not None:
            sent = _file_data(sent, "JSON" if media.endswith("json") else "YAML")
            if is_dify(sent):
                converted = from_dify(sent)
                source, sent, counts = "dify", converted.definition, (converted.nodes, converted.imported)
        definition = FlowDefinition.decode(sent)
        problems = validate(definition, agents=agents, max_nodes=max_nodes, flow_id=flow_id)
        if problems:
            raise InvalidFlowError(problems)
        nodes, imported = counts or (len(definition.nodes), len(definition.nodes))
        return cls(version_of(definition), source, nodes, imported)


def _file_data(raw: bytes, kind: str) -> dict[str, Any]:
    """A file's bytes parsed as YAML (JSON is YAML: one parser, with its limits) into a mapping."""
    if len(raw) > MAX_FILE_BYTES:
        raise FileError(f"The file is over {MAX_FILE_BYTES // (1024 * 1024)} MiB")
    try:
        text = raw.decode()
    except UnicodeDecodeError:
        raise FileError("The file is not UTF-8 text") from None
    if "\x00" in text:
        raise FileError("The file holds a NUL character")
    try:
        return load_yaml(text)
    except YamlError as exc:
        raise YamlError(exc.message, line=exc.line, kind=kind) from None


def write_definition(definition: FlowDefinition, fmt: Literal["yaml", "json"]) -> str:
    """`definition` as a file's text: YAML, or its canonical JSON (either read back gives the same hash)."""
    return dump_yaml(definition) if fmt == "yaml" else canonical_json(definition).decode()
