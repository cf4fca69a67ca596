"""PDF files: one item per page through pypdf, with pdfium and OCR where pypdf finds no text."""

from __future__ import annotations

import io
import logging

import pypdfium2
from PIL import Image
from pypdf import PageObject, PdfReader
from pypdf.errors import DependencyError, FileNotDecryptedError, PdfReadError
from pypdf.generic import DictionaryObject

from extractors.base import ContentItem, Extraction
from extractors.ocr import ocr_available, recognise
from extractors.pdf_forms import filled_fields
from extractors.pdf_glyphs import tex_codes
from extractors.pdf_tables import aligned_pages, find_pdf_tables, rule_pages
from extractors.registry import ExtractorRegistry, Source, failure, nested
from extractors.tables import attach, comma_language

MIMES = ["application/pdf", "application/x-pdf"]

log = logging.getLogger(__name__)

OCR_DPI = 150
MAX_OCR_PAGES = 50
MAX_ATTACHMENT_DEPTH = 2
_IDENTITY_ENCODINGS = {"/Identity-H", "/Identity-V"}


def extract_pdf(source: Source, registry: ExtractorRegistry, *, ocr: bool = True) -> Extraction:
    """Every page in order; encrypted and broken files give a typed notice instead."""
    try:
        reader = PdfReader(io.BytesIO(source.data), strict=False)
        if reader.is_encrypted and not _unlock(reader, source.password):
            return _locked(source)
        pages = list(reader.pages)
    except FileNotDecryptedError:
        return _locked(source)
    except DependencyError as error:
        return failure(source.mime, "unsupported", source.name, error)
    except (PdfReadError, ValueError, KeyError, TypeError, AttributeError, IndexError) as error:
        return failure(source.mime, "corrupt", source.name, f"not a readable PDF ({error})")
    if not pages:
        return failure(source.mime, "corrupt", source.name, "the PDF has no readable pages")
    extraction = Extraction(mime=source.mime, status="ok")
    renderer = _Pdfium(source)
    can_ocr = ocr and ocr_available()
    ocr_budget = MAX_OCR_PAGES if can_ocr else 0
    needs_ocr = []
    for number, page in enumerate(pages, start=1):
        source.report(number - 1, len(pages))
        item = _page_item(number, page, renderer)
        if not item.data.strip() and renderer.has_images(number):
            if ocr_budget > 0:
                ocr_budget -= 1
                item = _ocr_item(number, renderer) or item
            if not item.data.strip():
                item.metadata["needs_ocr"] = True
                needs_ocr.append(number)
        extraction.items.append(item)
    aligned = aligned_pages({item.metadata.get("page", 0): item.data for item in extraction.items})
    comma = comma_language("\n".join(item.data for item in extraction.items))
    tables = find_pdf_tables(source.data, renderer.rule_pages(), source.password, aligned, comma)
    for item in extraction.items:
        attach(item.metadata, tables.get(item.metadata.get("page", 0), []))
    for page, item in zip(pages, extraction.items, strict=True):
        _with_fields(page, item)
    renderer.close()
    if needs_ocr:
        extraction.status = "partial"
        if not ocr:
            reason = "OCR is turned off"
        elif not can_ocr:
            reason = "Tesseract is not installed"
        else:
            reason = "OCR found no text or the OCR page limit was reached"
        extraction.warnings.append(
            f"{source.name}: {len(needs_ocr)} page(s) have no text layer and need OCR "
            f"(pages {_ranges(needs_ocr)}); {reason}."
        )
    _add_attachments(reader, source, registry, extraction)
    return extraction


def _unlock(reader: PdfReader, password: str | None) -> bool:
    """Try the supplied password, then the empty one that many 'protected' PDFs use."""
    return any(reader.decrypt(candidate) for candidate in dict.fromkeys([password or "", ""]))


def _locked(source: Source) -> Extraction:
    reason = "the password supplied does not open it" if source.password else "it needs a password"
    result = failure(source.mime, "encrypted", source.name, f"the PDF is encrypted and {reason}")
    result.items[0].name = "encrypted"
    return result


def _page_item(number: int, page: PageObject, renderer: _Pdfium) -> ContentItem:
    """The page's text from pypdf, or from pdfium when pypdf cannot map the page's fonts."""
    extractor = "pypdf"
    try:
        text = "" if _needs_cid_map(page) else page.extract_text()
    except Exception:  # noqa: BLE001 - pypdf raises many kinds on odd content streams
        log.debug("pypdf failed on page %d", number, exc_info=True)
        text = ""
    if not text.strip():
        fallback = renderer.text(number)
        if fallback.strip():
            text, extractor = fallback, "pdfium"
    return ContentItem(
        sequence_nr=number,
        name=f"page {number}",
        ext="txt",
        content_type="text/plain",
        data=tex_codes(text).strip("\n"),
        metadata={"extractor": extractor, "page": number, "ocr": False},
    )


