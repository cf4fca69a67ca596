"""Documents of a round: extraction (off the loop, cached by content hash) and their views."""

from __future__ import annotations

import base64
import hashlib
from dataclasses import asdict
from typing import Any

from agents.base import DocumentText
from app.repository import Repository
from app.storage import Storage
from app.tables import ExtractionRow, FileRow
from extractors.base import ContentItem, Extraction
from extractors.runner import extract_isolated


def split_name(filename: str) -> tuple[str, str]:
    """("report", "pdf") from "report.pdf"; the extension is lower case, without the dot."""
    base, dot, ext = filename.rpartition(".")
    if not dot or not base:
        return filename, ""
    return base, ext.lower()


def cache_key(sha256: str, password: str | None) -> str:
    if not password:
        return sha256
    return f"{sha256}:{hashlib.sha256(password.encode()).hexdigest()[:16]}"


def item_to_wire(item: ContentItem) -> dict[str, Any]:
    """A content item as the contract shows it (camelCase)."""
    return {
        "sequenceNr": item.sequence_nr,
        "name": item.name,
        "ext": item.ext,
        "contentType": item.content_type,
        "data": item.data,
        "dataExtracted": None,
        "metadata": {
            **item.metadata,
            "isText": item.is_text,
            "base64Encoded": item.base64_encoded,
            "aiProcessed": False,
        },
        "summary": item.summary,
    }


def extraction_from_row(row: ExtractionRow) -> Extraction:
    return Extraction(mime=row.mime, status=row.status, items=[ContentItem(**i) for i in row.items],
                      warnings=list(row.warnings))


class Documents:
    """Extracts files for rounds and builds what agents read."""

    def __init__(self, repo: Repository, storage: Storage, timeout: float) -> None:
        self.repo = repo
        self.storage = storage
        self.timeout = timeout

    async def extract(self, file: FileRow, password: str | None = None) -> Extraction:
        """The file's content items; the same bytes (and password) are extracted once."""
        key = cache_key(file.sha256, password)
        cached = await self.repo.extraction(key)
        if cached is not None:
            return extraction_from_row(cached)
        data = self.storage.get(file.sha256)
        result = await extract_isolated(data, f"{file.name}.{file.ext}" if file.ext else file.name, file.mime,
                                        password, self.timeout)
        if result.status != "timeout":  # a timeout may pass on a quieter machine: try again next time
            await self.repo.save_extraction(
                ExtractionRow(key=key, mime=result.mime, status=result.status,
                              items=[asdict(i) for i in result.items], warnings=list(result.warnings))
            )
        return result


def document_text(file: FileRow, contents: list[dict[str, Any]]) -> DocumentText:
    """What an agent reads of a stored document: its text items in order."""
    items = [
        (c.get("name", ""), c.get("data", ""))
        for c in contents
        if c.get("metadata", {}).get("isText", True) and not c.get("metadata", {}).get("base64Encoded", False)
    ]
    summary = "; ".join(filter(None, (c.get("summary", "") for c in contents)))[:500]
    return DocumentText(name=display_name(file), ext=file.ext, mime=file.mime, size=file.size, items=items,
                        summary=summary, file_id=file.id)


def display_name(file: FileRow) -> str:
    return f"{file.name}.{file.ext}" if file.ext else file.name


def encode(data: bytes) -> str:
    return base64.b64encode(data).decode("ascii")
