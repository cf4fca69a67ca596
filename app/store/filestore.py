"""Where file bytes live (uploads and agents' outputs), addressed by their SHA-256: a directory
under DATA_DIR, or the database, so that every replica on one PostgreSQL database reads every
upload (`FILE_STORE=local|database`).

Reading checks the bytes against their address: damaged or missing bytes raise
`StoredFileError`, never come back wrong. Hashing and file I/O run in a worker thread; the
SQL is `app.store.repository.blobs`.

Files share the bytes of one content, so storing and removing race: an upload finds the bytes
there (and skips writing them) while a delete, seeing no file row with them yet, removes them.
Hence three steps: `put` the bytes, write the rows that use them, `keep` them (store them again
should a release have removed them since); and `release` removes bytes only where no row has
them, atomically with respect to `keep`: in the database under a lock per hash (see
`app.store.repository.blobs.lock_hash_tx`); in the directory by moving the bytes aside first, looking
for a row again and moving them back when one came (a `keep` that looks after that row was
written finds the bytes gone and writes them again).

In the database the bytes are rows of 1 MB (`file_chunks`): measured against one bytea row and
large objects (bench/blob_layouts.py), they wrote and read 50 MB in less time with the least
memory, are written and deleted in an ordinary transaction (no orphaned large objects), and the
same table serves SQLite.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import logging
import os
import tempfile
import time
import uuid
from pathlib import Path
from typing import Protocol

from app.errors import StoredFileError
from app.store.database import Database
from app.store.repository.blobs import BlobRows

log = logging.getLogger("foreman.files")

PARTIAL = ".partial-"  # name prefix of a file being written; renamed to its hash once complete
PARTIAL_AGE_SECONDS = 600.0  # a partial file this old is no one's write in progress


class BlobStore(Protocol):
    """Bytes by their SHA-256."""

    kind: str

    async def put(self, data: bytes) -> str:
        """Store `data` (once per content) and return its SHA-256."""
        ...

    async def get(self, sha256: str) -> bytes:
        """The bytes stored under `sha256`, checked; `StoredFileError` when missing or damaged."""
        ...

    async def keep(self, sha256: str, data: bytes) -> None:
        """After the rows that use `data` were written: make sure its bytes are (still) stored."""
        ...

    async def release(self, sha256: str) -> None:
        """Remove the bytes unless a file row has them (now, or by a `keep` racing this)."""
        ...


def sha256_of(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def checked(sha256: str, data: bytes) -> bytes:
    """`data` if it hashes to `sha256`; else the error a reader sees instead of wrong bytes."""
    if sha256_of(data) != sha256:
        log.error("Stored bytes of %s do not match their SHA-256 (%d bytes read).", sha256, len(data))
        raise StoredFileError("The stored copy of this file is damaged (its bytes no longer match their "
                              "checksum), so it is not served. Upload the file again.", code="stored_file_damaged")
    return data


def missing(sha256: str) -> StoredFileError:
    log.error("No stored bytes for %s.", sha256)
    return StoredFileError("The stored copy of this file is missing on the server. Upload the file again.",
                           code="stored_file_missing")


class LocalBlobs:
    """A content-addressed directory (DATA_DIR/files): one replica, or a shared volume."""

    kind = "local"

    def __init__(self, root: Path, rows: BlobRows | None = None) -> None:
        self.root = root
        self.rows = rows  # who says whether a file row has some bytes (`release`)
        root.mkdir(parents=True, exist_ok=True)
        self.sweep()

    def sweep(self, older_than: float = PARTIAL_AGE_SECONDS) -> int:
        """Remove partial writes (a crash or a full disk mid-write) older than `older_than` seconds;
        how many. At start-up: a write of another replica sharing the volume is younger than that."""
        removed, now = 0, time.time()
        for partial in [*self.root.glob(f"*/{PARTIAL}*"), *self.root.glob("*/tmp*")]:
            try:
                if now - partial.stat().st_mtime >= older_than:
                    partial.unlink()
                    removed += 1
            except OSError:
                continue
        if removed:
            log.info("Removed %d partial file(s) left in %s by an interrupted write.", removed, self.root)
        return removed

    def path(self, sha256: str) -> Path:
        return self.root / sha256[:2] / sha256

    async def put(self, data: bytes) -> str:
        return await asyncio.to_thread(self._put, data)

    def _put(self, data: bytes) -> str:
        sha = sha256_of(data)
        target = self.path(sha)
        if not target.exists():
            target.parent.mkdir(parents=True, exist_ok=True)
            fd, tmp = tempfile.mkstemp(dir=target.parent, prefix=PARTIAL)
            try:
                with os.fdopen(fd, "wb") as out:
                    out.write(data)
                os.replace(tmp, target)  # atomic: a reader sees all of the bytes or none
            except BaseException:  # a full disk (ENOSPC) mid-write: no partial file stays behind
                with contextlib.suppress(OSError):
                    os.unlink(tmp)
                raise
        return sha

    async def get(self, sha256: str) -> bytes:
        return await asyncio.to_thread(self.read, sha256)

    def read(self, sha256: str) -> bytes:
        """The checked bytes (blocking)."""
        try:
            data = self.path(sha256).read_bytes()
        except FileNotFoundError:
            raise missing(sha256) from None
        return checked(sha256, data)

    def has(self, sha256: str) -> bool:
        return self.path(sha256).exists()

    async def keep(self, sha256: str, data: bytes) -> None:
        if not await asyncio.to_thread(self.has, sha256):
            log.info("The bytes of %s were released while a file was being written with them; stored again.",
                     sha256)
            await asyncio.to_thread(self._put, data)

    async def release(self, sha256: str) -> None:
        assert self.rows is not None, "a directory store that releases bytes knows the file rows"
        if await self.rows.in_use(sha256):
            return
        aside = self.path(sha256).with_name(f"{sha256}.released-{uuid.uuid4().hex}")
        try:
            await asyncio.to_thread(os.replace, self.path(sha256), aside)
        except FileNotFoundError:
            return
        # A row written before this look keeps the bytes; one written after it is followed by a
        # `keep` that finds them gone and writes them again.
        if await self.rows.in_use(sha256):
            await asyncio.to_thread(os.replace, aside, self.path(sha256))
        else:
            await asyncio.to_thread(aside.unlink, missing_ok=True)

    async def remove(self, sha256: str) -> None:
        """Delete the bytes whatever uses them (the legacy directory of the database store)."""
        await asyncio.to_thread(self.path(sha256).unlink, missing_ok=True)

    def stored(self, older_than: float) -> list[str]:
        """The content hashes stored here whose bytes were written more than `older_than` seconds ago
        (blocking): younger ones may belong to an upload whose row is being written."""
        now, out = time.time(), []
        for path in self.root.glob("*/*"):
            if path.name.startswith((PARTIAL, "tmp")) or len(path.name) != 64:
                continue
            try:
                if now - path.stat().st_mtime > older_than:
                    out.append(path.name)
            except OSError:
                continue
        return out


class DatabaseBlobs:
    """The bytes in the application database, in rows of 1 MB: every replica reads every file.

    Files stored in DATA_DIR before this store was chosen are still found there (`legacy`) and
    copied into the database on first read.
    """

    kind = "database"

    def __init__(self, db: Database, legacy: LocalBlobs | None = None) -> None:
        self.rows = BlobRows(db)
        self.legacy = legacy

    async def put(self, data: bytes) -> str:
        sha = await asyncio.to_thread(sha256_of, data)
        await self.rows.put(sha, data)
        return sha

    async def get(self, sha256: str) -> bytes:
        parts = await self.rows.read(sha256)
        if not parts:
            return await self._adopt(sha256)
        # Joining 50 MB is a copy the event loop should not wait on: done with the hash, in a thread.
        return await asyncio.to_thread(lambda: checked(sha256, b"".join(parts)))

    async def _adopt(self, sha256: str) -> bytes:
        if self.legacy is None or not await asyncio.to_thread(self.legacy.has, sha256):
            raise missing(sha256)
        data = await asyncio.to_thread(self.legacy.read, sha256)
        await self.rows.put(sha256, data)
        log.info("File bytes %s moved from DATA_DIR into the database.", sha256)
        return data

    async def keep(self, sha256: str, data: bytes) -> None:
        if await self.rows.ensure(sha256, data):
            log.info("The bytes of %s were released while a file was being written with them; stored again.",
                     sha256)

    async def release(self, sha256: str) -> None:
        if await self.rows.release(sha256) and self.legacy is not None:
            await self.legacy.remove(sha256)


def open_store(kind: str, db: Database, root: Path) -> BlobStore:
    """The store FILE_STORE names."""
    if kind == "database":
        return DatabaseBlobs(db, legacy=LocalBlobs(root))
    return LocalBlobs(root, BlobRows(db))
