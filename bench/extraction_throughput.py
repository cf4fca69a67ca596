"""Throughput over the shared corpus: our extraction against the format libraries called naively.

Run: python bench/extraction_throughput.py [--rounds N]
Both sides read the same PDF/DOCX/XLSX/PPTX files in the same run; OCR is off on our side so the
comparison is like for like (the naive calls do no OCR), and its cost is reported separately.
Times are CPU seconds of this process: the machine is shared, and wall time swings with its load.
"""

from __future__ import annotations

import argparse
import io
import json
import logging
import sys
import time
import warnings
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

import docx  # noqa: E402
import openpyxl  # noqa: E402
import pptx  # noqa: E402
import pypdf  # noqa: E402

from extractors import build_registry  # noqa: E402

CORPUS = REPO / ".." / "shared" / "corpus"
OFFICE_AND_PDF = (".pdf", ".docx", ".xlsx", ".pptx")


def naive_pdf(data: bytes, password: str | None) -> str:
    reader = pypdf.PdfReader(io.BytesIO(data))
    if reader.is_encrypted:
        reader.decrypt(password or "")
    return "\n".join(page.extract_text() for page in reader.pages)


def naive_docx(data: bytes, password: str | None) -> str:
    document = docx.Document(io.BytesIO(data))
    parts = [paragraph.text for paragraph in document.paragraphs]
    parts += [cell.text for table in document.tables for row in table.rows for cell in row.cells]
    return "\n".join(parts)


def naive_xlsx(data: bytes, password: str | None) -> str:
    workbook = openpyxl.load_workbook(io.BytesIO(data), data_only=True)
    return "\n".join(
        "\t".join("" if value is None else str(value) for value in row)
        for sheet in workbook.worksheets
        for row in sheet.iter_rows(values_only=True)
    )


def naive_pptx(data: bytes, password: str | None) -> str:
    presentation = pptx.Presentation(io.BytesIO(data))
    return "\n".join(shape.text_frame.text for slide in presentation.slides for shape in slide.shapes if shape.has_text_frame)


NAIVE = {".pdf": naive_pdf, ".docx": naive_docx, ".xlsx": naive_xlsx, ".pptx": naive_pptx}


def run_naive(files: list[tuple[str, bytes, str | None]]) -> float:
    start = time.process_time()
    for name, data, password in files:
        try:
            NAIVE[Path(name).suffix](data, password)
        except Exception:  # noqa: BLE001 - naive code fails on broken files; we only time it
            pass
    return time.process_time() - start


def run_ours(files: list[tuple[str, bytes, str | None]], registry) -> float:
    start = time.process_time()
    for name, data, password in files:
        registry.extract(data, name, password=password)
    return time.process_time() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5, help="timed rounds; the best is reported")
    args = parser.parse_args()
    logging.disable(logging.WARNING)  # pypdf logs every repaired xref; printing them skews timing
    warnings.simplefilter("ignore")
    manifest = json.loads((CORPUS / "manifest.json").read_text(encoding="utf-8"))
    everything = [(e["file"], (CORPUS / e["file"]).read_bytes(), e.get("password") or None) for e in manifest]
    files = [entry for entry in everything if entry[0].endswith(OFFICE_AND_PDF)]
    registry = build_registry(ocr=False)
    run_ours(files, registry)  # warm-up: imports, font tables, pdfium loading
    run_naive(files)
    # Interleaved rounds, so both sides see the same machine load (the tree is shared).
    ours_times, naive_times = [], []
    for _ in range(args.rounds):
        ours_times.append(run_ours(files, registry))
        naive_times.append(run_naive(files))
    ours, naive = min(ours_times), min(naive_times)
    wall = time.perf_counter()
    run_ours(everything, build_registry(ocr=True))
    with_ocr = time.perf_counter() - wall  # wall time: Tesseract runs in its own process
    print(f"files: {len(files)} PDF/DOCX/XLSX/PPTX of {len(everything)} in the corpus, best of {args.rounds} rounds")
    print(f"naive libraries : {len(files) / naive:8.2f} files/s ({naive:.2f} CPU s)")
    print(f"our extraction  : {len(files) / ours:8.2f} files/s ({ours:.2f} CPU s)")
    print(f"ratio ours/naive: {naive / ours:8.2f} (target >= 0.9)")
    print(f"whole corpus with OCR and every format: {len(everything) / with_ocr:.2f} files/s ({with_ocr:.2f} wall s)")


if __name__ == "__main__":
    main()
