"""The shared corpus of real documents that sits beside the repository: the one place tests find it."""

from __future__ import annotations

import os
from functools import lru_cache
from pathlib import Path

import pytest

# The repository's parent directory holds `shared/`, locally and in CI; FOREMAN_CORPUS names it
# for a checkout elsewhere.
CORPUS = Path(os.environ.get("FOREMAN_CORPUS") or Path(__file__).resolve().parents[2] / "shared" / "corpus")


def path(name: str) -> Path:
    """Path of a corpus file; skips the test when the corpus is not checked out beside the repo."""
    file = CORPUS / name
    if not file.exists():
        pytest.skip(f"corpus file {name} not found in {CORPUS}")
    return file


def text(name: str, encoding: str = "utf-8") -> str:
    """A corpus file decoded with the given encoding, newlines kept as they are."""
    return path(name).read_bytes().decode(encoding)


def pdf_pages(name: str, mode: str = "plain") -> list[str]:
    """Text of every page of a corpus PDF, as the PDF extractor's pypdf would give it."""
    return list(_pdf_pages(path(name), mode))


@lru_cache(maxsize=8)
def _pdf_pages(file: Path, mode: str) -> tuple[str, ...]:
    # Parsing a PDF takes seconds; several tests read the same one.
    from pypdf import PdfReader

    return tuple(page.extract_text(extraction_mode=mode) for page in PdfReader(file).pages)
