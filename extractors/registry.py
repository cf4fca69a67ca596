"""The extractor registry: which function handles which MIME type."""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable
from dataclasses import dataclass, replace

from extractors.base import ContentItem, Extraction
from extractors.detect import detect_mime
from extractors.summary import describe

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Source:
    """One file to extract, with what we know about it."""

    data: bytes
    name: str
    mime: str
    password: str | None = None
    depth: int = 0  # how deep inside archives or attachments this file sits


Extractor = Callable[[Source, "ExtractorRegistry"], Extraction]


class DuplicateExtractorError(ValueError):
    """Raised when two extractors claim the same MIME type."""


class ExtractorRegistry:
    """Maps MIME types to extractors; the fallback handles everything else."""

    def __init__(self, fallback: Extractor) -> None:
        self._by_mime: dict[str, Extractor] = {}
        self._fallback = fallback

    def add(self, mime_or_list: str | Iterable[str], extractor: Extractor) -> None:
        """Register `extractor` for one or more MIME types; a type already taken is an error."""
        mimes = [mime_or_list] if isinstance(mime_or_list, str) else list(mime_or_list)
        for mime in mimes:
            if mime in self._by_mime:
                raise DuplicateExtractorError(f"an extractor for {mime} is already registered")
        for mime in mimes:
            self._by_mime[mime] = extractor

    def mimes(self) -> list[str]:
        """The MIME types with a dedicated extractor."""
        return sorted(self._by_mime)

    def extract(
        self,
        data: bytes,
        name: str,
        mime: str | None = None,
        password: str | None = None,
        depth: int = 0,
    ) -> Extraction:
        """Extract one file; never raises, a failure becomes a "corrupt" result."""
        try:
            mime = mime or detect_mime(data, name)
            source = Source(data=data, name=name, mime=mime, password=password, depth=depth)
            extraction = self._by_mime.get(mime, self._fallback)(source, self)
        except Exception as error:  # noqa: BLE001 - one bad file must not break the caller
            log.info("extraction of %s failed", name, exc_info=True)
            extraction = failure(mime or "application/octet-stream", "corrupt", name, error)
        return finish(extraction)


def failure(mime: str, status: str, name: str, error: BaseException | str, *, sentence: str | None = None,
            extractor: str = "notice") -> Extraction:
    """A result with one notice item saying why the file gave no content."""
    reason = error if isinstance(error, str) else f"{type(error).__name__}: {error}"
    sentence = sentence or f"{name} could not be extracted ({status}): {reason}"
    item = ContentItem(
        sequence_nr=1,
        name=status,
        ext="txt",
        content_type="text/plain",
        data=sentence,
        metadata={"extractor": extractor, "status": status},
    )
    return Extraction(mime=mime, status=status, items=[item], warnings=[sentence])


def nested(items: list[ContentItem], prefix: str, **metadata: object) -> list[ContentItem]:
    """Items of a file found inside another, renamed under `prefix` and summarised afresh."""
    return [
        replace(item, name=f"{prefix}: {item.name}", summary="", metadata={**item.metadata, **metadata})
        for item in items
    ]


def finish(extraction: Extraction) -> Extraction:
    """Number the items in order and give each a static summary."""
    items = []
    for number, item in enumerate(extraction.items, start=1):
        item = replace(item, sequence_nr=number)
        if not item.summary:
            item.summary = describe(item)
        items.append(item)
    extraction.items = items
    return extraction
