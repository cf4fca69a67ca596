"""The file store's SQL (FILE_STORE=database): a file's bytes as rows of 1 MB, by SHA-256 and order."""

from __future__ import annotations

from sqlalchemy import delete, select
from sqlalchemy.dialects.postgresql import insert as pg_insert
from sqlalchemy.dialects.sqlite import insert as sqlite_insert
from sqlalchemy.engine import Connection

from app.store.database import Database
from app.store.tables import FileChunkRow

B = FileChunkRow
CHUNK = 1 << 20
READ_BATCH = 8  # chunks fetched per query: 8 MB at most in flight


def insert_blob_tx(conn: Connection, sha256: str, data: bytes) -> None:
    """Store `data` under `sha256`; the same bytes stored twice (or by two replicas at once) leave one copy."""
    insert = pg_insert if conn.dialect.name == "postgresql" else sqlite_insert
    view = memoryview(data)
    # One statement per chunk: a single 1 MB copy at a time on its way to the driver.
    for seq, start in enumerate(range(0, max(len(data), 1), CHUNK)):
        conn.execute(insert(B.__table__).values(sha256=sha256, seq=seq, data=bytes(view[start:start + CHUNK]))
                     .on_conflict_do_nothing(index_elements=["sha256", "seq"]))


class BlobRows:
    """Files' bytes in the application database."""

    def __init__(self, db: Database) -> None:
        self.db = db

    async def put(self, sha256: str, data: bytes) -> None:
        await self.db.run_write(insert_blob_tx, sha256, data)

    async def read(self, sha256: str) -> list[bytes]:
        """The chunks in order; [] when nothing is stored under `sha256`."""
        parts: list[bytes] = []
        async with self.db.reader.connect() as conn:
            while True:
                batch = (await conn.execute(
                    select(B.data).where(B.sha256 == sha256, B.seq >= len(parts), B.seq < len(parts) + READ_BATCH)
                    .order_by(B.seq))).scalars().all()
                parts += batch
                if len(batch) < READ_BATCH:
                    return parts

    async def delete(self, sha256: str) -> None:
        await self.db.run_write(lambda conn: conn.execute(delete(B.__table__).where(B.sha256 == sha256)))
