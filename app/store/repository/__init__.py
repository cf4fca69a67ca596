"""Every SQL statement of the service, one module per aggregate. Nothing else builds queries.

`Repository` holds the stores of one database: workflows and their transitions
(`workflows`), messages and logs (`messages`), files and the extraction cache (`files`, with
the full-text `chunks`), idempotency keys (`idempotency`) and the replicas' heartbeats
(`replicas`), what later rounds remember of ended ones (`memory`), decisions on waiting rounds (`waits`), posts queued behind a round (`queue`), what no
workflow holds (`leftovers`), saved flows and the node runs of flow rounds (`flows`); `live` reads across them in one snapshot for the event stream.
"""

from __future__ import annotations

from app.store.database import Database
from app.store.repository.files import FileStore
from app.store.repository.flows import FlowStore
from app.store.repository.idempotency import IdempotencyStore
from app.store.repository.leftovers import LeftoverStore
from app.store.repository.live import LiveReads
from app.store.repository.memory import MemoryStore
from app.store.repository.messages import MessageStore
from app.store.repository.queue import QueueStore
from app.store.repository.replicas import ReplicaStore
from app.store.repository.waits import WaitStore
from app.store.repository.workflows import WorkflowStore


class Repository:
    """The stores of one database, one per aggregate."""

    def __init__(self, db: Database) -> None:
        self.db = db
        self.files = FileStore(db)
        self.messages = MessageStore(db)
        self.memory = MemoryStore(db)
        self.workflows = WorkflowStore(db, self.messages)
        self.idempotency = IdempotencyStore(db)
        self.live = LiveReads(db, self.workflows, self.messages, self.files)
        self.replicas = ReplicaStore(db)
        self.waits = WaitStore(db, self.workflows)
        self.queue = QueueStore(db, self.workflows)
        self.leftovers = LeftoverStore(db)
        self.flows = FlowStore(db)
