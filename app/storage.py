"""File bytes on disk, addressed by their SHA-256 (the same bytes are stored once)."""

from __future__ import annotations

import hashlib
import os
import tempfile
from pathlib import Path


class Storage:
    """A content-addressed folder under DATA_DIR."""

    def __init__(self, root: Path) -> None:
        self.root = root
        root.mkdir(parents=True, exist_ok=True)

    def path(self, sha256: str) -> Path:
        return self.root / sha256[:2] / sha256

    def put(self, data: bytes) -> str:
        """Store `data` (atomically) and return its SHA-256."""
        sha = hashlib.sha256(data).hexdigest()
        target = self.path(sha)
        if not target.exists():
            target.parent.mkdir(parents=True, exist_ok=True)
            fd, tmp = tempfile.mkstemp(dir=target.parent)
            with os.fdopen(fd, "wb") as out:
                out.write(data)
            os.replace(tmp, target)
        return sha

    def get(self, sha256: str) -> bytes:
        return self.path(sha256).read_bytes()

    def remove(self, sha256: str) -> None:
        self.path(sha256).unlink(missing_ok=True)
