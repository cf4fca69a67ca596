"""Document extraction: bytes in, content items out, one module per format."""

from __future__ import annotations

import functools

from extractors.archive import ArchiveLimits, ZipExtractor
from extractors.base import ContentItem, Extraction
from extractors.limits import ExtractionLimits
from extractors.registry import DuplicateExtractorError, ExtractorRegistry, Source


def build_registry(archive_limits: ArchiveLimits | None = None, ocr: bool = True,
                   limits: ExtractionLimits | None = None) -> ExtractorRegistry:
    """A registry with every built-in extractor, added the way a plug-in would add its own.

    `ocr=False` skips Tesseract even when it is installed; image-only pages are then flagged.
    `limits` bound what one file may inflate to and the text it yields.
    """
    # Imported here so that importing the package loads no document library (pypdf, docx, ...).
    from extractors import archive, csv, docx, fallback, html, image, odp, ods, odt, ooxml, pdf, pptx, text, xls, xlsx

    registry = ExtractorRegistry(fallback=fallback.extract_unsupported, limits=limits)
    registry.add(pdf.MIMES, functools.partial(pdf.extract_pdf, ocr=ocr))
    registry.add(docx.MIMES, docx.extract_docx)
    registry.add(pptx.MIMES, pptx.extract_pptx)
    registry.add(xlsx.MIMES, xlsx.extract_xlsx)
    registry.add(xls.MIMES, xls.extract_xls)
    registry.add(ooxml.MIMES, ooxml.extract_encrypted_ooxml)
    registry.add(odt.MIMES, odt.extract_odt)
    registry.add(ods.MIMES, ods.extract_ods)
    registry.add(odp.MIMES, odp.extract_odp)
    registry.add(text.MIMES, text.extract_text)
    registry.add(csv.MIMES, csv.extract_csv)
    registry.add(html.MIMES, html.extract_html)
    registry.add(image.MIMES, functools.partial(image.extract_image, ocr=ocr))
    registry.add(archive.MIMES, ZipExtractor(archive_limits))
    return registry


_default: ExtractorRegistry | None = None


def extract(data: bytes, name: str, mime: str | None = None, password: str | None = None) -> Extraction:
    """Extract one file with the built-in registry; never raises."""
    global _default
    if _default is None:
        _default = build_registry()
    return _default.extract(data, name, mime=mime, password=password)


__all__ = [
    "ArchiveLimits",
    "ContentItem",
    "DuplicateExtractorError",
    "Extraction",
    "ExtractionLimits",
    "ExtractorRegistry",
    "Source",
    "build_registry",
    "extract",
]
