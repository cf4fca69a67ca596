"""Tables delivered offline keep the source's cells: every table of every table-bearing corpus
document, cell by cell, numbers as numbers; prose documents deliver no table."""

from __future__ import annotations

import io

import openpyxl
import pytest

from agents.offline import OfflineModel
from agents.registry import build_registry
from tests.agents.conftest import load_document, play_round
from tests.fidelity import PROSE_DOCS, TABLE_DOCS, compare, source_tables, workbook_tables


async def tables_round(name: str, prompt: str = "Extract the tables as Excel."):
    done = await play_round(prompt, [load_document(name)], OfflineModel(), build_registry(entry_points=False))
    [result] = done.by_agent("data_extractor")
    return result


@pytest.mark.parametrize("name", TABLE_DOCS)
async def test_the_workbook_holds_every_cell_of_every_source_table(name: str) -> None:
    result = await tables_round(name)
    [workbook] = [f for f in result.files if f.name.endswith(".xlsx")]
    assert [f.name for f in result.files] == [workbook.name]  # no CSV unless asked for
    source = source_tables(name)
    delivered = workbook_tables(workbook.data)
    assert len(delivered) == len(source)
    equal, total = compare(source, delivered)
    print(f"{name}: {equal}/{total} cells equal")
    assert total and equal == total


@pytest.mark.parametrize("name", PROSE_DOCS)
async def test_prose_yields_no_table(name: str) -> None:
    result = await tables_round(name)
    assert result.files == []
    assert "No tables" in result.text


async def test_each_sheet_is_named_after_its_source_with_a_frozen_bold_header() -> None:
    result = await tables_round("2023-half-year-analyses-by-segment.xlsx")
    [workbook] = result.files
    book = openpyxl.load_workbook(io.BytesIO(workbook.data))
    assert book.sheetnames[0] == "OS-Rev.and results 30 06 2023"
    sheet = book.worksheets[0]
    header = [c.value for c in sheet[6]]
    assert header[:3] == [None, "Zone NA", "Zone EU"] or all(isinstance(v, (str, type(None))) for v in header)
    assert sheet.freeze_panes == "A7" and any(c.font.bold for c in sheet[6] if c.value)
    numbers = [c.value for row in sheet.iter_rows(min_row=7) for c in row if isinstance(c.value, (int, float))]
    assert len(numbers) > 50
    assert sheet.column_dimensions["A"].width > 8
    assert "5 tables extracted from 2023-half-year-analyses-by-segment.xlsx." in result.text
    assert "sheet “OS-Rev.and results 30 06 2023”: 2023-half-year-analyses-by-segment.xlsx, 39 rows" in result.text
    assert result.text.rstrip().endswith("2023-half-year-analyses-by-segment-tables.xlsx (5 sheets)")


async def test_the_csv_keeps_its_header_row_above_its_data() -> None:
    result = await tables_round("testCSV.csv")
    sheet = openpyxl.load_workbook(io.BytesIO(result.files[0].data)).worksheets[0]
    rows = [list(r) for r in sheet.iter_rows(values_only=True)]
    header = rows.index([None, "Number", "Square"])
    assert rows[header + 2] == [None, 1, 1] and sheet.freeze_panes == f"A{header + 2}"


async def test_the_pdf_table_is_found_on_its_page() -> None:
    result = await tables_round("multicolumn.pdf")
    assert openpyxl.load_workbook(io.BytesIO(result.files[0].data)).sheetnames == ["page 3 table 1"]
    assert "1 table extracted from multicolumn.pdf." in result.text


async def test_csv_only_when_asked_one_file_per_table_or_a_zip() -> None:
    result = await tables_round("testCSV.csv", "Give me the table as CSV.")
    assert [f.name for f in result.files] == ["testCSV-tables.csv"]
    result = await tables_round("2023-half-year-analyses-by-segment.xlsx", "Export the tables as CSV.")
    [archive] = result.files
    assert archive.name == "2023-half-year-analyses-by-segment-tables.zip"
    import zipfile

    names = zipfile.ZipFile(io.BytesIO(archive.data)).namelist()
    assert len(names) == 5 and all(n.endswith(".csv") for n in names)


async def test_a_book_yields_only_its_real_tables_not_prose() -> None:
    result = await tables_round("freeculture.pdf")
    book = openpyxl.load_workbook(io.BytesIO(result.files[0].data))
    assert book.sheetnames == ["page 183 table 1", "page 183 table 2", "page 183 table 3"]
    rows = [list(r) for r in book["page 183 table 2"].iter_rows(values_only=True)]
    assert rows == [[None, "COPY", "TRANSFORM"], ["Commercial", "©", "©"], ["Noncommercial", "©/Free", "Free"]]
