"""OpenDocument packages (what LibreOffice writes): the parts of ODT, ODS and ODP files.

An ODF file is a ZIP whose `mimetype` member names the format and whose `content.xml` holds
the document. Every part is read through `package.read_part` (the one place that inflates a
member of a document package, so a limit on inflated size goes there), parsed without entity
expansion or network access. Encrypted packages (manifest `encryption-data`) are decrypted
with the user's password (ODF 1.2: PBKDF2-SHA1 over the SHA-256 of the password,
AES-256-CBC, then raw deflate; OpenOffice 2's Blowfish is refused with a sentence), see `decrypt`.

The format modules (`odt`, `ods`, `odp`) walk the XML; the text of a paragraph is read by
`inline_text`, which keeps notes and comments out of the line they are anchored in.
"""

from __future__ import annotations

import base64
import hashlib
import io
import zipfile
import zlib
from collections.abc import Iterator
from dataclasses import dataclass, field

from lxml import etree

from extractors.package import read_part

NS = {
    "office": "urn:oasis:names:tc:opendocument:xmlns:office:1.0",
    "text": "urn:oasis:names:tc:opendocument:xmlns:text:1.0",
    "table": "urn:oasis:names:tc:opendocument:xmlns:table:1.0",
    "draw": "urn:oasis:names:tc:opendocument:xmlns:drawing:1.0",
    "style": "urn:oasis:names:tc:opendocument:xmlns:style:1.0",
    "presentation": "urn:oasis:names:tc:opendocument:xmlns:presentation:1.0",
    "dc": "http://purl.org/dc/elements/1.1/",
    "svg": "urn:oasis:names:tc:opendocument:xmlns:svg-compatible:1.0",
    "manifest": "urn:oasis:names:tc:opendocument:xmlns:manifest:1.0",
}
ODT = "application/vnd.oasis.opendocument.text"
ODS = "application/vnd.oasis.opendocument.spreadsheet"
ODP = "application/vnd.oasis.opendocument.presentation"
TEMPLATES = {  # a template reads like its document
    "application/vnd.oasis.opendocument.text-template": ODT,
    "application/vnd.oasis.opendocument.spreadsheet-template": ODS,
    "application/vnd.oasis.opendocument.presentation-template": ODP,
}


def q(name: str) -> str:
    """'text:p' as lxml's '{urn:...}p'."""
    prefix, local = name.split(":")
    return f"{{{NS[prefix]}}}{local}"


_PARSER = etree.XMLParser(resolve_entities=False, no_network=True, huge_tree=False, remove_comments=True)
# Inline elements whose text is not part of the line they sit in.
_APART = {q("text:note"), q("office:annotation"), q("text:tracked-changes"), q("svg:title"), q("svg:desc"),
          q("office:annotation-end")}
# Fields whose text is a placeholder or a page number, not the document's words ("<number>" in a
# slide's notes is Impress's page-number field).
_FIELDS = {q("text:page-number"), q("text:page-count"), q("presentation:date-time"), q("presentation:footer"),
           q("presentation:header")}


