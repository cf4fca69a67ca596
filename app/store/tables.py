"""The database tables (SQLModel). Only `app.store.repository` queries them."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import JSON, BigInteger, Column, DateTime, ForeignKey, Index, Integer, LargeBinary, String, Table
from sqlmodel import Field, SQLModel

# 64-bit ids on PostgreSQL; on SQLite "INTEGER PRIMARY KEY" is already 64-bit and must be spelt
# that way to stay the rowid (autoincrementing).
ID = BigInteger().with_variant(Integer(), "sqlite")
# Ids are never given again after a delete (a client may still hold one): SQLite's AUTOINCREMENT
# instead of reusing the highest freed rowid; PostgreSQL's BIGSERIAL sequences never go back.
NEVER_REUSE = {"sqlite_autoincrement": True}


def table_of(model: type[SQLModel]) -> Table:
    """A model's SQLAlchemy table, whose columns (`.c`) are typed as columns for Core statements
    (a model's class attributes are typed as their Python values; `sqlmodel.col` wraps those)."""
    # SQLModel's class does not declare `__table__`, which SQLAlchemy's declarative sets on every
    # `table=True` model.
    t: Table = model.__table__  # type: ignore[attr-defined]
    return t


def stored_id(row: FileRow | MessageRow | LogRow | ChunkRow) -> int:
    """The id of a row read from the database. The models type `id` as optional for a row not yet
    inserted; one read back always has one."""
    if row.id is None:  # pragma: no cover - the column is the primary key
        raise ValueError(f"a {type(row).__name__} read from the database has no id")
    return row.id


def _pk() -> Any:
    return Field(default=None, sa_column=Column(ID, primary_key=True, autoincrement=True))


def _big(default: int = 0) -> Any:
    return Field(default=default, sa_column=Column(BigInteger, nullable=False, default=default))


class FileRow(SQLModel, table=True):
    """An uploaded file or an agent's output document; the bytes live in storage under `sha256`."""

    __tablename__ = "files"
    __table_args__ = NEVER_REUSE

    id: int | None = _pk()
    mandate_id: int = Field(index=True)
    user_id: int = Field(index=True)
    name: str
    ext: str
    mime: str
    size: int = Field(sa_column=Column(BigInteger, nullable=False))
    sha256: str = Field(index=True)
    origin: str = "upload"  # "upload" or "agent"
    created_at: datetime


class FileChunkRow(SQLModel, table=True):
    """1 MB of a file's bytes when FILE_STORE=database (app.store.filestore), by the bytes' SHA-256 and order."""

    __tablename__ = "file_chunks"

    sha256: str = Field(primary_key=True)
    seq: int = Field(primary_key=True)
    data: bytes = Field(sa_column=Column(LargeBinary, nullable=False))


class WorkflowRow(SQLModel, table=True):
    """A conversation: its status, its current round and what it has cost so far."""

    __tablename__ = "workflows"
    __table_args__ = (Index("ix_workflows_owner_activity", "mandate_id", "user_id", "last_activity"),)

    id: str = Field(primary_key=True)
    mandate_id: int
    user_id: int
    name: str
    status: str
    started_at: datetime
    last_activity: datetime
    current_round: int = 0
    progress: int = 0
    bytes_sent: int = Field(default=0, sa_column=Column(BigInteger, nullable=False, default=0))
    bytes_received: int = Field(default=0, sa_column=Column(BigInteger, nullable=False, default=0))
    tokens_used: int = Field(default=0, sa_column=Column(BigInteger, nullable=False, default=0))
    processing_time: float = 0.0
    last_message_id: int = _big()
    last_log_id: int = _big()
    next_sequence_no: int = 1
    # The user's part in a round (app.rounds.waiting): what the round waits for while `waiting` (null
    # otherwise), when that wait expires, the last decision taken, how many times the current
    # round went on after one (each part is a DBOS workflow of its own), and the review default.
    waiting_for: dict[str, Any] | None = Field(default=None, sa_column=Column(JSON, nullable=True))
    wait_expires: datetime | None = Field(default=None, sa_column=Column(DateTime(timezone=True), nullable=True,
                                                                          index=True))
    decision: dict[str, Any] | None = Field(default=None, sa_column=Column(JSON, nullable=True))
    segment: int = 0
    review: str = ""  # "plan": every round's plan waits for the user's review unless its start says otherwise


class MessageRow(SQLModel, table=True):
    """One chat message; `key` makes a replayed step's write a no-op."""

    __tablename__ = "messages"
    __table_args__ = (Index("ix_messages_workflow_id", "workflow_id", "id"), NEVER_REUSE)

    id: int | None = _pk()
    workflow_id: str = Field(sa_column=Column(String, ForeignKey("workflows.id", ondelete="CASCADE"), nullable=False))
    key: str = Field(unique=True)
    round: int
    parent_message_id: int | None = Field(default=None, sa_column=Column(BigInteger, nullable=True))
    started_at: datetime
    finished_at: datetime | None = None
    sequence_no: int
    status: str
    role: str
    content: str
    agent_name: str = ""
    bytes_sent: int = 0
    bytes_received: int = 0
    tokens_used: int = 0
    processing_time: float = 0.0
    meta: dict[str, Any] = Field(default_factory=dict, sa_column=Column(JSON, nullable=False))
    deleted: bool = False


class DocumentRow(SQLModel, table=True):
    """A file attached to a message, with its extracted content items (JSON)."""

    __tablename__ = "documents"

    id: str = Field(primary_key=True)
    message_id: int = Field(sa_column=Column(ID, ForeignKey("messages.id", ondelete="CASCADE"), nullable=False,
                                             index=True))
    file_id: int = Field(sa_column=Column(ID, ForeignKey("files.id", ondelete="CASCADE"), nullable=False, index=True))
    position: int
    contents: list[dict[str, Any]] = Field(default_factory=list, sa_column=Column(JSON, nullable=False))


class LogRow(SQLModel, table=True):
    """One log entry of a workflow; `key` makes a replayed step's write a no-op."""

    __tablename__ = "logs"
    __table_args__ = (Index("ix_logs_workflow_id", "workflow_id", "id"), NEVER_REUSE)

    id: int | None = _pk()
    workflow_id: str = Field(sa_column=Column(String, ForeignKey("workflows.id", ondelete="CASCADE"), nullable=False))
    key: str = Field(unique=True)
    round: int
    message: str
    type: str
    timestamp: datetime
    agent_name: str = ""
    status: str
    progress: int | None = None


class RoundFileRow(SQLModel, table=True):
    """The files and passwords a round was started with, until its user message is written."""

    __tablename__ = "round_files"

    workflow_id: str = Field(sa_column=Column(String, ForeignKey("workflows.id", ondelete="CASCADE"), primary_key=True))
    round: int = Field(primary_key=True)
    prompt: str
    file_ids: list[int] = Field(default_factory=list, sa_column=Column(JSON, nullable=False))
    passwords: dict[str, str] = Field(default_factory=dict, sa_column=Column(JSON, nullable=False))
    review: str = ""  # "plan": the round waits for the user's review of its plan
    # A flow run: {id, version, hash, inputs} (app.rounds.flow_run); null for a planned round.
    flow: dict[str, Any] | None = Field(default=None, sa_column=Column(JSON, nullable=True))


class RoundMemoryRow(SQLModel, table=True):
    """What later rounds remember of an ended round, stored once (`app.rounds.memory`):
    its turns with their shorter forms and token counts (`agents.knowledge.memory.Turn.record`), `size` (the tokens
    they take in a planning prompt, to read only the newest rounds that fit), what its tasks delivered
    (agent and message id: the texts are read by id when the round is in reach), whether it finished,
    and `terms`, its request's stemmed words between spaces, for a later request that refers back to it.
    Removed when one of the round's messages is deleted (computed again when next needed)."""

    __tablename__ = "round_memory"

    workflow_id: str = Field(sa_column=Column(String, ForeignKey("workflows.id", ondelete="CASCADE"), primary_key=True))
    round: int = Field(primary_key=True)
    turns: list[list[Any]] = Field(default_factory=list, sa_column=Column(JSON, nullable=False))
    delivered: list[list[Any]] = Field(default_factory=list, sa_column=Column(JSON, nullable=False))
    size: int = 0
    finished: bool = False
    terms: str = ""


class QueuedPostRow(SQLModel, table=True):
    """A post to a running round with multitaskStrategy "enqueue": it starts the next round when that one ends."""

    __tablename__ = "queued_posts"
    __table_args__ = NEVER_REUSE

    id: int | None = _pk()
    workflow_id: str = Field(sa_column=Column(String, ForeignKey("workflows.id", ondelete="CASCADE"), nullable=False,
                                              index=True))
    prompt: str
    file_ids: list[int] = Field(default_factory=list, sa_column=Column(JSON, nullable=False))
    passwords: dict[str, str] = Field(default_factory=dict, sa_column=Column(JSON, nullable=False))
    review: str = ""
    created_at: datetime = Field(sa_column=Column(DateTime(timezone=True), nullable=False))


class ExtractionRow(SQLModel, table=True):
    """Extraction results cached by content hash, so the same bytes are extracted once."""

    __tablename__ = "extractions"

    key: str = Field(primary_key=True)  # sha256 of the bytes (+ password marker)
    mime: str
    status: str
    items: list[dict[str, Any]] = Field(default_factory=list, sa_column=Column(JSON, nullable=False))
    warnings: list[str] = Field(default_factory=list, sa_column=Column(JSON, nullable=False))


class IdempotencyRow(SQLModel, table=True):
    """The first answer to a start request carrying an Idempotency-Key."""

    __tablename__ = "idempotency"

    key: str = Field(primary_key=True)  # mandate:user:header value
    response: dict[str, Any] = Field(default_factory=dict, sa_column=Column(JSON, nullable=False))
    created_at: datetime
    fingerprint: str = ""  # sha256 of the request the key was first used for: target workflow and body
    workflow_id: str | None = Field(default=None, index=True)  # the answer's workflow; deleted with it


class ChunkRow(SQLModel, table=True):
    """A passage of an extracted file for full-text search, built once per content hash (the
    extraction cache's key) and removed when no file with those bytes is left. `terms` are its
    Snowball-stemmed words (agents.knowledge.retrieval); the full-text index is over them."""

    __tablename__ = "chunks"
    __table_args__ = (Index("ix_chunks_sha_seq", "sha256", "seq"),)

    id: int | None = _pk()
    sha256: str
    seq: int
    text: str
    terms: str
    length: int  # terms in the chunk, for BM25's length normalisation
    language: str = ""
    page: int | None = None
    sheet: str | None = None
    section: str | None = None


class ChunkVectorRow(SQLModel, table=True):
    """A chunk's embedding (agents.knowledge.embeddings): float16 unit vector, with the model that made it, so
    a change of model re-embeds rather than mixes. Built in the background after the chunks, once
    per content hash, and removed with them."""

    __tablename__ = "chunk_vectors"

    chunk_id: int = Field(sa_column=Column(ID, primary_key=True, autoincrement=False))
    sha256: str = Field(index=True)
    model: str
    vector: bytes = Field(sa_column=Column(LargeBinary, nullable=False))


class ReplicaRow(SQLModel, table=True):
    """One replica (a process with its DBOS executor id) on a shared database: its heartbeat, and
    whether another replica took its rounds over. Times are the database's clock, not the replicas'."""

    __tablename__ = "replicas"

    executor_id: str = Field(primary_key=True)
    state: str  # "alive", "gone" (left, handing its rounds over) or "taken" (another replica took them)
    last_beat: datetime = Field(sa_column=Column(DateTime(timezone=True), nullable=False))
    started_at: datetime = Field(sa_column=Column(DateTime(timezone=True), nullable=False))
    taken_by: str | None = None
    taken_at: datetime | None = Field(default=None, sa_column=Column(DateTime(timezone=True), nullable=True))



class FlowRow(SQLModel, table=True):
    """A saved flow of one user: its name and its draft (by the hash of its definition). Deleting a flow
    keeps the rounds it ran (they name their definition by hash, kept in `flow_definitions`)."""

    __tablename__ = "flows"
    __table_args__ = (Index("ix_flows_owner_updated", "mandate_id", "user_id", "updated_at"), NEVER_REUSE)

    id: int | None = _pk()
    mandate_id: int
    user_id: int
    name: str
    description: str = ""
    draft_hash: str
    created_at: datetime
    updated_at: datetime


class FlowVersionRow(SQLModel, table=True):
    """A published, immutable version of a flow (1, 2, ...), naming its definition by hash."""

    __tablename__ = "flow_versions"

    flow_id: int = Field(sa_column=Column(ID, ForeignKey("flows.id", ondelete="CASCADE"), primary_key=True))
    version: int = Field(primary_key=True)
    hash: str
    name: str = ""
    comment: str = ""
    author: str = ""
    created_at: datetime


class FlowDefinitionRow(SQLModel, table=True):
    """A flow definition by the sha256 of its canonical JSON: written once, read by every draft, version
    and run that has that hash (a run keeps its definition whatever happens to its flow)."""

    __tablename__ = "flow_definitions"

    hash: str = Field(primary_key=True)
    body: str


class NodeRunRow(SQLModel, table=True):
    """One settled node run of a flow round (a node, a map item `m[3]`, a loop iteration `l#2`): the
    checkpoint a resumed round reads instead of running it again."""

    __tablename__ = "node_runs"

    workflow_id: str = Field(sa_column=Column(String, ForeignKey("workflows.id", ondelete="CASCADE"), primary_key=True))
    round: int = Field(primary_key=True)
    path: str = Field(primary_key=True)
    seq: int = 0  # the order runs settled in
    node_id: str
    type: str
    status: str
    attempts: int = 0
    started_at: datetime | None = Field(default=None, sa_column=Column(DateTime(timezone=True), nullable=True))
    finished_at: datetime | None = Field(default=None, sa_column=Column(DateTime(timezone=True), nullable=True))
    record: dict[str, Any] = Field(default_factory=dict, sa_column=Column(JSON, nullable=False))
