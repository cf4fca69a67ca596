"""OpenDocument spreadsheets (ODS, what LibreOffice Calc saves): read like Excel workbooks.

One table item per sheet, rows as the sheet shows them (the cell's own displayed text, which
LibreOffice writes beside the value) and the typed values as a table. Repeated rows and
columns (Calc writes a row of 16,384 empty cells as one element) are expanded only up to the
last filled cell, and a sheet stops at `MAX_CELLS` cells (an empty row counts as one) with a
notice. A formula cell saved
without its value is listed in the item's `formulasWithoutValues`.
"""

from __future__ import annotations

import datetime as dt
import re
import zipfile
from collections.abc import Iterator

from lxml import etree

from extractors.base import ContentItem, Extraction
from extractors.odf import ODS, TEMPLATES, EncryptedError, inline_text, open_package, q
from extractors.odt import locked
from extractors.registry import ExtractorRegistry, Source, failure
from extractors.tables import Cell, text_of
from extractors.xlsx import column_letter, sheet_item

MIMES = [ODS, *(m for m, family in TEMPLATES.items() if family == ODS)]
MAX_CELLS = 2_000_000  # per sheet, after expanding repeats

_DURATION = re.compile(r"^-?P(?:(\d+)D)?T?(?:(\d+)H)?(?:(\d+)M)?(?:([\d.]+)S)?$")


def extract_ods(source: Source, registry: ExtractorRegistry) -> Extraction:
    """Each sheet as tab-separated rows and typed cells; hidden sheets are marked."""
    try:
        package = open_package(source.data, source.password)
    except EncryptedError as error:
        return locked(source, error.reason)
    except (zipfile.BadZipFile, KeyError, ValueError, OSError, etree.XMLSyntaxError) as error:
        return failure(source.mime, "corrupt", source.name, f"not a readable OpenDocument spreadsheet ({error})")
    book = package.content.find(f"{q('office:body')}/{q('office:spreadsheet')}")
    if book is None:
        return failure(source.mime, "corrupt", source.name, "the spreadsheet has no sheets")
    hidden_styles = _hidden_table_styles(package.content)
    items: list[ContentItem] = []
    warnings: list[str] = []
    for number, sheet in enumerate(book.iter(q("table:table")), start=1):
        if sheet.getparent() is not book:
            continue  # a table inside a shape or cell, not a sheet
        title = sheet.get(q("table:name"), f"Sheet{number}")
        values, shown, missing, cut = read_sheet(sheet)
        if cut:
            warnings.append(f"{source.name}: sheet {title} was cut at {MAX_CELLS:,} cells.")
        item = sheet_item(len(items) + 1, title, values, shown,
                          hidden=sheet.get(q("table:style-name"), "") in hidden_styles, extractor="odf",
                          missing=missing)
        if package.decrypted:
            item.metadata["decrypted"] = True
        items.append(item)
    if not items:
        return failure(source.mime, "corrupt", source.name, "the spreadsheet has no sheets")
    return Extraction(mime=source.mime, status="ok", items=items, warnings=warnings)


def read_sheet(sheet: etree._Element) -> tuple[list[list[Cell]], list[list[str]], list[dict[str, str]], bool]:
    """(values, shown texts, formula cells without a value, whether the sheet was cut)."""
    values: list[list[Cell]] = []
    shown: list[list[str]] = []
    missing: list[dict[str, str]] = []
    pending_rows = 0  # empty rows seen but not yet added: added only when a filled row follows
    cells = 0
    for row in _rows(sheet):
        row_values, row_shown = _row(row, len(values) + pending_rows, missing)
        repeat = int(row.get(q("table:number-rows-repeated"), "1") or 1)
        if not row_shown:
            pending_rows += repeat
            continue
        cells += pending_rows  # an empty row costs a line too: a gap of a million rows is a bomb
        if cells > MAX_CELLS:
            return values, shown, missing, True
        for _ in range(pending_rows):
            values.append([])
            shown.append([])
        pending_rows = 0
        for _ in range(repeat):
            cells += len(row_values)
            if cells > MAX_CELLS:
                return values, shown, missing, True
            values.append(list(row_values))
            shown.append(list(row_shown))
    return values, shown, missing, False


