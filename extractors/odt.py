"""OpenDocument text (ODT, what LibreOffice Writer saves): read like a Word document.

The body in document order with its tables as tab-separated rows and as cells, then one item
each for headers and footers, notes and comments, as `docx` does; headings are lines of their
own and listed in the body item's `headings`.
"""

from __future__ import annotations

import re
import zipfile

from lxml import etree

from extractors.base import ContentItem, Extraction
from extractors.odf import ODT, TEMPLATES, EncryptedError, Package, block_lines, inline_text, open_package, q
from extractors.registry import ExtractorRegistry, Source, failure
from extractors.tables import attach, comma_language, text_tables

MIMES = [ODT, *(m for m, family in TEMPLATES.items() if family == ODT)]


def extract_odt(source: Source, registry: ExtractorRegistry) -> Extraction:
    """The body text with its tables, then headers/footers, notes and comments."""
    try:
        package = open_package(source.data, source.password)
    except EncryptedError as error:
        return locked(source, error.reason)
    except (zipfile.BadZipFile, KeyError, ValueError, OSError, etree.XMLSyntaxError) as error:
        return failure(source.mime, "corrupt", source.name, f"not a readable OpenDocument text ({error})")
    body = package.content.find(f"{q('office:body')}/{q('office:text')}")
    if body is None:
        return failure(source.mime, "corrupt", source.name, "the document has no text body")
    grids: list[list[list[str]]] = []
    lines = block_lines(body, package, grids)
    tables = text_tables(grids, "", "body", comma_language("\n".join(lines)))
    headings = [" ".join(inline_text(h).split()) for h in body.iter(q("text:h"))]
    items = [item("body", "\n".join(lines), "body", package)]
    attach(items[0].metadata, tables)
    items[0].metadata["headings"] = [h for h in headings if h]
    items[0].metadata["images"] = sum(1 for _ in body.iter(q("draw:image")))
    margins = _headers_and_footers(package)
    if margins:
        items.append(item("headers and footers", margins, "header/footer", package))
    if package.notes:
        items.append(item("footnotes", "\n".join(package.notes), "footnotes", package))
    if package.comments:
        items.append(item("comments", "\n".join(package.comments), "comments", package))
    return Extraction(mime=source.mime, status="ok", items=items)


def _headers_and_footers(package: Package) -> str:
    """The text of the master pages' headers and footers (styles.xml), each once."""
    if package.styles is None:
        return ""
    seen: list[str] = []
    for tag in ("style:header", "style:header-first", "style:header-left",
                "style:footer", "style:footer-first", "style:footer-left"):
        for element in package.styles.iter(q(tag)):
            text = "\n".join(line for line in block_lines(element) if line.strip())
            if text and text not in seen:
                seen.append(text)
    return "\n".join(seen)


def item(name: str, text: str, section: str, package: Package) -> ContentItem:
    """A text item of an ODF file."""
    metadata = {"extractor": "odf", "section": section, "ocr": False}
    if package.decrypted:
        metadata["decrypted"] = True
    return ContentItem(sequence_nr=1, name=name, ext="txt", content_type="text/plain",
                       data=re.sub(r"\n{3,}", "\n\n", text).strip("\n"), metadata=metadata)


def locked(source: Source, reason: str) -> Extraction:
    """An encrypted ODF file that could not be opened, said the way Office files say it."""
    result = failure(source.mime, "encrypted", source.name, f"the OpenDocument file is encrypted and {reason}")
    result.items[0].name = "encrypted"
    return result
