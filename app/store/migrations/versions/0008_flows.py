"""Flows (saved workflow definitions), their published versions, definitions by hash, and the node runs
of flow rounds.

Revision ID: 0008_flows
Revises: 0007_round_memory
Create Date: 2026-11-28
"""

from __future__ import annotations

import sqlalchemy as sa
import sqlmodel
from alembic import op

revision = "0008_flows"
down_revision = "0007_round_memory"
branch_labels = None
depends_on = None

ID = sa.BigInteger().with_variant(sa.Integer(), "sqlite")
TEXT = sqlmodel.sql.sqltypes.AutoString
TIME = sqlmodel.sql.sqltypes.UTCDateTime


def upgrade() -> None:
    with op.batch_alter_table("round_files") as batch:
        batch.add_column(sa.Column("flow", sa.JSON(), nullable=True))
    op.create_table("flows",
                    sa.Column("id", ID, autoincrement=True, nullable=False),
                    sa.Column("mandate_id", sa.Integer(), nullable=False),
                    sa.Column("user_id", sa.Integer(), nullable=False),
                    sa.Column("name", TEXT(), nullable=False),
                    sa.Column("description", TEXT(), nullable=False),
                    sa.Column("draft_hash", TEXT(), nullable=False),
                    sa.Column("created_at", TIME(), nullable=False),
                    sa.Column("updated_at", TIME(), nullable=False),
                    sa.PrimaryKeyConstraint("id"),
                    sqlite_autoincrement=True)
    op.create_index("ix_flows_owner_updated", "flows", ["mandate_id", "user_id", "updated_at"])
    op.create_table("flow_versions",
                    sa.Column("flow_id", ID, nullable=False),
                    sa.Column("version", sa.Integer(), nullable=False),
                    sa.Column("hash", TEXT(), nullable=False),
                    sa.Column("name", TEXT(), nullable=False),
                    sa.Column("comment", TEXT(), nullable=False),
                    sa.Column("author", TEXT(), nullable=False),
                    sa.Column("created_at", TIME(), nullable=False),
                    sa.ForeignKeyConstraint(["flow_id"], ["flows.id"], ondelete="CASCADE"),
                    sa.PrimaryKeyConstraint("flow_id", "version"))
    op.create_table("flow_definitions",
                    sa.Column("hash", TEXT(), nullable=False),
                    sa.Column("body", TEXT(), nullable=False),
                    sa.PrimaryKeyConstraint("hash"))
    op.create_table("node_runs",
                    sa.Column("workflow_id", sa.String(), nullable=False),
                    sa.Column("round", sa.Integer(), nullable=False),
                    sa.Column("path", TEXT(), nullable=False),
                    sa.Column("seq", sa.Integer(), nullable=False),
                    sa.Column("node_id", TEXT(), nullable=False),
                    sa.Column("type", TEXT(), nullable=False),
                    sa.Column("status", TEXT(), nullable=False),
                    sa.Column("attempts", sa.Integer(), nullable=False),
                    sa.Column("started_at", sa.DateTime(timezone=True), nullable=True),
                    sa.Column("finished_at", sa.DateTime(timezone=True), nullable=True),
                    sa.Column("record", sa.JSON(), nullable=False),
                    sa.ForeignKeyConstraint(["workflow_id"], ["workflows.id"], ondelete="CASCADE"),
                    sa.PrimaryKeyConstraint("workflow_id", "round", "path"))


def downgrade() -> None:
    with op.batch_alter_table("round_files") as batch:
        batch.drop_column("flow")
    op.drop_table("node_runs")
    op.drop_table("flow_definitions")
    op.drop_table("flow_versions")
    op.drop_index("ix_flows_owner_updated", table_name="flows")
    op.drop_table("flows")
