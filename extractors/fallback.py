"""Formats we do not read: old binary Office files and anything unknown, kept as bytes."""

from __future__ import annotations

import base64

from extractors.base import ContentItem, Extraction
from extractors.registry import ExtractorRegistry, Source

_FORMAT_NAMES = {
    "application/msword": "an old binary Word document (.doc)",
    "application/vnd.ms-powerpoint": "an old binary PowerPoint presentation (.ppt)",
    "application/x-ole-storage": "an OLE2 compound file (old Office format)",
    "application/x-empty": "an empty file",
}
# Passing the raw bytes on lets a later step (or a person) still use the file; beyond this we
# keep only the notice so one huge upload cannot bloat the stored result.
MAX_INLINE_BYTES = 20 * 1024 * 1024


def extract_unsupported(source: Source, registry: ExtractorRegistry) -> Extraction:
    """A binary item holding the original bytes and a warning naming the format."""
    described = _FORMAT_NAMES.get(source.mime, f"a {source.mime} file")
    warning = f"{source.name} is {described}; its text cannot be extracted."
    inline = len(source.data) <= MAX_INLINE_BYTES
    item = ContentItem(
        sequence_nr=1,
        name="unsupported",
        ext=source.name.rsplit(".", 1)[-1].lower() if "." in source.name else "bin",
        content_type=source.mime,
        data=base64.b64encode(source.data).decode("ascii") if inline else "",
        is_text=False,
        base64_encoded=inline,
        metadata={"extractor": "none", "format": source.mime, "bytes": len(source.data), "ocr": False},
    )
    return Extraction(mime=source.mime, status="unsupported", items=[item], warnings=[warning])
