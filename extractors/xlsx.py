"""Excel workbooks: one table item per sheet, values shown as their number formats show them."""

from __future__ import annotations

import io
import zipfile
from typing import Any

import openpyxl
from openpyxl.cell import Cell as OpenpyxlCell
from openpyxl.cell.read_only import EmptyCell, ReadOnlyCell
from openpyxl.utils.exceptions import InvalidFileException

from extractors import recalc
from extractors.base import ContentItem, Extraction
from extractors.csv import render_rows
from extractors.numfmt import format_value
from extractors.registry import ExtractorRegistry, Source, failure
from extractors.tables import attach, make_table

MIMES = [
    "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet",
    "application/vnd.ms-excel.sheet.macroEnabled.12",
]


def extract_xlsx(source: Source, registry: ExtractorRegistry) -> Extraction:
    """Each sheet as tab-separated rows; formulas give their cached values, or values computed by
    `recalc` when the file was saved without them, or are named when neither can be had."""
    try:
        # read_only streams rows without building the cell graph; data_only gives cached results.
        workbook = openpyxl.load_workbook(io.BytesIO(source.data), read_only=True, data_only=True)
    except (InvalidFileException, zipfile.BadZipFile, KeyError, ValueError, OSError) as error:
        return failure(source.mime, "corrupt", source.name, f"not a readable workbook ({error})")
    missing = recalc.uncached(source.data)
    computed, engine = recalc.compute(source.data, missing) if missing else ({}, "")
    items = []
    try:
        for number, sheet in enumerate(workbook.worksheets, start=1):
            raw = [list(row) for row in sheet.iter_rows()]
            values = [[_value(cell, sheet.title, computed) for cell in row] for row in raw]
            shown = [[format_value(value, getattr(cell, "number_format", None)) for cell, value in zip(row, row_values)]
                     for row, row_values in zip(raw, values)]
            left = [m for m in missing.get(sheet.title, []) if (sheet.title, m["cell"]) not in computed]
            done = [m["cell"] for m in missing.get(sheet.title, []) if (sheet.title, m["cell"]) in computed]
            item = sheet_item(number, sheet.title, values, shown, hidden=sheet.sheet_state != "visible",
                              extractor="openpyxl", missing=left)
            if done:
                item.metadata["formulasComputed"] = {"by": engine, "cells": done}
            items.append(item)
    finally:
        workbook.close()
    if not items:
        return failure(source.mime, "corrupt", source.name, "the workbook has no worksheets")
    return Extraction(mime=source.mime, status="ok", items=items)


def _value(cell: OpenpyxlCell | ReadOnlyCell | EmptyCell, title: str,
           computed: dict[tuple[str, str], object]) -> object:
    """The cell's saved value, or the value computed for a formula saved without one."""
    if cell.value is None and computed and getattr(cell, "row", None):
        return computed.get((title, f"{column_letter(cell.column)}{cell.row}"))
    return cell.value


def sheet_item(number: int, title: str, values: list[list[Any]], shown: list[list[str]], *, hidden: bool,
               extractor: str, missing: list[dict[str, str]] | None = None) -> ContentItem:
    """One sheet as a content item: its rows as the sheet shows them (tab-separated), and its cells
    themselves (numbers, dates, cached formula results) as a table for table work.

    `missing` lists formula cells saved without a value ({"cell": "B7", "formula": "=B6*2"}): they
    are named in the item's metadata and summary, never left to look like empty cells. `values`
    are the cells as the reader's library gives them (openpyxl's and xlrd's are untyped).
    """
    table = render_rows(_trim(shown))
    cells = make_table(f"sheet {title}", values, f"sheet {title}", sheet=title)
    metadata = {
        "extractor": extractor,
        "sheet": title,
        "rows": table.count("\n") + 1 if table else 0,
        "hidden": hidden,
        "ocr": False,
    }
    if missing:
        metadata["formulasWithoutValues"] = missing
    return ContentItem(
        sequence_nr=number,
        name=f"sheet {title}",
        ext="tsv",
        content_type="text/tab-separated-values",
        data=table,
        metadata=attach(metadata, [cells] if cells else []),
    )


def column_letter(index: int) -> str:
    """1 -> 'A', 27 -> 'AA'."""
    letters = ""
    while index > 0:
        index, rest = divmod(index - 1, 26)
        letters = chr(65 + rest) + letters
    return letters


def _trim(rows: list[list[str]]) -> list[list[str]]:
    """Drop the empty rows above the first filled one and the empty columns left of the first."""
    filled = [row for row in rows if any(row)]
    if not filled:
        return []
    first_row = next(i for i, row in enumerate(rows) if any(row))
    first_column = min(next(i for i, cell in enumerate(row) if cell) for row in filled)
    return [row[first_column:] for row in rows[first_row:]]
