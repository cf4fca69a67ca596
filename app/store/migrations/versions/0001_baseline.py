"""Baseline: the tables of main before migrations, created where missing.

Revision ID: 0001_baseline
Revises:
Create Date: 2026-11-23

Every table and index is created only if it does not exist yet, so a database made by the
service before it had migrations (all of these tables, no `alembic_version`) is taken over
as it is, rows untouched, and an empty one gets the whole schema.
"""

from __future__ import annotations

import sqlalchemy as sa
import sqlmodel
from alembic import op

revision = "0001_baseline"
down_revision = None
branch_labels = None
depends_on = None

ID = sa.BigInteger().with_variant(sa.Integer(), "sqlite")
TEXT = sqlmodel.sql.sqltypes.AutoString
TIME = sqlmodel.sql.sqltypes.UTCDateTime
NEVER_REUSE = {"sqlite_autoincrement": True}


def _table(name: str, *items: sa.SchemaItem, **kw: object) -> None:
    op.create_table(name, *items, if_not_exists=True, **kw)


def _index(name: str, table: str, columns: list[str]) -> None:
    op.create_index(name, table, columns, unique=False, if_not_exists=True)


def upgrade() -> None:
    _table("chunks",
           sa.Column("id", ID, autoincrement=True, nullable=False),
           sa.Column("sha256", TEXT(), nullable=False),
           sa.Column("seq", sa.Integer(), nullable=False),
           sa.Column("text", TEXT(), nullable=False),
           sa.Column("terms", TEXT(), nullable=False),
           sa.Column("length", sa.Integer(), nullable=False),
           sa.Column("language", TEXT(), nullable=False),
           sa.Column("page", sa.Integer(), nullable=True),
           sa.Column("sheet", TEXT(), nullable=True),
           sa.Column("section", TEXT(), nullable=True),
           sa.PrimaryKeyConstraint("id"))
    _index("ix_chunks_sha_seq", "chunks", ["sha256", "seq"])
    # The full-text index over chunks.terms (app.chunks): FTS5 on SQLite (rowid = chunk id), a
    # GIN expression index on PostgreSQL. Raw DDL: the models do not describe either.
    if op.get_context().dialect.name == "sqlite":
        op.execute("CREATE VIRTUAL TABLE IF NOT EXISTS chunks_fts USING fts5(terms, "
                   "tokenize = 'unicode61 remove_diacritics 0')")
    else:
        op.execute("CREATE INDEX IF NOT EXISTS ix_chunks_terms ON chunks USING GIN (to_tsvector('simple', terms))")

    _table("extractions",
           sa.Column("key", TEXT(), nullable=False),
           sa.Column("mime", TEXT(), nullable=False),
           sa.Column("status", TEXT(), nullable=False),
           sa.Column("items", sa.JSON(), nullable=False),
           sa.Column("warnings", sa.JSON(), nullable=False),
           sa.PrimaryKeyConstraint("key"))

    _table("files",
           sa.Column("id", ID, autoincrement=True, nullable=False),
           sa.Column("mandate_id", sa.Integer(), nullable=False),
           sa.Column("user_id", sa.Integer(), nullable=False),
           sa.Column("name", TEXT(), nullable=False),
           sa.Column("ext", TEXT(), nullable=False),
           sa.Column("mime", TEXT(), nullable=False),
           sa.Column("size", sa.BigInteger(), nullable=False),
           sa.Column("sha256", TEXT(), nullable=False),
           sa.Column("origin", TEXT(), nullable=False),
           sa.Column("created_at", TIME(), nullable=False),
           sa.PrimaryKeyConstraint("id"),
           **NEVER_REUSE)
    _index("ix_files_mandate_id", "files", ["mandate_id"])
    _index("ix_files_sha256", "files", ["sha256"])
    _index("ix_files_user_id", "files", ["user_id"])

    _table("idempotency",
           sa.Column("key", TEXT(), nullable=False),
           sa.Column("response", sa.JSON(), nullable=False),
           sa.Column("created_at", TIME(), nullable=False),
           sa.Column("fingerprint", TEXT(), nullable=False),
           sa.Column("workflow_id", TEXT(), nullable=True),
           sa.PrimaryKeyConstraint("key"))
    _index("ix_idempotency_workflow_id", "idempotency", ["workflow_id"])

    _table("workflows",
           sa.Column("id", TEXT(), nullable=False),
           sa.Column("mandate_id", sa.Integer(), nullable=False),
           sa.Column("user_id", sa.Integer(), nullable=False),
           sa.Column("name", TEXT(), nullable=False),
           sa.Column("status", TEXT(), nullable=False),
           sa.Column("started_at", TIME(), nullable=False),
           sa.Column("last_activity", TIME(), nullable=False),
           sa.Column("current_round", sa.Integer(), nullable=False),
           sa.Column("progress", sa.Integer(), nullable=False),
           sa.Column("bytes_sent", sa.BigInteger(), nullable=False),
           sa.Column("bytes_received", sa.BigInteger(), nullable=False),
           sa.Column("tokens_used", sa.BigInteger(), nullable=False),
           sa.Column("processing_time", sa.Float(), nullable=False),
           sa.Column("last_message_id", sa.BigInteger(), nullable=False),
           sa.Column("last_log_id", sa.BigInteger(), nullable=False),
           sa.Column("next_sequence_no", sa.Integer(), nullable=False),
           sa.PrimaryKeyConstraint("id"))
    _index("ix_workflows_owner_activity", "workflows", ["mandate_id", "user_id", "last_activity"])

    _table("logs",
           sa.Column("id", ID, autoincrement=True, nullable=False),
           sa.Column("workflow_id", sa.String(), nullable=False),
           sa.Column("key", TEXT(), nullable=False),
           sa.Column("round", sa.Integer(), nullable=False),
           sa.Column("message", TEXT(), nullable=False),
           sa.Column("type", TEXT(), nullable=False),
           sa.Column("timestamp", TIME(), nullable=False),
           sa.Column("agent_name", TEXT(), nullable=False),
           sa.Column("status", TEXT(), nullable=False),
           sa.Column("progress", sa.Integer(), nullable=True),
           sa.ForeignKeyConstraint(["workflow_id"], ["workflows.id"], ondelete="CASCADE"),
           sa.PrimaryKeyConstraint("id"),
           sa.UniqueConstraint("key"),
           **NEVER_REUSE)
    _index("ix_logs_workflow_id", "logs", ["workflow_id", "id"])

    _table("messages",
           sa.Column("id", ID, autoincrement=True, nullable=False),
           sa.Column("workflow_id", sa.String(), nullable=False),
           sa.Column("key", TEXT(), nullable=False),
           sa.Column("round", sa.Integer(), nullable=False),
           sa.Column("parent_message_id", sa.BigInteger(), nullable=True),
           sa.Column("started_at", TIME(), nullable=False),
           sa.Column("finished_at", TIME(), nullable=True),
           sa.Column("sequence_no", sa.Integer(), nullable=False),
           sa.Column("status", TEXT(), nullable=False),
           sa.Column("role", TEXT(), nullable=False),
           sa.Column("content", TEXT(), nullable=False),
           sa.Column("agent_name", TEXT(), nullable=False),
           sa.Column("bytes_sent", sa.Integer(), nullable=False),
           sa.Column("bytes_received", sa.Integer(), nullable=False),
           sa.Column("tokens_used", sa.Integer(), nullable=False),
           sa.Column("processing_time", sa.Float(), nullable=False),
           sa.Column("meta", sa.JSON(), nullable=False),
           sa.Column("deleted", sa.Boolean(), nullable=False),
           sa.ForeignKeyConstraint(["workflow_id"], ["workflows.id"], ondelete="CASCADE"),
           sa.PrimaryKeyConstraint("id"),
           sa.UniqueConstraint("key"),
           **NEVER_REUSE)
    _index("ix_messages_workflow_id", "messages", ["workflow_id", "id"])

    _table("round_files",
           sa.Column("workflow_id", sa.String(), nullable=False),
           sa.Column("round", sa.Integer(), nullable=False),
           sa.Column("prompt", TEXT(), nullable=False),
           sa.Column("file_ids", sa.JSON(), nullable=False),
           sa.Column("passwords", sa.JSON(), nullable=False),
           sa.ForeignKeyConstraint(["workflow_id"], ["workflows.id"], ondelete="CASCADE"),
           sa.PrimaryKeyConstraint("workflow_id", "round"))

    _table("documents",
           sa.Column("id", TEXT(), nullable=False),
           sa.Column("message_id", ID, nullable=False),
           sa.Column("file_id", ID, nullable=False),
           sa.Column("position", sa.Integer(), nullable=False),
           sa.Column("contents", sa.JSON(), nullable=False),
           sa.ForeignKeyConstraint(["file_id"], ["files.id"], ondelete="CASCADE"),
           sa.ForeignKeyConstraint(["message_id"], ["messages.id"], ondelete="CASCADE"),
           sa.PrimaryKeyConstraint("id"))
    _index("ix_documents_file_id", "documents", ["file_id"])
    _index("ix_documents_message_id", "documents", ["message_id"])


def downgrade() -> None:
    for table in ("documents", "round_files", "messages", "logs", "workflows", "idempotency", "files",
                  "extractions", "chunks"):
        op.drop_table(table)  # their indexes go with them
    op.execute("DROP TABLE IF EXISTS chunks_fts")
