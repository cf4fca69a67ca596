"""The agent registry: built-ins and entry-point plug-ins, registered through the same `add()`."""

from __future__ import annotations

import inspect
import logging
import re
from collections.abc import Iterable
from importlib.metadata import EntryPoint, entry_points
from typing import Any, cast

from agents.base import Agent, TaskSpec
from agents.errors import DuplicateAgentError, RegistryError, UnknownAgentError
from agents.tools.agent import ToolAgent

log = logging.getLogger(__name__)

ENTRY_POINT_GROUP = "foreman.agents"
# An external tool's agent is `<server>.<tool>` (agents.tools.agent), a tool name as MCP allows it.
_NAME = re.compile(r"^[a-z][a-z0-9_-]{0,63}(?:\.[A-Za-z0-9_-][A-Za-z0-9_.-]{0,127})?$")


class Registry:
    """The agents a round may plan with, by stable name."""

    def __init__(self) -> None:
        self._agents: dict[str, Agent] = {}
        self._sources: dict[str, str] = {}
        self._approval: set[str] = set()

    def add(self, agent: Agent, *, source: str = "built-in", needs_approval: bool | None = None) -> None:
        """Register `agent`; a second agent with the same name is an error. `needs_approval` (else the
        agent's own `needs_approval` attribute, else False): each of its tasks waits for the user's
        approval before it runs (an action that changes something outside Foreman)."""
        name = getattr(agent, "name", None)
        if not isinstance(name, str) or not _NAME.match(name):
            raise RegistryError(f"agent from {source} has an invalid name {name!r}: "
                                "use lowercase letters, digits, '_' or '-' (a tool: '<server>.<tool>')")
        if not isinstance(agent, Agent) or not inspect.iscoroutinefunction(agent.run):
            raise RegistryError(f"agent '{name}' from {source} does not implement the Agent "
                                "protocol (name, description, async run(task, context))")
        if not isinstance(agent.description, str) or not agent.description.strip():
            raise RegistryError(f"agent '{name}' from {source} has no description")
        if name in self._agents:
            raise DuplicateAgentError(f"agent name '{name}' from {source} is already registered "
                                      f"by {self._sources[name]}")
        self._agents[name] = agent
        self._sources[name] = source
        if needs_approval is None:
            needs_approval = getattr(agent, "needs_approval", False) is True
        if needs_approval:
            self._approval.add(name)

    def get(self, name: str) -> Agent:
        """The agent called `name`, or `UnknownAgentError`."""
        try:
            return self._agents[name]
        except KeyError:
            raise UnknownAgentError(f"no agent named '{name}' is registered; "
                                    f"known agents: {', '.join(self.names())}") from None

    def names(self) -> list[str]:
        """The registered names, in registration order."""
        return list(self._agents)

    def descriptions(self) -> list[dict[str, Any]]:
        """Name and description of every agent, for the project manager's prompt, with the file formats it
        delivers (`formats`) where the agent declares them."""
        found = self.formats()
        return [{"name": a.name, "description": a.description} | ({"formats": list(found[a.name])}
                                                                  if a.name in found else {})
                for a in self._agents.values()]

    def formats(self) -> dict[str, tuple[str, ...]]:
        """The file formats (extensions, lowercase, no dot) each agent can deliver, for the agents that
        declare them in a `formats` attribute: capability data the planner chooses an agent by and a
        plan is checked against (an agent without it may be planned with any output)."""
        found: dict[str, tuple[str, ...]] = {}
        for name, agent in self._agents.items():
            declared = getattr(agent, "formats", None)
            if isinstance(declared, (list, tuple)) and declared:  # in the agent's order: its usual ones first
                found[name] = tuple(dict.fromkeys(str(f).lower().lstrip(".") for f in declared))
        return found

    def needs_approval(self, name: str) -> bool:
        """Whether the tasks of the agent called `name` wait for the user's approval before they run."""
        return name in self._approval

    def approval_request(self, task: TaskSpec, prepared: dict[str, Any] | None = None) -> dict[str, Any]:
        """What the user approves before `task` runs (the wait's `tool`): the agent, what it does and
        the task; an agent may say more with its own `describe_call(task) -> dict`, which gets what its
        `prepare` made ready as a second argument (`describe_call(task, prepared)`); without
        `describe_call`, that is shown as it is, beside the rest."""
        agent = self.get(task.agent)
        shown: dict[str, Any] = {"name": agent.name, "description": agent.description, "taskId": task.id,
                                 "instructions": task.instructions, "inputs": list(task.inputs)}
        describe = getattr(agent, "describe_call", None)
        if callable(describe):
            said = describe(task) if prepared is None else describe(task, prepared)
            shown |= {str(k): v for k, v in dict(said).items()}
        elif prepared:
            shown = {**{str(k): v for k, v in prepared.items()}, **shown}
        return shown

    def source(self, name: str) -> str:
        """Where the agent came from: "built-in" or the entry point."""
        return self._sources[name]

    def __contains__(self, name: object) -> bool:
        return name in self._agents

    def __len__(self) -> int:
        return len(self._agents)

    def add_tools(self, agents: Iterable[ToolAgent]) -> None:
        """External tools' agents (an MCP server's, `agents.tools.mcp`): each one `add` refuses (its name, its
        description) is logged and not offered to the planner, instead of keeping the service from starting."""
        for agent in agents:
            try:
                self.add(agent, source=f"MCP server '{agent.server}'")
            except RegistryError as exc:
                log.warning("The tool %s of the MCP server '%s' is not offered to the planner: %s",
                            agent.tool, agent.server, exc)


def builtin_agents() -> list[Agent]:
    """A fresh instance of every built-in agent."""
    from agents.builtin.analyst import Analyst
    from agents.builtin.data_extractor import DataExtractor
    from agents.builtin.summarizer import Summarizer
    from agents.builtin.translator import Translator
    from agents.builtin.writer import Writer

    return [Analyst(), Summarizer(), Writer(), Translator(), DataExtractor()]


def load_entry_point(ep: EntryPoint) -> Agent:
    """The agent an entry point names: an Agent instance, or a class or zero-argument factory."""
    where = f"entry point '{ep.name} = {ep.value}'"
    try:
        obj: Any = ep.load()
        if inspect.isclass(obj) or not isinstance(obj, Agent):
            if not callable(obj):
                raise RegistryError(f"{where} is neither an agent nor a factory")
            obj = obj()
    except RegistryError:
        raise
    except Exception as exc:  # a broken plug-in must say which one it is
        raise RegistryError(f"{where} failed to load: {exc!r}") from exc
    return cast(Agent, obj)


def build_registry(entry_points: bool = True) -> Registry:
    """The built-in agents, then the plug-ins of the `foreman.agents` entry-point group."""
    registry = Registry()
    for agent in builtin_agents():
        registry.add(agent, source="built-in")
    if entry_points:
        for ep in _group_entry_points():
            registry.add(load_entry_point(ep), source=f"entry point '{ep.name} = {ep.value}'")
    return registry


def _group_entry_points() -> list[EntryPoint]:
    # Sorted so that which plug-in wins a name clash never depends on sys.path order.
    found = entry_points(group=ENTRY_POINT_GROUP)
    return sorted(found, key=lambda ep: (ep.name, ep.value))