def _with_fields(page: PageObject, item: ContentItem) -> None:
    """The page's text, then what was filled in on it (`extractors.pdf_forms`)."""
    try:
        lines = filled_fields(page)
    except Exception:  # noqa: BLE001 - a broken annotation costs its values, not the page
        log.debug("the form fields of page %s could not be read", item.metadata.get("page"), exc_info=True)
        return
    if lines:
        item.data = "\n".join([item.data, *lines]) if item.data.strip() else "\n".join(lines)


def _needs_cid_map(page: PageObject) -> bool:
    """True when a CID font has no ToUnicode map: pypdf would print raw glyph ids.

    pdfium carries the Adobe character-collection tables (Japan1, GB1, CNS1, Korea1) and maps
    such glyph ids to Unicode, so those pages go to pdfium instead.
    """
    resources = page.get("/Resources")
    resources = resources.get_object() if resources is not None else DictionaryObject()
    fonts = resources.get("/Font")
    fonts = fonts.get_object() if fonts is not None else DictionaryObject()
    for font in fonts.values():
        font = font.get_object()
        if (font.get("/Subtype") == "/Type0" and "/ToUnicode" not in font
                and font.get("/Encoding") in _IDENTITY_ENCODINGS):
            return True
    return False


def _ocr_item(number: int, renderer: _Pdfium) -> ContentItem | None:
    image = renderer.render(number)
    if image is None:
        return None
    return ContentItem(
        sequence_nr=number,
        name=f"page {number}",
        ext="txt",
        content_type="text/plain",
        data=recognise(image),
        metadata={"extractor": "tesseract", "page": number, "ocr": True, "dpi": OCR_DPI},
    )


def _add_attachments(reader: PdfReader, source: Source, registry: ExtractorRegistry, extraction: Extraction) -> None:
    """Embedded files are extracted like uploads of their own, one level deep at most."""
    if source.depth >= MAX_ATTACHMENT_DEPTH:
        return
    try:
        attachments = {str(name): [bytes(c) for c in contents] for name, contents in reader.attachments.items()}
    except Exception as error:  # noqa: BLE001 - a broken name tree must not lose the pages
        extraction.warnings.append(f"{source.name}: its attachments could not be read ({error}).")
        return
    for name, contents in attachments.items():
        for data in contents:
            inner = registry.extract(data, name, depth=source.depth + 1)
            extraction.items.extend(nested(inner.items, f"attachment {name}", attachment=name))
            extraction.warnings.extend(inner.warnings)


def _ranges(numbers: list[int]) -> str:
    """'1-3, 7' for [1, 2, 3, 7]."""
    spans: list[list[int]] = []
    for number in numbers:
        if spans and number == spans[-1][1] + 1:
            spans[-1][1] = number
        else:
            spans.append([number, number])
    return ", ".join(str(a) if a == b else f"{a}-{b}" for a, b in spans)


class _Pdfium:
    """The same document opened in pdfium, only when a page needs it."""

    def __init__(self, source: Source) -> None:
        self._source = source
        self._document: pypdfium2.PdfDocument | None = None
        self._failed = False

    def _open(self) -> pypdfium2.PdfDocument | None:
        if self._document is None and not self._failed:
            try:
                self._document = pypdfium2.PdfDocument(self._source.data, password=self._source.password)
            except pypdfium2.PdfiumError:
                self._failed = True
        return self._document

    def text(self, number: int) -> str:
        document = self._open()
        if document is None or number > len(document):
            return ""
        page = document[number - 1]
        textpage = page.get_textpage()
        try:
            text: str = textpage.get_text_bounded()  # pypdfium2 has no type hints
            return text.replace("\r\n", "\n")
        finally:
            textpage.close()
            page.close()

    def rule_pages(self) -> list[int]:
        """The pages with horizontal rules, where tables may be."""
        document = self._open()
        return rule_pages(document) if document is not None else []

    def has_images(self, number: int) -> bool:
        document = self._open()
        if document is None or number > len(document):
            return False
        page = document[number - 1]
        try:
            return any(True for _ in page.get_objects(filter=[pypdfium2.raw.FPDF_PAGEOBJ_IMAGE], max_depth=3))
        finally:
            page.close()

    def render(self, number: int) -> Image.Image | None:
        document = self._open()
        if document is None or number > len(document):
            return None
        page = document[number - 1]
        try:
            image: Image.Image = page.render(scale=OCR_DPI / 72).to_pil()
            return image
        finally:
            page.close()

    def close(self) -> None:
        if self._document is not None:
            self._document.close()
