"""Optical character recognition through Tesseract, when it is installed."""

from __future__ import annotations

import functools
import os
import shutil

import pytesseract
from PIL import Image

# Tesseract reads small glyphs badly; tiny images are scaled up to about this width first.
_MIN_WIDTH = 1000
_MAX_SCALE = 4


@functools.cache
def ocr_available() -> bool:
    """True when the tesseract program can be run."""
    if shutil.which("tesseract") is None:
        return False
    try:
        pytesseract.get_tesseract_version()
    except (pytesseract.TesseractNotFoundError, OSError):
        return False
    return True


def recognise(image: Image.Image, language: str = "eng") -> str:
    """The text Tesseract reads in `image`, with surrounding blank lines removed."""
    # Tesseract's OpenMP threads spin against each other and against our worker processes:
    # on a two-core machine one page took 19 s with them and 2.6 s single-threaded. Parallelism
    # comes from the worker pool instead. pytesseract has no env parameter, hence the process env.
    os.environ.setdefault("OMP_THREAD_LIMIT", "1")
    if image.mode not in ("RGB", "L"):
        image = image.convert("RGB")
    if image.width < _MIN_WIDTH:
        scale = min(_MAX_SCALE, max(1, _MIN_WIDTH // max(image.width, 1)))
        if scale > 1:
            image = image.resize((image.width * scale, image.height * scale), Image.Resampling.LANCZOS)
    text: str = pytesseract.image_to_string(image, lang=language)  # pytesseract has no type hints
    return text.strip()
