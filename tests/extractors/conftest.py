"""Fixtures for the extractor tests: the shared corpus, its manifest and snippet matching."""

from __future__ import annotations

import json
import re

import pytest

from extractors import Extraction, build_registry
from extractors.runner import shutdown_pool
from tests.corpus import CORPUS

MANIFEST = json.loads((CORPUS / "manifest.json").read_text(encoding="utf-8"))
ENTRIES = {entry["file"]: entry for entry in MANIFEST}

_BIDI = re.compile("[\u200e\u200f\u202a-\u202e\u2066-\u2069\ufeff]")


def normalise(text: str) -> str:
    """The corpus README's matching rule: no bidi controls or BOM, whitespace runs as one space."""
    return re.sub(r"\s+", " ", _BIDI.sub("", text)).strip()


def plain_text(extraction: Extraction) -> str:
    """All text a user sees that did not come from OCR, normalised."""
    return normalise("\n".join(i.data for i in extraction.items if i.is_text and not i.metadata.get("ocr")))


def ocr_text(extraction: Extraction) -> str:
    return normalise("\n".join(i.data for i in extraction.items if i.is_text and i.metadata.get("ocr")))


def corpus_bytes(name: str) -> bytes:
    return (CORPUS / name).read_bytes()


@pytest.fixture(scope="session")
def registry():
    return build_registry()


@pytest.fixture(scope="session")
def extracted(registry):
    """Extract each corpus file once per session (OCR is slow), with its known password."""
    cache: dict[str, Extraction] = {}

    def get(name: str) -> Extraction:
        if name not in cache:
            entry = ENTRIES[name]
            cache[name] = registry.extract(corpus_bytes(name), name, password=entry.get("password") or None)
        return cache[name]

    return get


@pytest.fixture(scope="session", autouse=True)
def _stop_worker_processes():
    yield
    shutdown_pool()
