"""Rounds that wait for the user: what a workflow waits for, until when, the last decision, the
part of the round running, the workflow's review default, a round's own review setting, and posts queued for the next round.

Revision ID: 0005_waiting
Revises: 0004_reindex_rows
Create Date: 2026-11-25
"""

from __future__ import annotations

import sqlalchemy as sa
import sqlmodel
from alembic import op

revision = "0005_waiting"
down_revision = "0004_reindex_rows"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("workflows") as batch:
        batch.add_column(sa.Column("waiting_for", sa.JSON(), nullable=True))
        batch.add_column(sa.Column("wait_expires", sa.DateTime(timezone=True), nullable=True))
        batch.add_column(sa.Column("decision", sa.JSON(), nullable=True))
        batch.add_column(sa.Column("segment", sa.Integer(), nullable=False, server_default="0"))
        batch.add_column(sa.Column("review", sqlmodel.sql.sqltypes.AutoString(), nullable=False, server_default=""))
    op.create_index("ix_workflows_wait_expires", "workflows", ["wait_expires"])
    with op.batch_alter_table("round_files") as batch:
        batch.add_column(sa.Column("review", sqlmodel.sql.sqltypes.AutoString(), nullable=False, server_default=""))
    op.create_table("queued_posts",
                    sa.Column("id", sa.BigInteger().with_variant(sa.Integer(), "sqlite"), autoincrement=True,
                              nullable=False),
                    sa.Column("workflow_id", sa.String(), nullable=False),
                    sa.Column("prompt", sqlmodel.sql.sqltypes.AutoString(), nullable=False),
                    sa.Column("file_ids", sa.JSON(), nullable=False),
                    sa.Column("passwords", sa.JSON(), nullable=False),
                    sa.Column("review", sqlmodel.sql.sqltypes.AutoString(), nullable=False),
                    sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
                    sa.ForeignKeyConstraint(["workflow_id"], ["workflows.id"], ondelete="CASCADE"),
                    sa.PrimaryKeyConstraint("id"),
                    sqlite_autoincrement=True)
    op.create_index("ix_queued_posts_workflow_id", "queued_posts", ["workflow_id"])


def downgrade() -> None:
    op.drop_index("ix_queued_posts_workflow_id", "queued_posts")
    op.drop_table("queued_posts")
    with op.batch_alter_table("round_files") as batch:
        batch.drop_column("review")
    op.drop_index("ix_workflows_wait_expires", "workflows")
    with op.batch_alter_table("workflows") as batch:
        for name in ("review", "segment", "decision", "wait_expires", "waiting_for"):
            batch.drop_column(name)
