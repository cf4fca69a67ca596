"""Images: the bytes as a base64 item, plus their text when Tesseract can read it."""

from __future__ import annotations

import base64
import io

from PIL import Image, UnidentifiedImageError

from extractors.base import ContentItem, Extraction
from extractors.ocr import ocr_available, recognise
from extractors.registry import ExtractorRegistry, Source, failure

MIMES = ["image/png", "image/jpeg", "image/gif", "image/tiff", "image/bmp", "image/webp"]

# Decompression-bomb guard: PIL warns above its default; we refuse well before memory runs out.
MAX_PIXELS = 80_000_000


def extract_image(source: Source, registry: ExtractorRegistry, *, ocr: bool = True) -> Extraction:
    """The image itself, then an OCR text item when Tesseract is installed."""
    try:
        with Image.open(io.BytesIO(source.data)) as probe:
            width, height, image_format = probe.width, probe.height, probe.format
    except (UnidentifiedImageError, OSError, ValueError) as error:
        return failure(source.mime, "corrupt", source.name, f"not a readable image ({error})")
    extension = (image_format or source.mime.rsplit("/", 1)[-1]).lower().replace("jpeg", "jpg")
    items = [
        ContentItem(
            sequence_nr=1,
            name="image",
            ext=extension,
            content_type=source.mime,
            data=base64.b64encode(source.data).decode("ascii"),
            is_text=False,
            base64_encoded=True,
            metadata={"extractor": "pillow", "width": width, "height": height, "ocr": False},
        )
    ]
    extraction = Extraction(mime=source.mime, status="ok", items=items)
    if width * height > MAX_PIXELS:
        extraction.warnings.append(f"{source.name}: {width}x{height} pixels is too large to OCR.")
    elif not ocr:
        extraction.warnings.append(f"{source.name}: its text was not read because OCR is turned off.")
    elif not ocr_available():
        extraction.warnings.append(f"{source.name}: its text was not read because Tesseract is not installed.")
    else:
        with Image.open(io.BytesIO(source.data)) as image:
            text = recognise(image)
        items.append(
            ContentItem(
                sequence_nr=2,
                name="image text",
                ext="txt",
                content_type="text/plain",
                data=text,
                metadata={"extractor": "tesseract", "ocr": True},
            )
        )
    return extraction