def _rows(element: etree._Element) -> Iterator[etree._Element]:
    for child in element:
        if child.tag == q("table:table-row"):
            yield child
        elif child.tag in (q("table:table-header-rows"), q("table:table-rows"), q("table:table-row-group")):
            yield from _rows(child)


def _row(row: etree._Element, index: int, missing: list[dict[str, str]]) -> tuple[list[Cell], list[str]]:
    """One row's values and shown texts up to its last filled cell."""
    values: list[Cell] = []
    shown: list[str] = []
    pending = 0
    for cell in row:
        if cell.tag not in (q("table:table-cell"), q("table:covered-table-cell")):
            continue
        repeat = int(cell.get(q("table:number-columns-repeated"), "1") or 1)
        value, text = _cell(cell)
        formula = cell.get(q("table:formula"))
        if formula and value is None:
            missing.append({"cell": f"{column_letter(len(values) + pending + 1)}{index + 1}",
                            "formula": formula.removeprefix("of:")})
        if value is None and not text:
            pending += repeat
            continue
        values.extend([None] * pending)
        shown.extend([""] * pending)
        pending = 0
        repeat = min(repeat, 1024)  # the same value over more columns than a sheet shows is a bomb
        values.extend([value] * repeat)
        shown.extend([text] * repeat)
    return values, shown


def _cell(cell: etree._Element) -> tuple[Cell, str]:
    """A cell's typed value and its displayed text."""
    text = "\n".join(inline_text(p) for p in cell.iter(q("text:p")))
    kind = cell.get(q("office:value-type"))
    value: Cell = None
    try:
        if kind in ("float", "percentage", "currency"):
            raw = float(cell.get(q("office:value"), "nan"))
            value = int(raw) if raw.is_integer() and abs(raw) < 1e15 else raw
            if raw != raw:
                value = text or None
        elif kind == "date":
            raw_date = cell.get(q("office:date-value"), "")
            value = dt.datetime.fromisoformat(raw_date) if "T" in raw_date else dt.date.fromisoformat(raw_date)
        elif kind == "time":
            value = _duration(cell.get(q("office:time-value"), ""))
        elif kind == "boolean":
            value = cell.get(q("office:boolean-value"), "false") == "true"
        elif kind == "string":
            value = cell.get(q("office:string-value")) or text or None
    except ValueError:
        value = text or None
    if value is None and kind is None and not cell.get(q("table:formula")):
        value = text or None
    if not text and value is not None:
        text = text_of(value)
    return value, text


def _duration(raw: str) -> Cell:
    """'PT18H15M00S' as a time of day; a longer one counts from Calc's day 0, 1899-12-30, as Excel's do."""
    match = _DURATION.match(raw)
    if not match:
        return raw or None
    days, hours, minutes, seconds = (float(g) if g else 0.0 for g in match.groups())
    total = days * 86400 + hours * 3600 + minutes * 60 + seconds
    if raw.startswith("-"):
        return raw
    if total >= 86400:
        return dt.datetime(1899, 12, 30) + dt.timedelta(seconds=round(total, 3))
    whole = int(total)
    return dt.time(whole // 3600, whole % 3600 // 60, whole % 60, int(round((total - whole) * 1e6)) % 1_000_000)


def _hidden_table_styles(content: etree._Element) -> set[str]:
    """Names of the automatic table styles that hide their sheet."""
    hidden = set()
    for style in content.iter(q("style:style")):
        if style.get(q("style:family")) != "table":
            continue
        properties = style.find(q("style:table-properties"))
        if properties is not None and properties.get(q("table:display")) == "false":
            hidden.add(style.get(q("style:name"), ""))
    return hidden
