"""What rounds and requests work with: settings, the model, agents, database, files, journal."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime

from agents.base import Retriever
from agents.model import Model
from agents.round import Limits, Registry, Runner
from app.config import Settings
from app.rounds.documents import Documents
from app.rounds.inputs import RoundData
from app.rounds.journal import Journal
from app.rounds.live import Changes
from app.sandbox.code import CodeSandbox
from app.store.cursors import CursorCache
from app.store.database import Database
from app.store.filestore import BlobStore
from app.store.repository import Repository


@dataclass
class Runtime:
    """The service's dependencies, built once per process (see app.main.build_runtime)."""

    settings: Settings
    model: Model
    registry: Registry
    db: Database
    repo: Repository
    storage: BlobStore
    changes: Changes  # wakes the event streams of a workflow that was written to
    cursors: CursorCache
    journal: Journal
    documents: Documents
    retriever: Retriever
    rounds: RoundData
    clock: Callable[[], datetime]
    fallback: Model | None = None  # writes the final review when `model` cannot (the offline model)
    sandbox: CodeSandbox | None = None  # where flows' code nodes run (its workers start with the first one)


def runner_of(rt: Runtime) -> Runner:
    """The runner of a round's agent work, with the service's model, agents and limits."""
    s = rt.settings
    return Runner(rt.model, rt.registry, Limits(max_tasks=s.max_tasks_per_plan, task_concurrency=s.task_concurrency,
                                                max_round_tokens=s.max_round_tokens, max_replans=s.max_replans,
                                                max_task_outputs=s.max_task_outputs,
                                                plan_fixes_off=frozenset(s.plan_fixes_off)), rt.retriever, fallback=rt.fallback)
