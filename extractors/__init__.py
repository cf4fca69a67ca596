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
    from extractors import formats as f

    registry = ExtractorRegistry(fallback=f.fallback.extract_unsupported, limits=limits)
    registry.add(f.pdf.MIMES, functools.partial(f.pdf.extract_pdf, ocr=ocr))
    registry.add(f.docx.MIMES, f.docx.extract_docx)
    registry.add(f.pptx.MIMES, f.pptx.extract_pptx)
    registry.add(f.xlsx.MIMES, f.xlsx.extract_xlsx)
    registry.add(f.xls.MIMES, f.xls.extract_xls)
    registry.add(f.ooxml.MIMES, f.ooxml.extract_encrypted_ooxml)
    registry.add(f.odt.MIMES, f.odt.extract_odt)
    registry.add(f.ods.MIMES, f.ods.extract_ods)
    registry.add(f.odp.MIMES, f.odp.extract_odp)
    registry.add(f.text.MIMES, f.text.extract_text)
    registry.add(f.csv.MIMES, f.csv.extract_csv)
    registry.add(f.html.MIMES, f.html.extract_html)
    registry.add(f.image.MIMES, functools.partial(f.image.extract_image, ocr=ocr))
    registry.add(f.archive.MIMES, ZipExtractor(archive_limits))
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
