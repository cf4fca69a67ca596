"""How much one upload may become while it is read: inflated zip parts, extracted text, memory.

A small file can stand for a huge one (a 326 KB DOCX held 64 MB of XML, a 2.4 MB one 1 GiB), so
every zip-based format is checked before a parser inflates it (`check_zip`), the text a file
yields is cut at `max_chars` (`cap_text`), and a reader process may use `memory_bytes` at most
(extractors.runner sets it as the process's address-space limit).
"""

from __future__ import annotations

import io
import struct
import zipfile
import zlib
from dataclasses import dataclass

import msgspec

from extractors.base import Extraction

_CHUNK = 1 << 20
_LOCAL_HEADER = struct.Struct("<4s5H3I2H")  # signature ... name length, extra length
_ZIP_MIMES = ("application/zip", "application/x-zip-compressed")  # extractors.archive has its own limits


@dataclass(frozen=True)
class ExtractionLimits:
    """Bounds on what one uploaded file may become; 0 turns a bound off."""

    max_part_bytes: int = 128 << 20  # one zip part (document.xml, a sheet, a slide), inflated
    max_inflated_bytes: int = 256 << 20  # all parts of one file, inflated
    max_ratio: int = 200  # inflated/compressed of a part larger than 1 MiB
    max_parts: int = 10_000
    max_chars: int = 2_000_000  # text kept from one file; the rest is cut with a notice
    memory_bytes: int = 2 << 30  # address space one reader process may take beyond its start-up


class RefusedError(Exception):
    """A file that would inflate beyond a limit; its text is a sentence for the person."""


def is_zip(data: bytes, mime: str) -> bool:
    """A zip-based file a parser would inflate (not a plain .zip: the archive extractor budgets those)."""
    return data[:4] == b"PK\x03\x04" and mime not in _ZIP_MIMES


def check_zip(data: bytes, limits: ExtractionLimits) -> None:
    """Raise RefusedError if the package inflates beyond the limits.

    First what the central directory declares (costs nothing), then every part is inflated in
    1 MiB steps into nothing, counting: the headers can lie, and the count stops at the limit.
    A file zipfile cannot open is left to its parser, which says it is damaged.
    """
    try:
        archive = zipfile.ZipFile(io.BytesIO(data))
    except (zipfile.BadZipFile, zipfile.LargeZipFile, ValueError, OSError, EOFError):
        return
    with archive:
        parts = [info for info in archive.infolist() if not info.is_dir()]
        _check_declared(parts, limits)
        total = 0
        for info in parts:
            bounds = [limits.max_part_bytes, limits.max_inflated_bytes and max(1, limits.max_inflated_bytes - total)]
            cap = min(filter(None, bounds), default=0)
            size = _inflated_size(data, info, cap)
            if limits.max_part_bytes and size > limits.max_part_bytes:
                raise RefusedError(f"its part {info.filename} inflates to more than {_mib(limits.max_part_bytes)}, "
                                   f"although it declares {info.file_size:,} bytes")
            total += size
            if limits.max_inflated_bytes and total > limits.max_inflated_bytes:
                raise RefusedError(f"its parts inflate to more than {_mib(limits.max_inflated_bytes)} in all")


def _check_declared(parts: list[zipfile.ZipInfo], limits: ExtractionLimits) -> None:
    if limits.max_parts and len(parts) > limits.max_parts:
        raise RefusedError(f"it has {len(parts):,} parts, more than {limits.max_parts:,}")
    for info in parts:
        if limits.max_part_bytes and info.file_size > limits.max_part_bytes:
            raise RefusedError(f"its part {info.filename} inflates to {_mib(info.file_size)}, over the "
                               f"{_mib(limits.max_part_bytes)} limit of one part")
        if limits.max_ratio and info.file_size > _CHUNK and info.file_size > limits.max_ratio * max(info.compress_size, 1):
            raise RefusedError(f"its part {info.filename} is compressed more than {limits.max_ratio}:1 "
                               f"({info.compress_size:,} bytes inflate to {info.file_size:,})")
    declared = sum(info.file_size for info in parts)
    if limits.max_inflated_bytes and declared > limits.max_inflated_bytes:
        raise RefusedError(f"it inflates to {_mib(declared)}, over the {_mib(limits.max_inflated_bytes)} limit of one file")


def _inflated_size(data: bytes, info: zipfile.ZipInfo, cap: int) -> int:
    """The bytes a part really inflates to (read from its local header, not its declared size),
    counting at most `cap` (0: no cap); output is discarded as it is made."""
    at = info.header_offset
    try:
        sig, *_rest, name_len, extra_len = _LOCAL_HEADER.unpack_from(data, at)
    except struct.error:
        return 0
    if sig != b"PK\x03\x04":
        return 0
    start = at + _LOCAL_HEADER.size + name_len + extra_len
    method = info.compress_type
    if method == zipfile.ZIP_STORED:
        return info.compress_size
    if method != zipfile.ZIP_DEFLATED:  # bzip2/lzma: zipfile stops at the declared size
        return info.file_size
    inflater = zlib.decompressobj(-zlib.MAX_WBITS)
    # Read the compressed stream to its real end, not the declared compressed size.
    view = memoryview(data)[start:]
    size, pos = 0, 0
    try:
        while not inflater.eof and pos < len(view):
            chunk = view[pos:pos + _CHUNK]
            pos += len(chunk)
            out = inflater.decompress(chunk, _CHUNK)
            size += len(out)
            # Up to the stream's end: what follows it (the next part, the directory) stays in the tail,
            # and inflating it again gave nothing, for ever (a part over 1 MiB inflated hung the reader).
            while inflater.unconsumed_tail and not inflater.eof and (not cap or size <= cap):
                out = inflater.decompress(inflater.unconsumed_tail, _CHUNK)
                size += len(out)
            if cap and size > cap:
                return size
    except zlib.error:
        return size  # damaged: its parser says so
    return size


def cap_text(extraction: Extraction, max_chars: int) -> Extraction:
    """Keep at most `max_chars` characters of text over the file's items; the rest is cut, and the
    last item kept ends with a notice saying so (a warning too, for the log)."""
    if not max_chars:
        return extraction
    total = sum(len(i.data) for i in extraction.items if i.is_text and not i.base64_encoded)
    if total <= max_chars:
        return extraction
    sentence = (f"Only the first {max_chars:,} of its {total:,} characters of text were kept "
                f"(MAX_EXTRACTED_CHARS); the rest was cut.")
    left, kept = max_chars, []
    for item in extraction.items:
        if not item.is_text or item.base64_encoded:
            kept.append(item)
            continue
        if left <= 0:
            continue
        if len(item.data) >= left:
            item = msgspec.structs.replace(item, data=f"{item.data[:left]}\n\n[{sentence}]", summary="",
                                           metadata={**item.metadata, "truncated": True, "characters": total,
                                                     "kept": max_chars})
            left = 0
        else:
            left -= len(item.data)
        kept.append(item)
    extraction.items = kept
    extraction.warnings.append(sentence)
    if extraction.status == "ok":
        extraction.status = "partial"
    return extraction


def _mib(size: int) -> str:
    return f"{size / (1 << 20):,.0f} MiB" if size >= 1 << 20 else f"{size:,} bytes"
