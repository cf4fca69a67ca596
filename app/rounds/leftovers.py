"""Housekeeping: uploads never attached to a workflow, and stored bytes without a file row.

An upload that no round ever named is removed `UNATTACHED_UPLOAD_TTL_SECONDS` after it was made
(a schema fuzz left 211 of them). Bytes can lose their row in a crash between storing the bytes
and writing the row, or between deleting the row and the bytes: bytes no file row names are
removed once they are `ORPHAN_GRACE_SECONDS` old (local store: by the file's time; database
store: unnamed at two passes that far apart), so an upload in progress keeps its bytes (and
should it not, its `keep` stores them again). The engine runs a pass at start-up and every
`HOUSEKEEPING_SECONDS`; on PostgreSQL one replica at a time.
"""

from __future__ import annotations

import asyncio
import logging
import time
from dataclasses import dataclass, field
from datetime import timedelta

from app.clock import now
from app.store.filestore import BlobStore, LocalBlobs
from app.store.repository.files import FileStore
from app.store.repository.leftovers import LeftoverStore

log = logging.getLogger("foreman.leftovers")

ORPHAN_GRACE_SECONDS = 3600.0  # the default of the setting


@dataclass
class Collected:
    uploads: int = 0
    blobs: int = 0


@dataclass
class Collector:
    leftovers: LeftoverStore
    files: FileStore
    storage: BlobStore
    ttl_seconds: float
    grace_seconds: float = ORPHAN_GRACE_SECONDS
    # Database store: bytes found unnamed, and when first (time.monotonic()).
    _suspects: dict[str, float] = field(default_factory=dict)

    async def collect(self) -> Collected:
        """One pass; what it removed."""
        done = Collected()
        if self.ttl_seconds:
            rows = await self.leftovers.remove_unattached(now() - timedelta(seconds=self.ttl_seconds))
            if rows is None:
                return done  # another replica is collecting
            for sha in sorted({r.sha256 for r in rows}):
                # `release` removes the bytes only where no file row uses them, atomic with an upload's
                # `keep` of the same bytes (an upload racing the collector keeps them).
                await self.storage.release(sha)
            done.uploads = len(rows)
        for sha in await self._orphans():
            if not await self.files.sha_in_use(sha):  # named again meanwhile: kept
                await self.storage.release(sha)
                done.blobs += 1
        if done.uploads or done.blobs:
            log.info("Removed %d upload(s) no workflow used in %g s and %d stored file(s) without a row.",
                     done.uploads, self.ttl_seconds, done.blobs)
        return done

    async def _orphans(self) -> list[str]:
        if isinstance(self.storage, LocalBlobs):
            stored = await asyncio.to_thread(self.storage.stored, self.grace_seconds)
            return sorted(await self.leftovers.unknown(stored))
        unknown = await self.leftovers.unknown(await self.leftovers.stored_in_database())
        seen = time.monotonic()
        self._suspects = {sha: self._suspects.get(sha, seen) for sha in unknown}
        # Unnamed at an earlier pass too, and for the grace since: no upload in progress takes that long.
        return sorted(sha for sha, first in self._suspects.items() if first < seen and seen - first >= self.grace_seconds)

    async def run_forever(self, every: float) -> None:
        while True:
            try:
                await self.collect()
            except asyncio.CancelledError:
                raise
            except Exception:  # a passing database error must not end housekeeping
                log.exception("Collecting leftovers failed; trying again later.")
            await asyncio.sleep(every)
