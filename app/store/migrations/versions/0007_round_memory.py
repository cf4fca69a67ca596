"""What later rounds remember of an ended round (its turns' shorter forms with their token counts), so a
round reads only the newest rounds that fit its history instead of every message of the workflow.
Workflows from before have no rows: a round computes the ones it reaches, once.

Revision ID: 0007_round_memory
Revises: 0006_chunk_vectors
Create Date: 2026-11-26
"""

from __future__ import annotations

import sqlalchemy as sa
import sqlmodel
from alembic import op

revision = "0007_round_memory"
down_revision = "0006_chunk_vectors"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table("round_memory",
                    sa.Column("workflow_id", sa.String(), nullable=False),
                    sa.Column("round", sa.Integer(), nullable=False),
                    sa.Column("turns", sa.JSON(), nullable=False),
                    sa.Column("delivered", sa.JSON(), nullable=False),
                    sa.Column("size", sa.Integer(), nullable=False),
                    sa.Column("finished", sa.Boolean(), nullable=False),
                    sa.Column("terms", sqlmodel.sql.sqltypes.AutoString(), nullable=False),
                    sa.ForeignKeyConstraint(["workflow_id"], ["workflows.id"], ondelete="CASCADE"),
                    sa.PrimaryKeyConstraint("workflow_id", "round"))


def downgrade() -> None:
    op.drop_table("round_memory")