class EncryptedError(Exception):
    """The package is encrypted and no password, or a wrong one, was given."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


@dataclass
class Package:
    """The parsed parts of one ODF file."""

    mimetype: str
    content: etree._Element
    styles: etree._Element | None
    decrypted: bool = False
    notes: list[str] = field(default_factory=list)  # footnotes and endnotes met while reading
    comments: list[str] = field(default_factory=list)


def mimetype(data: bytes) -> str | None:
    """The MIME type an ODF package declares in its `mimetype` member, or None for other ZIPs."""
    try:
        with zipfile.ZipFile(io.BytesIO(data)) as archive:
            if "mimetype" not in archive.namelist():
                return None
            declared = read_part(archive, "mimetype", limit=200).decode("ascii", "replace").strip()
    except (zipfile.BadZipFile, ValueError, OSError, RuntimeError, EOFError):
        return None
    return declared if declared.startswith("application/vnd.oasis.opendocument.") else None


def open_package(data: bytes, password: str | None) -> Package:
    """Read `content.xml` and `styles.xml`, decrypting them when the manifest says they are encrypted."""
    with zipfile.ZipFile(io.BytesIO(data)) as archive:
        names = set(archive.namelist())
        declared = read_part(archive, "mimetype", limit=200).decode("ascii", "replace").strip() \
            if "mimetype" in names else ""
        entries = _encryption(archive) if "META-INF/manifest.xml" in names else {}
        parts: dict[str, etree._Element | None] = {}
        for part in ("content.xml", "styles.xml"):
            if part not in names:
                parts[part] = None
                continue
            raw = read_part(archive, part)
            if part in entries:
                if not password:
                    raise EncryptedError("it needs a password")
                raw = decrypt(raw, entries[part], password)
            parts[part] = etree.fromstring(raw, _PARSER)
    if parts["content.xml"] is None:
        raise ValueError("the package has no content.xml")
    return Package(mimetype=declared, content=parts["content.xml"], styles=parts["styles.xml"],
                   decrypted=bool(entries))


def _encryption(archive: zipfile.ZipFile) -> dict[str, etree._Element]:
    """Manifest entries that carry encryption data, by member path."""
    manifest = etree.fromstring(read_part(archive, "META-INF/manifest.xml"), _PARSER)
    found = {}
    for entry in manifest.iter(q("manifest:file-entry")):
        data = entry.find(q("manifest:encryption-data"))
        if data is not None:
            found[entry.get(q("manifest:full-path"), "")] = data
    return found


def decrypt(raw: bytes, data: etree._Element, password: str) -> bytes:
    """One encrypted member in plain: derive the key, decrypt, inflate, check the checksum."""
    from cryptography.hazmat.primitives.ciphers import Cipher, algorithms, modes

    def attr(element: etree._Element | None, name: str) -> str:
        return "" if element is None else element.get(q(f"manifest:{name}"), "")

    algorithm = data.find(q("manifest:algorithm"))
    derivation = data.find(q("manifest:key-derivation"))
    start = data.find(q("manifest:start-key-generation"))
    if derivation is None or attr(derivation, "key-derivation-name") not in ("PBKDF2", ""):
        raise EncryptedError("its encryption (" + attr(derivation, "key-derivation-name") + ") is not supported")
    start_name = attr(start, "start-key-generation-name")
    secret = password.encode("utf-8")
    secret = hashlib.sha1(secret).digest() if start_name.endswith("sha1") else hashlib.sha256(secret).digest()
    size = int(attr(derivation, "key-size") or 16)
    key = hashlib.pbkdf2_hmac("sha1", secret, base64.b64decode(attr(derivation, "salt")),
                              int(attr(derivation, "iteration-count") or 1024), size)
    iv = base64.b64decode(attr(algorithm, "initialisation-vector"))
    name = attr(algorithm, "algorithm-name")
    if name.endswith("aes256-cbc"):
        decryptor = Cipher(algorithms.AES(key), modes.CBC(iv)).decryptor()
        padded = decryptor.update(raw) + decryptor.finalize()
        # W3C XML Encryption padding (ISO 10126): only the last byte, the pad's length, is defined.
        pad = padded[-1] if padded else 0
        if not 1 <= pad <= 16:
            raise EncryptedError("the password supplied does not open it")
        plain = padded[:-pad]
    else:
        raise EncryptedError(f"its encryption ({name or 'unknown'}) is not supported")
    checksum_type, checksum = data.get(q("manifest:checksum-type"), ""), data.get(q("manifest:checksum"), "")
    if checksum:  # a digest of the first 1024 decrypted bytes: a wrong password is told apart here
        digest = hashlib.sha256 if "sha256" in checksum_type else hashlib.sha1
        sample = plain[:1024] if checksum_type.endswith("1k") else plain
        if digest(sample).digest() != base64.b64decode(checksum):
            raise EncryptedError("the password supplied does not open it")
    try:
        return zlib.decompress(plain, -15)
    except zlib.error:
        raise EncryptedError("the password supplied does not open it") from None


def inline_text(element: etree._Element, package: Package | None = None) -> str:
    """The text of a paragraph or heading as it reads: spaces, tabs and line breaks kept,
    notes and comments moved to `package.notes`/`package.comments` instead of joining the words."""
    parts: list[str] = []
    _inline(element, parts, package)
    return "".join(parts)


def _inline(element: etree._Element, parts: list[str], package: Package | None) -> None:
    if element.text:
        parts.append(element.text)
    for child in element:
        tag = child.tag
        if not isinstance(tag, str):
            pass
        elif tag == q("text:s"):
            parts.append(" " * int(child.get(q("text:c"), "1") or 1))
        elif tag == q("text:tab"):
            parts.append("\t")
        elif tag == q("text:line-break"):
            parts.append("\n")
        elif tag in _APART:
            if package is not None:
                _aside(child, package)
        elif tag in _FIELDS:
            pass
        elif tag in (q("draw:frame"), q("draw:text-box"), q("draw:custom-shape"), q("draw:g")):
            boxed = [line for line in block_lines(child, package) if line.strip()]
            if boxed:
                parts.append("\n" + "\n".join(boxed) + "\n")
        else:
            _inline(child, parts, package)
        if child.tail:
            parts.append(child.tail)


def _aside(element: etree._Element, package: Package) -> None:
    """A footnote, endnote or comment: kept for an item of its own."""
    if element.tag == q("text:note"):
        body = element.find(q("text:note-body"))
        text = "\n".join(line.strip() for line in block_lines(body, package) if line.strip()) if body is not None else ""
        if text:
            package.notes.append(text)
    elif element.tag == q("office:annotation"):
        author = element.findtext(q("dc:creator")) or ""
        text = "\n".join(inline_text(p) for p in element.iter(q("text:p")) if inline_text(p).strip())
        if text:
            package.comments.append(f"{author}: {text}" if author else text)


# Generated indexes (table of contents, alphabetical index...) repeat the document's words with
# page numbers: they stay out of what agents read.
_INDEXES = {q(f"text:{name}") for name in ("table-of-content", "alphabetical-index", "illustration-index",
                                           "object-index", "user-index", "bibliography", "table-index")}
_CONTAINERS = {q("text:section"), q("text:list-item"), q("text:list-header"), q("text:list"),
               q("office:text"), q("text:note-body"), q("draw:text-box"), q("draw:frame"), q("draw:g"),
               q("draw:custom-shape"), q("table:table-cell"), q("text:deletion")}


def block_lines(container: etree._Element, package: Package | None = None,
                tables: list[list[list[str]]] | None = None) -> list[str]:
    """Lines of the paragraphs, headings, lists and tables inside `container`, in document order.

    A table's rows are tab-separated lines; its cells (as text) are appended to `tables`.
    """
    lines: list[str] = []
    for child in container:
        tag = child.tag
        if tag in (q("text:p"), q("text:h")):
            lines.extend(inline_text(child, package).split("\n"))
        elif tag == q("table:table"):
            rows = table_rows(child, package)
            if tables is not None:
                tables.append(rows)
            lines.extend("\t".join(" ".join(cell.split()) for cell in row).rstrip("\t") for row in rows)
        elif tag in _INDEXES or tag == q("text:tracked-changes") or tag in _APART:
            if tag in _APART and package is not None:
                _aside(child, package)
        elif tag in _CONTAINERS:
            lines.extend(block_lines(child, package, tables))
    return lines


_ROW_GROUPS = {q("table:table-header-rows"), q("table:table-rows"), q("table:table-row-group")}


def table_rows(table: etree._Element, package: Package | None = None) -> list[list[str]]:
    """A text table's cells as text; a merged cell is read once, where it starts."""
    rows: list[list[str]] = []
    for row in _rows(table):
        cells: list[str] = []
        for cell in row:
            if cell.tag == q("table:table-cell"):
                text = " ".join(line for line in block_lines(cell, package) if line.strip())
                repeat = min(int(cell.get(q("table:number-columns-repeated"), "1") or 1), 64)
                cells.extend([text] * repeat)
            elif cell.tag == q("table:covered-table-cell"):
                cells.extend([""] * min(int(cell.get(q("table:number-columns-repeated"), "1") or 1), 64))
        while cells and not cells[-1]:
            cells.pop()
        rows.append(cells)
    return rows


def _rows(table: etree._Element) -> Iterator[etree._Element]:
    for child in table:
        if child.tag == q("table:table-row"):
            yield child
        elif child.tag in _ROW_GROUPS:
            yield from _rows(child)
