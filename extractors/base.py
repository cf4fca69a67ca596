"""What extraction produces: content items with their summary and how they were made."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import msgspec


class ContentItem(msgspec.Struct):
    """One piece of a document: a page, a sheet, a slide, a table, an image, a notice.

    The one shape of an item from the extractor to the wire: the extraction cache and a
    message's documents store it as it is, agents read it, and only the view of a message
    turns it into the contract's camelCase object.
    """

    sequence_nr: int
    name: str  # e.g. "page 3", "sheet Revenue", "slide 2", "encrypted"
    ext: str  # "txt", "csv", "md", "png", ...
    content_type: str  # MIME type of `data`
    data: str  # text, or base64 when base64_encoded
    is_text: bool = True
    base64_encoded: bool = False
    summary: str = ""  # static summary, made without a model
    metadata: dict[str, Any] = {}  # how it was extracted, page, sheet... (msgspec copies the default)


@dataclass
class Extraction:
    """The result of extracting one file. `status` is "ok", "partial", "encrypted", "corrupt",
    "unsupported", "refused" (an archive over its unpacking limits) or "timeout"; `warnings` are sentences meant for the workflow log."""

    mime: str
    status: str
    items: list[ContentItem] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    # Seconds the file waited for its worker process to start (0 when a warm one took it).
    startup_seconds: float = 0.0


# Statuses of a file whose content could not be read at all (see `Extraction`); "error" is the service's:
# the file was read but what was read could not be stored.
UNREAD = ("encrypted", "corrupt", "unsupported", "refused", "timeout", "error")


def is_notice(item: ContentItem) -> bool:
    """A content item that says why something could not be read (`registry.failure`): never document text."""
    return bool(item.metadata.get("status"))


def unread_reason(contents: Sequence[ContentItem]) -> str:
    """The status of a document none of whose content could be read ("encrypted", ...), else ""."""
    if not contents:
        return ""
    statuses = []
    for item in contents:
        meta = item.metadata
        if meta.get("extractor") == "none":  # the bytes kept for a format we do not read
            statuses.append("unsupported")
        elif meta.get("status") in UNREAD:
            statuses.append(meta["status"])
        else:
            return ""
    return statuses[0]
