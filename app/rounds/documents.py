"""Documents of a round: extraction (off the loop, cached by content hash) and their views."""

from __future__ import annotations

import hashlib
import logging
import time
from collections.abc import Callable
from dataclasses import dataclass, replace

import msgspec

from agents.base import DocumentText
from agents.round import build_rows
from app.errors import StoredFileError
from app.metrics import record_extraction
from app.store.filestore import BlobStore
from app.store.records import extraction_from_row
from app.store.repository import Repository
from app.store.repository.chunks import ChunkStore
from app.store.search import INDEXED_STATUSES
from app.store.tables import ExtractionRow, FileRow
from app.store.vectors import VectorIndex
from extractors.base import ContentItem, Extraction
from extractors.registry import failure, finish
from extractors.runner import extract_isolated

log = logging.getLogger(__name__)


def cache_key(sha256: str, password: str | None, owner: tuple[int, int] | None = None) -> str:
    """The extraction cache's key: the content hash, then whose upload it is, then the password's hash.

    Per owner, so that nobody can learn that another tenant (or another user) holds the same
    bytes: their first read is a real extraction, logged and timed like anyone's. The cost is one
    extraction per owner and content instead of one per content. Every key starts with the
    content hash and a colon: dropping what a content hash left behind finds them all.
    """
    key = sha256 if owner is None else f"{sha256}:m{owner[0]}u{owner[1]}"
    if not password:
        return key
    return f"{key}:{hashlib.sha256(password.encode()).hexdigest()[:16]}"


@dataclass
class Reading:
    """One file's extraction as a round reports it: the result, whether it came from the cache, how long."""

    extraction: Extraction
    cached: bool
    seconds: float


class Documents:
    """Extracts files for rounds and builds what agents read."""

    def __init__(self, repo: Repository, storage: BlobStore, timeout: float, chunks: ChunkStore | None = None,
                 max_passages: int = 0, vectors: VectorIndex | None = None) -> None:
        self.repo = repo
        self.storage = storage
        self.timeout = timeout
        self.chunks = chunks or ChunkStore(repo.db)
        self.max_passages = max_passages  # indexed of one file (MAX_INDEXED_PASSAGES); 0: all
        self.vectors = vectors

    async def extract(self, file: FileRow, password: str | None = None) -> Extraction:
        """The file's content items; the same bytes (and password) are extracted once."""
        return (await self.read(file, password)).extraction

    async def read(self, file: FileRow, password: str | None = None,
                   progress: Callable[[int, int], None] | None = None) -> Reading:
        """Like `extract`, saying whether the cache answered; `progress(done, total)` while a long file is read.

        Never raises for the file's sake: a result that cannot be stored is a failed extraction
        of this file (status "error"), with the details in the server log.
        """
        t0 = time.perf_counter()
        key = cache_key(file.sha256, password, (file.mandate_id, file.user_id))
        cached = await self.repo.files.extraction(key)
        if cached is not None:
            result = extraction_from_row(cached)
            if password is None and result.status in INDEXED_STATUSES and not await self.chunks.indexed([file.sha256]):
                try:  # cached before the index was: build it now
                    await self.chunks.add(file.sha256, await build_rows(result.items, self.max_passages))
                    self._embed(file.sha256)
                except Exception:  # noqa: BLE001 - the index is an aid; the file was read
                    log.exception("the full-text index of file %s could not be stored", file.id)
            record_extraction(file.mime.split(";", 1)[0].strip(), "cached", time.perf_counter() - t0)
            return Reading(result, True, time.perf_counter() - t0)
        # An agent's output is stored with its MIME parameters ("text/markdown; charset=utf-8");
        # extractors are registered by the bare type.
        mime = file.mime.split(";", 1)[0].strip()
        try:
            data = await self.storage.get(file.sha256)
        except StoredFileError as exc:  # this file is unreadable, the round goes on (nothing cached)
            name = display_name(file)
            return Reading(finish(failure(mime, "error", name, "its stored copy is damaged or missing",
                                          sentence=f"{name} could not be read: {exc}")), False,
                           time.perf_counter() - t0)
        t1 = time.perf_counter()
        result = await extract_isolated(data, display_name(file), mime, password, self.timeout, progress)
        record_extraction(mime, result.status, time.perf_counter() - t1)
        # A timeout may pass on a quieter machine, and a failure of the reader process itself (it did
        # not start, it died, it was cut) says nothing about the file: both are read again next time.
        if result.status != "timeout" and not _reader_failed(result):
            # The full-text index is built once per content hash, with the extraction it comes from.
            # Only from what reads without a password: what a password opened stays out of it.
            rows = await build_rows(result.items, self.max_passages) if password is None and result.status in INDEXED_STATUSES else []
            try:
                await self.repo.files.save_extraction(
                    ExtractionRow(key=key, mime=result.mime, status=result.status,
                                  items=msgspec.to_builtins(result.items), warnings=list(result.warnings)),
                    file.sha256, rows,
                )
                if rows:
                    self._embed(file.sha256)
            except Exception:  # noqa: BLE001 - one file's storage problem must not fail the round
                log.exception("the extraction of file %s could not be stored", file.id)
                result = not_stored(file, result.mime)
        return Reading(result, False, time.perf_counter() - t0)

    def _embed(self, sha256: str) -> None:
        """The file's chunks were (re)stored: its vectors are made in the background."""
        if self.vectors is not None:
            self.vectors.forget([sha256])
            self.vectors.schedule([sha256])


def _reader_failed(result: Extraction) -> bool:
    """Whether the result is the reader process's own failure (extractors.runner's notice), not the file's."""
    return any(item.metadata.get("extractor") == "runner" for item in result.items)


def not_stored(file: FileRow, mime: str) -> Extraction:
    """The failed extraction of a file whose contents were read but could not be stored."""
    name = display_name(file)
    return finish(failure(mime, "error", name, "its contents could not be stored",
                          sentence=f"{name} was read, but its contents could not be stored."))


async def read_document(file: FileRow, contents: list[ContentItem], *, round_no: int = 0,
                        new: bool = True) -> DocumentText:
    """`document_text`, in a worker process when the contents are long (`DocumentText.read`)."""
    doc = await DocumentText.read(display_name(file), file.ext, file.mime, file.size, contents, file.id)
    return _as_read(doc, file, round_no, new)


def document_text(file: FileRow, contents: list[ContentItem], *, round_no: int = 0, new: bool = True) -> DocumentText:
    """What an agent reads of a stored document: its text items in order, its tables and its catalogue facts."""
    doc = DocumentText.of(display_name(file), file.ext, file.mime, file.size, contents, file.id)
    return _as_read(doc, file, round_no, new)


def _as_read(doc: DocumentText, file: FileRow, round_no: int, new: bool) -> DocumentText:
    return replace(doc, round=round_no, origin="produced" if file.origin == "agent" else "uploaded", new=new,
                   sha256=file.sha256)


def display_name(file: FileRow) -> str:
    return f"{file.name}.{file.ext}" if file.ext else file.name

