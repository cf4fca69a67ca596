"""Formula cells saved without values: the `formulas` library against LibreOffice's recalculation.

Run: python bench/recalc.py (not named formulas.py: the script's folder comes first on sys.path)
Both compute the same workbook (tests/extractors/test_formulas.py's yearly sheets with totals and a
summary sheet, written by openpyxl, so no value is saved); prints each engine's seconds (wall,
the first call in this process and a warm one) and whether their values agree cell by cell.
LibreOffice is measured only when `soffice` is on PATH (Debian: libreoffice-calc-nogui).
"""

from __future__ import annotations

import io
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

import openpyxl  # noqa: E402

from extractors import recalc  # noqa: E402
from tests.extractors.test_formulas import yearly_workbook  # noqa: E402


def by_formulas(data: bytes) -> tuple[dict, float, float]:
    missing = recalc.uncached(data)
    start = time.perf_counter()
    values, _ = recalc.compute(data, missing)
    cold = time.perf_counter() - start
    start = time.perf_counter()
    recalc.compute(data, missing)
    return values, cold, time.perf_counter() - start


def by_libreoffice(data: bytes) -> tuple[dict, float]:
    missing = recalc.uncached(data)
    with tempfile.TemporaryDirectory() as folder:
        source = Path(folder) / "book.xlsx"
        source.write_bytes(data)
        start = time.perf_counter()
        subprocess.run(["soffice", "--headless", f"-env:UserInstallation=file://{folder}/profile", "--convert-to",
                        "xlsx", "--outdir", f"{folder}/out", str(source)], check=True, capture_output=True)
        seconds = time.perf_counter() - start
        book = openpyxl.load_workbook(io.BytesIO((Path(folder) / "out" / "book.xlsx").read_bytes()), data_only=True)
    values = {(title, m["cell"]): book[title][m["cell"]].value for title, cells in missing.items() for m in cells}
    return values, seconds


def main() -> None:
    data = yearly_workbook()
    cells = sum(len(c) for c in recalc.uncached(data).values())
    values, cold, warm = by_formulas(data)
    print(f"workbook: {len(data):,} bytes, {cells} formula cells without values")
    print(f"formulas library: {len(values)} computed, first call {cold:.2f} s, warm {warm:.2f} s")
    if shutil.which("soffice"):
        theirs, seconds = by_libreoffice(data)
        same = sum(1 for key, value in values.items() if abs(float(theirs.get(key) or 0) - float(value)) < 1e-9)
        print(f"LibreOffice headless: {len(theirs)} computed in {seconds:.2f} s (a fresh soffice process)")
        print(f"agreement: {same} of {len(values)} cells equal; LibreOffice/formulas warm time ratio "
              f"{seconds / warm:.1f}x")
    else:
        print("LibreOffice: soffice is not installed, not measured")


if __name__ == "__main__":
    main()
