"""File bytes in the database (FILE_STORE=database): 1 MB rows by SHA-256 and order.

Revision ID: 0002_file_chunks
Revises: 0001_baseline
Create Date: 2026-11-23
"""

from __future__ import annotations

import sqlalchemy as sa
import sqlmodel
from alembic import op

revision = "0002_file_chunks"
down_revision = "0001_baseline"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table("file_chunks",
                    sa.Column("sha256", sqlmodel.sql.sqltypes.AutoString(), nullable=False),
                    sa.Column("seq", sa.Integer(), nullable=False),
                    sa.Column("data", sa.LargeBinary(), nullable=False),
                    sa.PrimaryKeyConstraint("sha256", "seq"))


def downgrade() -> None:
    op.drop_table("file_chunks")
