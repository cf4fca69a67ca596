"""The process-wide handle DBOS's round workflows reach their engine by (DBOS is process-wide too)."""

from __future__ import annotations

from typing import Any

_engine: Any = None


def install(engine: Any) -> None:
    """Make `engine` the one that runs this process's rounds."""
    global _engine
    if _engine is not None:
        raise RuntimeError("Only one Foreman runtime may run in a process (DBOS is process-wide).")
    _engine = engine


def release() -> None:
    global _engine
    _engine = None


def installed() -> Any:
    """The engine of this process, or None while none runs (before start-up, after close)."""
    return _engine


def current() -> Any:
    """The engine of this process (app.rounds.supervisor.Engine)."""
    if _engine is None:
        raise RuntimeError("The round engine is not running.")
    return _engine
