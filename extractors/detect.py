"""MIME type detection from the bytes; the only module that imports python-magic."""

from __future__ import annotations

import csv
import io
import json
import re
import zipfile

import magic

OOXML_ENCRYPTED = "application/x-ooxml-encrypted"
DOCX = "application/vnd.openxmlformats-officedocument.wordprocessingml.document"
XLSX = "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet"
PPTX = "application/vnd.openxmlformats-officedocument.presentationml.presentation"

# libmagic needs more than the first 8 KiB to tell .doc/.xls apart inside an OLE2 container.
_SNIFF_BYTES = 1 << 20
_CFB_SIGNATURE = b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1"
_ENCRYPTION_INFO = "EncryptionInfo".encode("utf-16-le")
_ZIP_PREFIXES = (("word/", DOCX), ("xl/", XLSX), ("ppt/", PPTX))
_TEXT_SAMPLE = 64 * 1024
_MARKDOWN_LINE = re.compile(r"^(#{1,6} \S|```|~~~|[-*+] \S|\d+\. \S|> \S)")
_MARKDOWN_INLINE = re.compile(r"\[[^\]]+\]\([^)]+\)|\*\*[^*]+\*\*|`[^`]+`")
_SUFFIX_TYPES = {
    ".csv": "text/csv",
    ".tsv": "text/tab-separated-values",
    ".tab": "text/tab-separated-values",
    ".md": "text/markdown",
    ".markdown": "text/markdown",
    ".json": "application/json",
}


def detect_mime(data: bytes, filename: str = "") -> str:
    """Return the MIME type of `data`, judged by its content; the name only breaks ties."""
    if not data:
        return "application/x-empty"
    if data.startswith(_CFB_SIGNATURE) and _ENCRYPTION_INFO in data[:_SNIFF_BYTES]:
        return OOXML_ENCRYPTED
    mime = magic.from_buffer(data[:_SNIFF_BYTES], mime=True)
    if mime in ("application/zip", "application/octet-stream") and data.startswith(b"PK"):
        return _zip_flavour(data) or mime
    if mime == "text/plain":
        return _refine_text(data, filename)
    if mime == "text/csv" and _prose(_sample_lines(data), ","):
        return "text/plain"  # libmagic counts commas too: sentences with one each are not rows
    return mime


def _zip_flavour(data: bytes) -> str | None:
    """Name the OOXML or ODF flavour of a ZIP by its members, since libmagic relies on member order."""
    try:
        with zipfile.ZipFile(io.BytesIO(data)) as archive:
            names = archive.namelist()
    except (zipfile.BadZipFile, ValueError, OSError):
        return None
    if "mimetype" in names:
        from extractors.odf import mimetype  # ODF packages name their type in their first member

        return mimetype(data)
    if "[Content_Types].xml" not in names:
        return None
    for prefix, mime in _ZIP_PREFIXES:
        if any(name.startswith(prefix) for name in names):
            return mime
    return None


def _refine_text(data: bytes, filename: str) -> str:
    """Tell JSON, CSV, TSV and Markdown apart from plain text."""
    suffix = filename[filename.rfind(".") :].lower() if "." in filename else ""
    if data.lstrip(b"\xef\xbb\xbf \t\r\n")[:1] in (b"{", b"[") and _is_json(data):
        return "application/json"
    lines = _sample_lines(data)
    candidates = []
    if _is_table(lines, "\t"):
        candidates.append("text/tab-separated-values")
    if any(_is_table(lines, delimiter) for delimiter in CSV_DELIMITERS):
        candidates.append("text/csv")
    if _looks_like_markdown(lines):
        candidates.append("text/markdown")
    if _SUFFIX_TYPES.get(suffix) in candidates:
        return _SUFFIX_TYPES[suffix]
    return candidates[0] if candidates else "text/plain"


# What separates a CSV's cells: a comma, or a semicolon where the comma is the decimal mark (German,
# French and most European spreadsheets save CSV that way); extractors/csv.py sniffs which one.
CSV_DELIMITERS = (",", ";")

_PROSE_WORDS = 5  # words in the median cell above which the "cells" are clauses of sentences


def _sample_lines(data: bytes) -> list[str]:
    """The first 200 non-blank lines of the text's first 64 KiB (a cut last line left out)."""
    encoding = "utf-16" if data[:2] in (b"\xff\xfe", b"\xfe\xff") else "utf-8"
    sample = data[:_TEXT_SAMPLE].decode(encoding, errors="replace").lstrip("\ufeff")
    lines = [line for line in sample.splitlines()[:200] if line.strip()]
    return lines[:-1] if len(data) > _TEXT_SAMPLE else lines


def _is_json(data: bytes) -> bool:
    try:
        json.loads(data.decode("utf-8-sig"))
    except (UnicodeDecodeError, ValueError):
        return False
    return True


def _is_table(lines: list[str], delimiter: str) -> bool:
    """At least two lines, and (titles aside) the same number of fields of which there are several."""
    if len(lines) < 2:
        return False
    try:
        widths = [len(row) for row in csv.reader(lines, delimiter=delimiter)]
    except csv.Error:
        return False
    common = max(set(widths), key=widths.count)
    # A title row above the header is common in exported sheets; tolerate a few odd rows.
    return common >= 2 and widths.count(common) >= max(2, int(0.8 * len(widths))) and not _prose(lines, delimiter)


def _prose(lines: list[str], delimiter: str) -> bool:
    """Sentences that happen to hold the same number of commas: a table's cells are short (a name, a
    number, a date), a sentence's clauses are not; a long description column among short ones stays
    a table, as the median cell decides."""
    try:
        cells = sorted(len(cell.split()) for row in csv.reader(lines, delimiter=delimiter) for cell in row)
    except csv.Error:
        return False
    return bool(cells) and cells[len(cells) // 2] > _PROSE_WORDS


def _looks_like_markdown(lines: list[str]) -> bool:
    block = sum(1 for line in lines if _MARKDOWN_LINE.match(line))
    inline = sum(1 for line in lines if _MARKDOWN_INLINE.search(line))
    return block >= 2 or (block >= 1 and inline >= 1)
