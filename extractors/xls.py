"""Old binary Excel workbooks (.xls, Excel 97-2003): one table item per sheet, as for .xlsx.

Read with xlrd, whose 2.x line reads exactly this format. Cells keep their types: numbers stay
numbers (an integral float is an int), dates become datetimes, and the shown text applies the
cell's number format as Excel does.
"""

from __future__ import annotations

from typing import Any

import xlrd

from extractors.base import Extraction
from extractors.numfmt import format_value
from extractors.registry import ExtractorRegistry, Source, failure
from extractors.xlsx import sheet_item

MIMES = ["application/vnd.ms-excel"]


def extract_xls(source: Source, registry: ExtractorRegistry) -> Extraction:
    """Each sheet as tab-separated rows; an encrypted or damaged workbook is said to be one."""
    try:
        book = xlrd.open_workbook(file_contents=source.data, formatting_info=True, on_demand=True)
    except xlrd.XLRDError as error:
        if "encrypted" in str(error).lower():
            return failure(source.mime, "encrypted", source.name,
                           "the workbook is encrypted; save it without a password or as .xlsx")
        return failure(source.mime, "corrupt", source.name, f"not a readable workbook ({error})")
    except (ValueError, KeyError, IndexError, AssertionError, OSError) as error:  # xlrd's own checks
        return failure(source.mime, "corrupt", source.name, f"not a readable workbook ({error})")
    items = []
    try:
        for number, sheet in enumerate(book.sheets(), start=1):
            cells = [sheet.row(r) for r in range(sheet.nrows)]
            values = [[_value(book, cell) for cell in row] for row in cells]
            shown = [[format_value(value, _format(book, cell)) for value, cell in zip(vrow, row)]
                     for vrow, row in zip(values, cells)]
            items.append(sheet_item(number, sheet.name, values, shown, hidden=sheet.visibility != 0,
                                    extractor="xlrd"))
    finally:
        book.release_resources()
    if not items:
        return failure(source.mime, "corrupt", source.name, "the workbook has no worksheets")
    return Extraction(mime=source.mime, status="ok", items=items)


def _value(book: xlrd.Book, cell: xlrd.sheet.Cell) -> Any:
    kind = cell.ctype
    if kind in (xlrd.XL_CELL_EMPTY, xlrd.XL_CELL_BLANK):
        return None
    if kind == xlrd.XL_CELL_NUMBER:
        return int(cell.value) if float(cell.value).is_integer() and abs(cell.value) < 1e15 else cell.value
    if kind == xlrd.XL_CELL_DATE:
        try:
            return xlrd.xldate_as_datetime(cell.value, book.datemode)
        except (xlrd.xldate.XLDateError, ValueError, OverflowError):
            return cell.value
    if kind == xlrd.XL_CELL_BOOLEAN:
        return bool(cell.value)
    if kind == xlrd.XL_CELL_ERROR:
        return xlrd.error_text_from_code.get(cell.value, "#ERROR")
    return cell.value


def _format(book: xlrd.Book, cell: xlrd.sheet.Cell) -> str | None:
    try:
        # xlrd has no type hints: a format's string, or None.
        found: str | None = book.format_map[book.xf_list[cell.xf_index].format_key].format_str
        return found
    except (IndexError, KeyError, TypeError):
        return None
