"""File names as users see them, and how a download names and types its bytes safely."""

from __future__ import annotations

import unicodedata
from urllib.parse import quote

MAX_NAME_CHARS = 200
MAX_EXT_CHARS = 20

# Types a browser would run or render as a page from our origin: served as plain bytes instead.
ACTIVE_TYPES = frozenset({
    "text/html", "application/xhtml+xml", "image/svg+xml", "text/xml", "application/xml", "text/javascript",
    "application/javascript", "application/x-javascript", "text/css", "application/pdf+html", "text/xsl",
    "application/xslt+xml", "application/x-shockwave-flash", "text/vnd.wap.wml", "multipart/x-mixed-replace",
})
DOWNLOAD_CSP = "default-src 'none'; sandbox"


def clean_name(raw: str, fallback: str = "upload") -> str:
    """The display name without folders, control or format characters (bidi overrides), trimmed to a length."""
    name = raw.replace("\\", "/").rsplit("/", 1)[-1]
    # Cc: controls (NUL, newlines), Cf: format characters (bidi overrides, zero-width), Cs/Co/Cn: no glyph.
    name = "".join(ch for ch in name if unicodedata.category(ch)[0] != "C")
    name = unicodedata.normalize("NFC", name).strip().strip(".").strip()
    if not name:
        return fallback
    if len(name) > MAX_NAME_CHARS:
        base, dot, ext = name.rpartition(".")
        keep = f".{ext}" if dot and base and len(ext) <= MAX_EXT_CHARS else ""
        name = name[:MAX_NAME_CHARS - len(keep)].rstrip() + keep
    return name


def split_name(filename: str) -> tuple[str, str]:
    """("report", "pdf") from "report.pdf"; the extension is lower case, without the dot, and short."""
    base, dot, ext = filename.rpartition(".")
    if not dot or not base or len(ext) > MAX_EXT_CHARS or not ext.strip():
        return filename, ""
    return base, ext.lower()


def content_disposition(filename: str) -> str:
    """An RFC 6266 attachment header: a printable-ASCII fallback and the exact name as UTF-8 `filename*`."""
    folded = unicodedata.normalize("NFKD", filename).encode("ascii", "ignore").decode()
    fallback = "".join(ch if " " <= ch < "\x7f" and ch not in '"\\;%' else "_" for ch in folded).strip() or "download"
    return f"attachment; filename=\"{fallback}\"; filename*=UTF-8''{quote(filename, safe='')}"


def served_type(mime: str) -> str:
    """The Content-Type a download carries: the detected type, with one charset, never an active type."""
    base, _, params = mime.partition(";")
    base = base.strip().lower()
    if base in ACTIVE_TYPES or base.endswith("+xml") or not base or "/" not in base:
        return "application/octet-stream"
    charset = next((p.strip() for p in params.split(";") if p.strip().lower().startswith("charset=")), "")
    return f"{base}; {charset.lower()}" if charset else base
