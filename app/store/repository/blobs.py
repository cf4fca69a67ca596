"""The file store's SQL (FILE_STORE=database): a file's bytes as rows of 1 MB, by SHA-256 and order."""

from __future__ import annotations

from sqlalchemy import delete, exists, select, text
from sqlalchemy.dialects.postgresql import insert as pg_insert
from sqlalchemy.dialects.sqlite import insert as sqlite_insert
from sqlalchemy.engine import Connection
from sqlmodel import col

from app.store.database import Database
from app.store.tables import FileChunkRow, FileRow, table_of

B = FileChunkRow
CHUNK = 1 << 20
READ_BATCH = 8  # chunks fetched per query: 8 MB at most in flight
HASH_LOCKS = 0x46524D  # the namespace of the per-hash advisory locks on PostgreSQL ("FRM")


def lock_hash_tx(conn: Connection, sha256: str) -> None:
    """Hold the lock of one content hash until the transaction ends: its bytes are kept (`ensure_blob_tx`)
    and removed (`release_blob_tx`) one at a time. On SQLite every write transaction (BEGIN IMMEDIATE)
    already holds the database's only write lock; on PostgreSQL an advisory lock per hash, taken
    before the statements that look, so that they see what the other one committed."""
    if conn.dialect.name == "postgresql":
        key = int(sha256[:8], 16) - (1 << 31) if len(sha256) >= 8 else 0  # int4: a shared lock now and then
        conn.execute(text("SELECT pg_advisory_xact_lock(:space, :key)"), {"space": HASH_LOCKS, "key": key})


def in_use_tx(conn: Connection, sha256: str) -> bool:
    """Whether a file row has these bytes."""
    return bool(conn.execute(select(exists().where(col(FileRow.sha256) == sha256))).scalar())


def ensure_blob_tx(conn: Connection, sha256: str, data: bytes) -> bool:
    """After the rows that use `data` were written: store it again if a release removed it meanwhile
    (True when it had to)."""
    lock_hash_tx(conn, sha256)
    if conn.execute(select(col(B.seq)).where(col(B.sha256) == sha256, col(B.seq) == 0)).first() is not None:
        return False
    insert_blob_tx(conn, sha256, data)
    return True


def release_blob_tx(conn: Connection, sha256: str) -> bool:
    """Delete the bytes unless a file row has them; True when no file has them (deleted, or not there)."""
    lock_hash_tx(conn, sha256)
    if in_use_tx(conn, sha256):
        return False
    conn.execute(delete(table_of(B)).where(col(B.sha256) == sha256))
    return True


def insert_blob_tx(conn: Connection, sha256: str, data: bytes) -> None:
    """Store `data` under `sha256`; the same bytes stored twice (or by two replicas at once) leave one copy."""
    insert = pg_insert if conn.dialect.name == "postgresql" else sqlite_insert
    view = memoryview(data)
    # One statement per chunk: a single 1 MB copy at a time on its way to the driver.
    for seq, start in enumerate(range(0, max(len(data), 1), CHUNK)):
        conn.execute(insert(table_of(B)).values(sha256=sha256, seq=seq, data=bytes(view[start:start + CHUNK]))
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
                    select(col(B.data))
                    .where(col(B.sha256) == sha256, col(B.seq) >= len(parts), col(B.seq) < len(parts) + READ_BATCH)
                    .order_by(col(B.seq)))).scalars().all()
                parts += batch
                if len(batch) < READ_BATCH:
                    return parts

    async def ensure(self, sha256: str, data: bytes) -> bool:
        return await self.db.run_write(ensure_blob_tx, sha256, data)

    async def release(self, sha256: str) -> bool:
        return await self.db.run_write(release_blob_tx, sha256)

    async def in_use(self, sha256: str) -> bool:
        """Whether a file row has these bytes, as committed now."""
        return await self.db.run_read(in_use_tx, sha256)
