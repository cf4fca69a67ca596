"""Chunk embeddings beside the full-text index (hybrid retrieval): one float16 vector per chunk,
with the model that made it.

Revision ID: 0006_chunk_vectors
Revises: 0005_waiting
Create Date: 2026-11-25
"""

from __future__ import annotations

import sqlalchemy as sa
import sqlmodel
from alembic import op

revision = "0006_chunk_vectors"
down_revision = "0005_waiting"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table("chunk_vectors",
                    sa.Column("chunk_id", sa.BigInteger().with_variant(sa.Integer(), "sqlite"), nullable=False,
                              autoincrement=False),
                    sa.Column("sha256", sqlmodel.sql.sqltypes.AutoString(), nullable=False),
                    sa.Column("model", sqlmodel.sql.sqltypes.AutoString(), nullable=False),
                    sa.Column("vector", sa.LargeBinary(), nullable=False),
                    sa.PrimaryKeyConstraint("chunk_id"))
    op.create_index(op.f("ix_chunk_vectors_sha256"), "chunk_vectors", ["sha256"], unique=False)


def downgrade() -> None:
    op.drop_index(op.f("ix_chunk_vectors_sha256"), table_name="chunk_vectors")
    op.drop_table("chunk_vectors")
