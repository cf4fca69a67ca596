"""The extractor registry: which function handles which MIME type."""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

import msgspec

from extractors.base import ContentItem, Extraction
from extractors.detect import detect_mime
from extractors.limits import ExtractionLimits, RefusedError, cap_text, check_zip, is_zip
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
    # Called as (done, total) while a long file is read (pages of a PDF); only the top file reports.
    progress: Callable[[int, int], None] | None = field(default=None, compare=False, repr=False)

    def report(self, done: int, total: int) -> None:
        """Tell whoever waits how far extraction is; a failing listener never fails the file."""
        if self.progress is not None and self.depth == 0:
            try:
                self.progress(done, total)
            except Exception:  # noqa: BLE001 - progress is a courtesy, the extraction is the work
                log.debug("progress report failed", exc_info=True)


Extractor = Callable[[Source, "ExtractorRegistry"], Extraction]


class DuplicateExtractorError(ValueError):
    """Raised when two extractors claim the same MIME type."""


class ExtractorRegistry:
    """Maps MIME types to extractors; the fallback handles everything else."""

    def __init__(self, fallback: Extractor, limits: ExtractionLimits | None = None) -> None:
        self._by_mime: dict[str, Extractor] = {}
        self._fallback = fallback
        self.limits = limits or ExtractionLimits()

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
        progress: Callable[[int, int], None] | None = None,
    ) -> Extraction:
        """Extract one file; never raises, a failure becomes a "corrupt" result.

        A zip-based file (DOCX, XLSX, PPTX, OpenDocument, EPUB...) is refused before any parser
        inflates it when it would inflate beyond the limits; the text of the top file is cut at
        `limits.max_chars`.
        """
        try:
            mime = mime or detect_mime(data, name)
            if is_zip(data, mime):
                check_zip(data, self.limits)
            source = Source(data=data, name=name, mime=mime, password=password, depth=depth, progress=progress)
            extraction = self._by_mime.get(mime, self._fallback)(source, self)
        except RefusedError as error:
            log.info("%s was refused: %s", name, error)
            extraction = failure(mime or "application/octet-stream", "refused", name, f"{name} was not read: {error}.",
                                 sentence=f"{name} was not read: {error}.", extractor="limits")
        except MemoryError:
            raise  # the reader process is over its memory limit: extractors.runner fails the file and the process
        except Exception as error:  # noqa: BLE001 - one bad file must not break the caller
            log.info("extraction of %s failed", name, exc_info=True)
            extraction = failure(mime or "application/octet-stream", "corrupt", name, error)
        if depth == 0:
            extraction = cap_text(extraction, self.limits.max_chars)
        return finish(extraction)


def failure(mime: str, status: str, name: str, error: BaseException | str, *, sentence: str | None = None,
            extractor: str = "notice") -> Extraction:
    """A result with one notice item saying why the file gave no content."""
    if isinstance(error, str):
        reason = error
    else:  # the exception's text is for the server log; the person reads a sentence
        log.info("%s could not be extracted (%s): %s: %s", name, status, type(error).__name__, error)
        reason = _REASONS.get(status, _REASONS["corrupt"])
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


_REASONS = {
    "corrupt": "the file is damaged or is not in the format its type says",
    "unsupported": "this format is not read",
    "encrypted": "the file is encrypted",
}


def nested(items: list[ContentItem], prefix: str, **metadata: object) -> list[ContentItem]:
    """Items of a file found inside another, renamed under `prefix` and summarised afresh."""
    return [
        msgspec.structs.replace(item, name=f"{prefix}: {item.name}", summary="", metadata={**item.metadata, **metadata})
        for item in items
    ]


def finish(extraction: Extraction) -> Extraction:
    """Number the items in order, give each a static summary, and keep only plain data in them.

    Library objects (pypdf's string and number types are subclasses of str and int) must not
    leave the extractor: the result is stored as JSON and sent between processes.
    """
    items = []
    for number, item in enumerate(extraction.items, start=1):
        item = msgspec.structs.replace(item, sequence_nr=number, name=str(item.name), ext=str(item.ext),
                       content_type=str(item.content_type), data=str(item.data), summary=str(item.summary),
                       metadata=plain(item.metadata))
        if not item.summary:
            item.summary = describe(item)
        items.append(item)
    extraction.items = items
    extraction.mime = str(extraction.mime)
    extraction.warnings = [str(w) for w in extraction.warnings]
    return extraction


def plain(value: Any) -> Any:
    """`value` as JSON's own types: str, int, float, bool, None, lists and string-keyed dicts."""
    if value is None or type(value) in (str, int, float, bool):
        return value
    if isinstance(value, bool):
        return bool(value)
    if isinstance(value, int):
        return int(value)
    if isinstance(value, float):
        return float(value) if value == value and value not in (float("inf"), float("-inf")) else None
    if isinstance(value, str):
        return str(value)
    if isinstance(value, Mapping):
        return {str(k): plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple, set, frozenset)):
        return [plain(v) for v in value]
    if isinstance(value, bytes):
        return value.decode("utf-8", "replace")
    return str(value)  # Decimal, dates, library objects: their text
