"""What rounds and requests work with: settings, the model, agents, database, files, journal."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime

from agents.model import Model
from agents.round import Runner
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
    db: Database
    repo: Repository
    storage: BlobStore
    changes: Changes  # wakes the event streams of a workflow that was written to
    cursors: CursorCache
    journal: Journal
    documents: Documents
    rounds: RoundData
    clock: Callable[[], datetime]
    runner: Runner  # the one Runner of rounds' agent work and its registry (built once, `app.main.build_runtime`)
    sandbox: CodeSandbox | None = None  # where flows' code nodes run (its workers start with the first one)
