"""The full-text index rebuilt: a sheet's rows are passages of their own now, with their headings.

Chunks stored before were cut from the flattened sheet, and an answer would quote those. They are
dropped; each file's chunks are built again, the new way, the next time a round reads the file
(`app.rounds.documents.Documents.read`), and until then the file is ranked in memory the new way.

Revision ID: 0004_reindex_rows
Revises: 0003_replicas
Create Date: 2026-11-23
"""

from __future__ import annotations

from alembic import op

revision = "0004_reindex_rows"
down_revision = "0003_replicas"
branch_labels = None
depends_on = None


def upgrade() -> None:
    if op.get_bind().dialect.name == "sqlite":
        op.execute("DELETE FROM chunks_fts")
    op.execute("DELETE FROM chunks")


def downgrade() -> None:
    pass  # the rebuilt chunks serve the older code as well
