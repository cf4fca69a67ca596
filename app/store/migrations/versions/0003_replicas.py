"""Replicas that take over each other's rounds: one row per replica, its heartbeat and its takeover.

Revision ID: 0003_replicas
Revises: 0002_file_chunks
Create Date: 2026-11-23
"""

from __future__ import annotations

import sqlalchemy as sa
import sqlmodel
from alembic import op

revision = "0003_replicas"
down_revision = "0002_file_chunks"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table("replicas",
                    sa.Column("executor_id", sqlmodel.sql.sqltypes.AutoString(), nullable=False),
                    sa.Column("state", sqlmodel.sql.sqltypes.AutoString(), nullable=False),
                    sa.Column("last_beat", sa.DateTime(timezone=True), nullable=False),
                    sa.Column("started_at", sa.DateTime(timezone=True), nullable=False),
                    sa.Column("taken_by", sqlmodel.sql.sqltypes.AutoString(), nullable=True),
                    sa.Column("taken_at", sa.DateTime(timezone=True), nullable=True),
                    sa.PrimaryKeyConstraint("executor_id"))


def downgrade() -> None:
    op.drop_table("replicas")
