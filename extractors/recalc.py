"""Formula cells a workbook holds without their values, found and computed.

A workbook written by a script (openpyxl, many exporters) carries formulas but no cached
results; Excel computes them on opening, openpyxl's `data_only` reads them as empty. `uncached`
finds them in the sheets' XML (a cell with an `<f>` and no value in `<v>`), and `compute` evaluates the
workbook with the `formulas` library (pure Python, on PyPI, maintained), in the extraction
worker. Cells it cannot compute (an unsupported function, an error value) stay listed as
formulas without values, never shown as if they were empty.

Measured (bench/recalc.py, on this 2-core machine shared with other work): a three-sheet
workbook of yearly figures with totals and a summary sheet (14 formulas without values) is
computed in 0.4-0.6 s in a warm worker, 8-12 s for the first workbook a worker computes (the
library loads its function tables once); LibreOffice 7.4's headless recalculation
(`soffice --convert-to xlsx`) gave the same 14 values in 9.3-10.6 s a file, most of it starting
LibreOffice, and needs a 400 MB install: the library is the default, and the only engine.
"""

from __future__ import annotations

import contextlib
import io
import logging
import os
import posixpath
import re
import tempfile
import zipfile
from xml.sax.saxutils import unescape

from lxml import etree

from extractors.package import read_part

log = logging.getLogger(__name__)

MAX_BYTES = 5 * 1024 * 1024  # larger workbooks are not recalculated: their cells are named instead
MAX_CELLS = 20_000

_MAIN = "{http://schemas.openxmlformats.org/spreadsheetml/2006/main}"
_REL = "{http://schemas.openxmlformats.org/officeDocument/2006/relationships}"
_PKG_REL = "{http://schemas.openxmlformats.org/package/2006/relationships}"
_CELL = re.compile(rb"<c\b([^>]*?)(?:/>|>(.*?)</c>)", re.DOTALL)
_REF = re.compile(rb'\br="([A-Z]{1,3}\d{1,7})"')
_FORMULA = re.compile(rb"<f\b[^>]*?(?:/>|>(.*?)</f>)", re.DOTALL)
_SAVED = re.compile(rb"<v>[^<]")  # openpyxl writes an empty <v></v> for a formula it did not compute
_PARSER = etree.XMLParser(resolve_entities=False, no_network=True)

Missing = dict[str, list[dict[str, str]]]  # sheet title -> [{"cell": "B7", "formula": "=SUM(B2:B6)"}]


def uncached(data: bytes) -> Missing:
    """The formula cells of each sheet that have no saved value; {} when there are none (or no sheets)."""
    try:
        with zipfile.ZipFile(io.BytesIO(data)) as archive:
            found: Missing = {}
            for title, path in _sheets(archive):
                try:
                    xml = read_part(archive, path)
                except KeyError:
                    continue
                if b"<f" not in xml:
                    continue
                cells = []
                for match in _CELL.finditer(xml):
                    body = match.group(2) or b""
                    formula = _FORMULA.search(body)
                    if formula is None or _SAVED.search(body):
                        continue
                    ref = _REF.search(match.group(1))
                    text = unescape((formula.group(1) or b"").decode("utf-8", "replace"))
                    cells.append({"cell": ref.group(1).decode() if ref else "?",
                                  "formula": "=" + text if text else "(shared formula)"})
                if cells:
                    found[title] = cells
            return found
    except (zipfile.BadZipFile, etree.XMLSyntaxError, KeyError, ValueError, OSError):
        return {}


def _sheets(archive: zipfile.ZipFile) -> list[tuple[str, str]]:
    """(title, member path) of each worksheet, in workbook order."""
    book = etree.fromstring(read_part(archive, "xl/workbook.xml"), _PARSER)
    rels = etree.fromstring(read_part(archive, "xl/_rels/workbook.xml.rels"), _PARSER)
    targets = {rel.get("Id"): rel.get("Target", "") for rel in rels.iter(_PKG_REL + "Relationship")}
    sheets = []
    for sheet in book.iter(_MAIN + "sheet"):
        target = targets.get(sheet.get(_REL + "id"), "")
        path = target.lstrip("/") if target.startswith("/") else posixpath.normpath(posixpath.join("xl", target))
        sheets.append((sheet.get("name", ""), path))
    return sheets


def compute(data: bytes, missing: Missing) -> tuple[dict[tuple[str, str], object], str]:
    """Values of the missing cells by (sheet title, cell), and the engine that computed them ("" if none)."""
    count = sum(len(cells) for cells in missing.values())
    if not missing or len(data) > MAX_BYTES or count > MAX_CELLS:
        return {}, ""
    try:
        import formulas
    except ImportError:
        return {}, ""
    wanted = {(title.casefold(), m["cell"]) for title, cells in missing.items() for m in cells}
    titles = {title.casefold(): title for title in missing}
    with tempfile.TemporaryDirectory() as folder:
        path = os.path.join(folder, "book.xlsx")
        with open(path, "wb") as file:
            file.write(data)
        try:
            # The library draws progress bars on stderr; in a worker they are noise.
            with contextlib.redirect_stderr(io.StringIO()):
                solution = formulas.ExcelModel().loads(path).finish().calculate()
        except Exception:  # noqa: BLE001 - a workbook the library cannot model keeps its cells named
            log.info("formulas could not compute the workbook", exc_info=True)
            return {}, ""
    values: dict[tuple[str, str], object] = {}
    for key, ranges in solution.items():
        sheet, _, cell = str(key).rpartition("!")
        sheet = sheet.split("]", 1)[-1].strip("'").casefold()
        if (sheet, cell) not in wanted:
            continue
        value = _plain(getattr(ranges, "value", None))
        if value is not None:
            values[(titles[sheet], cell)] = value
    return values, f"formulas {getattr(formulas, '__version__', '')}".strip()


def _plain(value: object) -> object:
    """A one-cell result as a Python number, text or bool; an error value (#NAME?, #DIV/0!) is None."""
    try:
        value = value[0][0]  # type: ignore[index]
    except (TypeError, IndexError, KeyError):
        return None
    if type(value).__name__ == "XlError" or value is None:
        return None
    if hasattr(value, "item"):  # numpy scalars
        value = value.item()
    if isinstance(value, float) and value.is_integer() and abs(value) < 1e15:
        return int(value)
    return value if isinstance(value, (int, float, str, bool)) else None
