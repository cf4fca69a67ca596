"""Every built-in format's module, imported together: `build_registry` reads them from here, and the
file readers' forkserver imports this module once, so that its workers start with the document
libraries loaded rather than each importing them (`extractors.runner`)."""

from __future__ import annotations

from extractors import archive, csv, docx, fallback, html, image, odp, ods, odt, ooxml, pdf, pptx, text, xls, xlsx

__all__ = ["archive", "csv", "docx", "fallback", "html", "image", "odp", "ods", "odt", "ooxml", "pdf", "pptx", "text",
           "xls", "xlsx"]
