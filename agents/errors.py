"""The exceptions of the agents layer: one small tree under `AgentsError`."""

from __future__ import annotations

from agents.model import Usage


class AgentsError(Exception):
    """Base of every error the agents layer raises on purpose."""


class PlanError(AgentsError):
    """The project manager could not produce a valid work plan, even after one repair."""

    def __init__(self, message: str, *, errors: list[str] | None = None, usage: Usage = Usage()) -> None:
        super().__init__(message)
        self.errors = list(errors or [])
        self.usage = usage  # what the failed planning calls cost, for the round's accounting


class PlanFormatError(AgentsError):
    """The model's plan is not the JSON shape the plan schema asks for."""

    def __init__(self, errors: list[str]) -> None:
        super().__init__("; ".join(errors))
        self.errors = errors


class RegistryError(AgentsError):
    """An agent cannot be registered or loaded."""


class DuplicateAgentError(RegistryError):
    """Two agents claim the same name."""


class UnknownAgentError(RegistryError, KeyError):
    """No agent of that name is registered."""

    def __str__(self) -> str:  # KeyError would quote the whole message
        return str(self.args[0]) if self.args else ""


class PlanEditError(AgentsError):
    """A person's edit of a plan under review cannot run: `problems` lists every reason, in the wire's
    names (`tasks[0]`, `finalDocuments`), the size alone when the plan has too many tasks."""

    def __init__(self, problems: list[str]) -> None:
        super().__init__("; ".join(problems))
        self.problems = problems
