"""Members of ZIP-based document packages (ODF parts, OOXML sheets): the one place our own code
inflates them, so a limit on a part's inflated size is set here for every such format."""

from __future__ import annotations

import zipfile


def read_part(archive: zipfile.ZipFile, name: str, limit: int | None = None) -> bytes:
    """One member of the package, inflated (at most `limit` bytes of it when given)."""
    with archive.open(name) as stream:
        return stream.read() if limit is None else stream.read(limit)
