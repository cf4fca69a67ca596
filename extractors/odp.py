"""OpenDocument presentations (ODP, what LibreOffice Impress saves): read like PowerPoint decks.

One item per slide with the text of its shapes in order (tables as tab-separated rows and as
cells), then its speaker notes after "Notes:", as `pptx` does.
"""

from __future__ import annotations

import zipfile

from lxml import etree

from extractors.base import ContentItem, Extraction
from extractors.odf import ODP, TEMPLATES, EncryptedError, block_lines, open_package, q
from extractors.odt import locked
from extractors.registry import ExtractorRegistry, Source, failure
from extractors.tables import attach, comma_language, text_tables

MIMES = [ODP, *(m for m, family in TEMPLATES.items() if family == ODP)]


def extract_odp(source: Source, registry: ExtractorRegistry) -> Extraction:
    """Slides in order; each item holds the slide's shape text, then its notes."""
    try:
        package = open_package(source.data, source.password)
    except EncryptedError as error:
        return locked(source, error.reason)
    except (zipfile.BadZipFile, KeyError, ValueError, OSError, etree.XMLSyntaxError) as error:
        return failure(source.mime, "corrupt", source.name, f"not a readable OpenDocument presentation ({error})")
    deck = package.content.find(f"{q('office:body')}/{q('office:presentation')}")
    if deck is None:
        return failure(source.mime, "corrupt", source.name, "the presentation has no slides")
    items = []
    for number, page in enumerate(deck.iter(q("draw:page")), start=1):
        grids: list[list[list[str]]] = []
        lines = block_lines(page, package, grids)
        notes_element = page.find(q("presentation:notes"))
        notes = "\n".join(line for line in block_lines(notes_element) if line.strip()) \
            if notes_element is not None else ""
        text = "\n".join(line for line in lines if line.strip())
        if notes:
            text += f"\n\nNotes:\n{notes}"
        tables = text_tables(grids, f"slide {number} ", f"slide {number}", comma_language(text))
        metadata = {"extractor": "odf", "slide": number, "has_notes": bool(notes), "ocr": False}
        if package.decrypted:
            metadata["decrypted"] = True
        items.append(ContentItem(sequence_nr=number, name=f"slide {number}", ext="txt", content_type="text/plain",
                                 data=text.strip("\n"), metadata=attach(metadata, tables)))
    if not items:
        return failure(source.mime, "corrupt", source.name, "the presentation has no slides")
    return Extraction(mime=source.mime, status="ok", items=items)
