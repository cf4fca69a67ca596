"""What a flow run is made of, as the engine and its two ports see it: node runs, what a node produced,
the journal it writes through and the effects it has outside the engine (`agents.flows.engine`)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol

from agents.flows.definition import AgentConfig, FlowDefinition, FlowRefConfig, HttpConfig, LlmConfig, Node

NodeStatus = Literal["pending", "running", "waiting", "succeeded", "failed", "skipped"]
RunStatus = Literal["completed", "failed", "waiting"]


@dataclass
class NodeRun:
    """One run of a node: a top-level node (`path` is its id), a map's item (`m[3]`) or a loop's
    iteration (`l#2`). What the journal keeps, and what a resumed run reads back instead of running it."""

    path: str
    node_id: str
    type: str
    status: NodeStatus
    attempts: int = 0
    input: Any = None
    output: Any = None
    files: list[int] = field(default_factory=list)
    error: str = ""
    branch: str | None = None
    items: int | None = None  # a map: how many items it ran over
    iterations: int | None = None  # a loop: how many times its body ran
    fatal: bool = False  # its failure ends the run (onError "fail", or the run's budget)
    text: str = ""  # what a step message shows of it (a model's answer, an agent's text)
    reused_from: int | None = None

    @property
    def settled(self) -> bool:
        """Whether the node is over for this run (nothing of it runs again)."""
        return self.status in ("succeeded", "failed", "skipped")


@dataclass
class Produced:
    """What a node's effect gave: its output, the files it made (ids), the text its step message shows."""

    output: Any = None
    files: list[int] = field(default_factory=list)
    text: str = ""


@dataclass(frozen=True)
class HumanWait:
    """A human node that waits for the user's decision: its path, rendered message and actions."""

    path: str
    node_id: str
    message: str
    actions: tuple[str, ...]
    timeout_seconds: float | None = None
    default_action: str | None = None


@dataclass
class FlowResult:
    """How a run ended: completed with its rendered outputs, failed (which node and why), or waiting."""

    status: RunStatus
    outputs: dict[str, Any] = field(default_factory=dict)
    failed_node: str = ""
    error: str = ""
    waits: list[HumanWait] = field(default_factory=list)
    runs: dict[str, NodeRun] = field(default_factory=dict)
    done: int = 0  # top-level nodes settled
    total: int = 0  # top-level nodes


@dataclass(frozen=True)
class FlowLimits:
    """A run's bounds: node runs in all (FLOW_MAX_NODE_RUNS, map items and loop iterations counted) and how
    many top-level nodes run at once."""

    max_node_runs: int = 1000
    concurrency: int = 4


class FlowJournal(Protocol):
    """Where a run keeps what it did (the app's, durable): node runs as they start and settle, and the waits."""

    async def recorded(self) -> Mapping[str, NodeRun]:
        """The node runs a run resumed after a crash or a decision already settled, by path."""

    async def started(self, node: Node, path: str, done: int, total: int) -> None:
        """A node run starts (`done` of `total` top-level nodes settled so far)."""

    async def settled(self, run: NodeRun, done: int, total: int) -> None:
        """A node run settled: its outcome is written once (the checkpoint: it never runs again)."""

    async def decision(self, path: str) -> str | None:
        """The action the user took on the human node at `path`, if they decided."""


class Effects(Protocol):
    """What nodes do outside the engine (the app's): agents, models, the sandbox, requests; and the definition
    of a sub-flow, which the engine runs (`agents.flows.subflows`)."""

    async def agent(self, node: Node, path: str, config: AgentConfig, instructions: str,
                    files: list[int]) -> Produced: ...

    async def llm(self, node: Node, path: str, config: LlmConfig, prompt: str, system: str) -> Produced: ...

    async def code(self, node: Node, path: str, code: str, inputs: Mapping[str, Any],
                   nodes: Mapping[str, Any]) -> Produced: ...

    async def http(self, node: Node, path: str, config: HttpConfig, url: str, headers: dict[str, str],
                   body: str | None) -> Produced: ...

    async def definition_of(self, config: FlowRefConfig) -> FlowDefinition:
        """The definition of the flow a sub-flow node names (NodeError when there is none); the engine runs it."""


class NodeError(Exception):
    """A node's failure the person can act on (its text is the node's error)."""


class BudgetError(NodeError):
    """The run used up FLOW_MAX_NODE_RUNS: it ends, whatever the nodes' error strategies say."""


class Waiting(Exception):
    """A human node has no decision yet."""

    def __init__(self, wait: HumanWait) -> None:
        super().__init__(wait.path)
        self.wait = wait


def node_view(run: NodeRun | None) -> dict[str, Any]:
    """What templates and expressions see of a node: `{output, files}` (null output when it did not succeed)."""
    if run is None or run.status != "succeeded":
        return {"output": None, "files": list(run.files) if run else []}
    return {"output": run.output, "files": list(run.files)}


def truth(value: Any) -> bool:
    """A condition's value as a branch: booleans as they are; anything else must be a boolean too."""
    if isinstance(value, bool):
        return value
    raise NodeError(f"the expression gave {type(value).__name__} ({str(value)[:80]!r}), not true or false")
