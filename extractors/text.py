"""Plain text, Markdown, JSON and XML: decoded with the right encoding, kept as written."""

from __future__ import annotations

import codecs
import re
from collections.abc import Callable

from charset_normalizer import from_bytes

from extractors.base import ContentItem, Extraction
from extractors.registry import ExtractorRegistry, Source

MIMES = ["text/plain", "text/markdown", "text/x-markdown", "application/json", "text/xml", "application/xml"]

_BOMS = (
    (codecs.BOM_UTF32_LE, "utf-32"),
    (codecs.BOM_UTF32_BE, "utf-32"),
    (codecs.BOM_UTF8, "utf-8-sig"),
    (codecs.BOM_UTF16_LE, "utf-16"),
    (codecs.BOM_UTF16_BE, "utf-16"),
)
# Limiting charset-normalizer to encodings people actually send keeps it fast and avoids exotic
# look-alikes (cp1258, mac_latin2) winning by a hair over what the file really is.
_CANDIDATES = [
    "cp1252", "cp1250", "cp1251", "cp1253", "cp1254", "cp1255", "cp1256", "cp1257",
    "koi8_r", "iso8859_2", "iso8859_7", "cp932", "shift_jis", "euc_jp", "iso2022_jp",
    "big5", "cp950", "gb18030", "euc_kr", "cp949", "utf_16", "utf_32",
]
# Western-European encodings that decode the same bytes to similar letters as cp1252.
_CP1252_LOOKALIKES = {"cp1250", "cp1254", "cp1257", "cp1258", "latin_1", "iso8859_2", "iso8859_15", "mac_roman"}
_XML_DECLARATION = re.compile(rb"^<\?xml[^>]*encoding=[\"']([A-Za-z0-9._-]+)[\"']")
# A text this long is decoded a MB at a time, reporting the KB done of KB total as a PDF reports pages.
MB = 1 << 20
LARGE_TEXT = 8 * MB
_EXTENSIONS = {"text/markdown": "md", "text/x-markdown": "md", "application/json": "json"}


def decode(data: bytes, declared: str | None = None,
           report: Callable[[int, int], None] | None = None) -> tuple[str, str]:
    """Decode bytes to text: BOM first, then a declared encoding, UTF-8, then detection.
    `report(done, total)` hears the KB decoded of a LARGE_TEXT."""
    for bom, encoding in _BOMS:
        if data.startswith(bom):
            return data.decode(encoding), encoding
    for encoding in filter(None, (declared, "utf-8")):
        try:
            if report is not None and len(data) >= LARGE_TEXT:
                return _in_slices(data, encoding, report), encoding
            return data.decode(encoding), encoding
        except (UnicodeDecodeError, LookupError):
            continue
    best = from_bytes(data, cp_isolation=_CANDIDATES).best()
    encoding = best.encoding if best else "cp1252"
    if encoding in _CP1252_LOOKALIKES or best is None:
        try:
            return data.decode("cp1252"), "cp1252"
        except UnicodeDecodeError:
            pass
    return data.decode(encoding, errors="replace"), encoding


def _in_slices(data: bytes, encoding: str, report: Callable[[int, int], None]) -> str:
    """`data` decoded a MB at a time (a character cut by a slice's end waits for the next)."""
    decoder = codecs.getincrementaldecoder(encoding)()
    slices = -(-len(data) // MB)
    parts = []
    for n in range(slices):
        parts.append(decoder.decode(data[n * MB:(n + 1) * MB], final=n == slices - 1))
        report(min(len(data), (n + 1) * MB) // 1024, len(data) // 1024)
    return "".join(parts)


def extract_text(source: Source, registry: ExtractorRegistry) -> Extraction:
    """One item holding the whole text, decoded."""
    declared = None
    if "xml" in source.mime:
        match = _XML_DECLARATION.match(source.data.lstrip(codecs.BOM_UTF8))
        declared = match.group(1).decode("ascii") if match else None
    text, encoding = decode(source.data, declared, source.report)
    text = text.lstrip("\ufeff")
    item = ContentItem(
        sequence_nr=1,
        name="text",
        ext=_EXTENSIONS.get(source.mime, "xml" if "xml" in source.mime else "txt"),
        content_type=source.mime,
        data=text,
        metadata={"extractor": "text", "encoding": encoding, "ocr": False},
    )
    return Extraction(mime=source.mime, status="ok", items=[item])
