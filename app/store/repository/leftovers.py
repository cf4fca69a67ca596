"""The leftovers collector's SQL: uploads no workflow ever used, and stored bytes without a file row.

One replica collects at a time: on PostgreSQL each pass holds a transaction-level advisory lock
(a replica that does not get it skips the pass); SQLite has one replica.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime

from sqlalchemy import delete, func, select
from sqlalchemy.engine import Connection
from sqlmodel import col

from app.store.database import Database
from app.store.repository.files import forget_unused_contents_tx
from app.store.tables import DocumentRow, FileChunkRow, FileRow, RoundFileRow

F, D = FileRow, DocumentRow
LOCK = 0x666F72656D616E  # "foreman": the advisory lock of the collector
BATCH = 500  # files removed per pass at most


def _our_turn(conn: Connection) -> bool:
    if conn.dialect.name != "postgresql":
        return True
    return bool(conn.execute(select(func.pg_try_advisory_xact_lock(LOCK))).scalar())


class LeftoverStore:
    """Finds and removes what no workflow holds."""

    def __init__(self, db: Database) -> None:
        self.db = db

    async def remove_unattached(self, created_before: datetime) -> list[FileRow] | None:
        """Delete uploads made before `created_before` that no message's documents and no round
        being started name, with what was derived from their bytes; the rows removed, or None when
        another replica is collecting now."""
        return await self.db.run_write(self._remove_unattached_tx, created_before)

    def _remove_unattached_tx(self, conn: Connection, created_before: datetime) -> list[FileRow] | None:
        if not _our_turn(conn):
            return None
        pending = {fid for (ids,) in conn.execute(select(col(RoundFileRow.file_ids))) for fid in ids or ()}
        candidates = conn.execute(
            select(F).where(col(F.origin) == "upload", col(F.created_at) < created_before,
                            ~col(F.id).in_(select(col(D.file_id)).where(col(D.file_id).is_not(None))))
            .order_by(col(F.id)).limit(BATCH)).all()
        rows = [FileRow.model_validate(r._mapping) for r in candidates if r.id not in pending]
        if not rows:
            return []
        conn.execute(delete(F).where(col(F.id).in_([r.id for r in rows])))
        forget_unused_contents_tx(conn, sorted({r.sha256 for r in rows}), self.db.is_sqlite)
        return rows

    async def unknown(self, shas: Sequence[str]) -> set[str]:
        """The content hashes among `shas` that no file row names."""
        if not shas:
            return set()
        return await self.db.run_read(self._unknown_tx, shas)

    def _unknown_tx(self, conn: Connection, shas: Sequence[str]) -> set[str]:
        known: set[str] = set()
        for start in range(0, len(shas), BATCH):
            part = list(shas[start:start + BATCH])
            known.update(s for (s,) in conn.execute(select(col(F.sha256)).where(col(F.sha256).in_(part)).distinct()))
        return set(shas) - known

    async def stored_in_database(self) -> list[str]:
        """The content hashes of the bytes stored in the database (FILE_STORE=database)."""
        return await self.db.run_read(
            lambda conn: [s for (s,) in conn.execute(select(col(FileChunkRow.sha256)).distinct())])
