"""Files (upload metadata) and the extraction cache, with the files' full-text chunks."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from sqlalchemy import delete, func, or_, select
from sqlalchemy.engine import Connection
from sqlmodel import col

from app.store.database import Database
from app.store.records import Owner
from app.store.repository.chunks import delete_chunks_tx, insert_chunks_tx
from app.store.tables import ExtractionRow, FileRow, table_of

F = FileRow


class FilesGoneError(LookupError):
    """Files named by a request were deleted (with their last workflow) before its write."""

    def __init__(self, ids: list[int]) -> None:
        super().__init__(ids)
        self.ids = ids


def hold_files_tx(conn: Connection, owner: Owner, ids: Sequence[int]) -> None:
    """Lock the owner's files `ids` against their deletion until the transaction ends (FOR KEY SHARE on
    PostgreSQL; SQLite's write transactions run one at a time), or FilesGoneError naming those gone."""
    if not ids:
        return
    held = {fid for (fid,) in conn.execute(
        select(col(F.id))
        .where(col(F.id).in_(list(ids)), col(F.mandate_id) == owner.mandate_id, col(F.user_id) == owner.user_id)
        .with_for_update(read=True, key_share=True))}
    if gone := [fid for fid in ids if fid not in held]:
        raise FilesGoneError(gone)


def forget_unused_contents_tx(conn: Connection, shas: Sequence[str], is_sqlite: bool) -> None:
    """Drop what was derived from the bytes of content hashes that no file has any more: their
    full-text chunks and their cached extractions (with a password too: keyed "sha256:...")."""
    if not shas:
        return
    used = {s for (s,) in conn.execute(select(col(F.sha256)).where(col(F.sha256).in_(list(shas))))}
    gone = sorted(set(shas) - used)
    if not gone:
        return
    delete_chunks_tx(conn, gone, is_sqlite)
    key = col(ExtractionRow.key)
    conn.execute(delete(ExtractionRow).where(or_(key.in_(gone), *(key.like(f"{s}:%") for s in gone))))


class FileStore:
    """Queries over files and cached extractions."""

    def __init__(self, db: Database) -> None:
        self.db = db

    async def add_files(self, rows: Sequence[FileRow]) -> list[FileRow]:
        return await self.db.run_write(self.add_files_tx, rows)

    def add_files_tx(self, conn: Connection, rows: Sequence[FileRow]) -> list[FileRow]:
        out = []
        for row in rows:
            values = row.model_dump(exclude={"id"})
            new_id = (conn.execute(table_of(F).insert().values(**values).returning(col(F.id)))).scalar_one()
            out.append(row.model_copy(update={"id": new_id}))
        return out

    async def files(self, owner: Owner, ids: Sequence[int]) -> dict[int, FileRow]:
        if not ids:
            return {}
        async with self.db.reader.connect() as conn:
            result = await conn.execute(
                select(F)
                .where(col(F.id).in_(list(ids)), col(F.mandate_id) == owner.mandate_id, col(F.user_id) == owner.user_id)
            )
            return {row.id: FileRow.model_validate(row._mapping) for row in result}

    async def produced(self, owner: Owner, limit: int) -> list[FileRow]:
        """The owner's files that agents produced, newest first."""
        async with self.db.reader.connect() as conn:
            result = await conn.execute(
                select(F)
                .where(col(F.mandate_id) == owner.mandate_id, col(F.user_id) == owner.user_id, col(F.origin) == "agent")
                .order_by(col(F.id).desc()).limit(limit))
            return [FileRow.model_validate(row._mapping) for row in result]

    async def files_by_id(self, ids: Sequence[int]) -> dict[int, FileRow]:
        if not ids:
            return {}
        return await self.db.run_read(self.files_by_id_tx, ids)

    def files_by_id_tx(self, conn: Connection, ids: Sequence[int]) -> dict[int, FileRow]:
        if not ids:
            return {}
        result = conn.execute(select(F).where(col(F.id).in_(list(ids))))
        return {row.id: FileRow.model_validate(row._mapping) for row in result}

    async def sha_in_use(self, sha256: str) -> bool:
        async with self.db.reader.connect() as conn:
            return (await conn.execute(select(func.count()).where(col(F.sha256) == sha256))).scalar_one() > 0

    async def extraction(self, key: str) -> ExtractionRow | None:
        async with self.db.reader.connect() as conn:
            row = (await conn.execute(select(ExtractionRow).where(col(ExtractionRow.key) == key))).first()
            return ExtractionRow.model_validate(row._mapping) if row else None

    async def save_extraction(self, row: ExtractionRow, sha256: str = "", chunks: Sequence[dict[str, Any]] = ()) -> None:
        """Cache an extraction, with the file's full-text chunks, in one transaction."""
        return await self.db.run_write(self._save_extraction_tx, row, sha256, chunks)

    def _save_extraction_tx(self, conn: Connection, row: ExtractionRow, sha256: str = "",
                            chunks: Sequence[dict[str, Any]] = ()) -> None:
        conn.execute(
            self.db.insert(table_of(ExtractionRow)).values(**row.model_dump()).on_conflict_do_nothing(
                index_elements=["key"]
            )
        )
        insert_chunks_tx(conn, sha256, chunks, self.db.is_sqlite)
