"""Table fidelity: the cells of the corpus' tables read straight from the source files, and the
cells of a delivered workbook, compared cell by cell (used by the tests and bench/quality.py).

The source side uses the format libraries directly (openpyxl, csv, python-docx, python-pptx),
not our extractors, and a hand-checked table for PDFs, so a bug in extraction shows up here.
"""

from __future__ import annotations

import csv
import datetime as dt
import io
import re
from typing import Any

from extractors.tables import trim
from tests.corpus import CORPUS

# Table-bearing corpus documents, and documents of prose that must yield no table.
TABLE_DOCS = [
    "2023-half-year-analyses-by-segment.xlsx", "testEXCEL.xlsx", "testEXCEL-formats.xlsx",
    "testCSV.csv", "stanley-cups.tsv", "testWORD_various.docx", "testPPT_various.pptx",
    "powerpoint_sample.pptx", "multicolumn.pdf", "korean-text-with-tables.pdf",
]
PROSE_DOCS = [
    "minimal-document.pdf", "002-trivial-libre-office-writer.pdf", "loremipsum-flat.pdf",
    "sample-french-1.txt", "UDHR_first_article_all.txt", "testWORD_numbered_list.docx", "ideas-page.html",
    "multilang.pdf", "habibi.pdf",
]

# multicolumn.pdf page 3 as it reads on the page (Table 1: EU Countries Information).
MULTICOLUMN_PAGE_3 = [
    ["Country", "Population (millions)", "Area (km2)", "Capital", "Official Language"],
    ["Austria", 8.9, 83879, "Vienna", "German"],
    ["Belgium", 11.5, 30689, "Brussels", "Dutch, French, German"],
    ["Czech Republic", 10.7, 78866, "Prague", "Czech"],
    ["Denmark", 5.8, 42951, "Copenhagen", "Danish"],
    ["Finland", 5.5, 338424, "Helsinki", "Finnish, Swedish"],
]

# korean-text-with-tables.pdf page 1: the two tables of merchants (rules without outer borders).
KOREAN_PAGE_1 = [
    [["업종", "적립 대상"], ["할인점", "이마트, 이마트 트레이더스, 롯데마트, 홈플러스"], ["주유", "모든 주유소"],
     ["온라인쇼핑몰", "삼성카드 쇼핑, G마켓, 옥션, 11번가, 인터파크, 쿠팡, 티몬, 위메프"]],
    [["업종", "적립 대상"],
     ["커피전문점", "스타벅스, 투썸플레이스, 카페베네, 탐앤탐스, 커피빈, 엔제리너스, 할리스커피, 파스쿠찌, 아티제, 폴 바셋"],
     ["제과점", "파리바게뜨, 뚜레쥬르"], ["편의점", "CU, GS25, 세븐일레븐, 미니스톱"]],
]

Grid = list[list[Any]]
_NUMBER = re.compile(r"^-?(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?$")


def source_tables(name: str) -> list[Grid]:
    """The document's tables as grids of cells, read without our extractors."""
    path = CORPUS / name
    ext = name.rsplit(".", 1)[-1].lower()
    if ext == "xlsx":
        import openpyxl

        book = openpyxl.load_workbook(path, data_only=True)
        sheets = [grid([[c.value for c in row] for row in sheet.iter_rows()]) for sheet in book.worksheets]
        return [sheet for sheet in sheets if sheet]  # an empty sheet holds no table
    if ext in ("csv", "tsv"):
        text = path.read_bytes().decode("utf-8-sig")
        delimiter = "\t" if ext == "tsv" else csv.Sniffer().sniff(text[:4096], ",;\t").delimiter
        return [grid([[_typed(c) for c in row] for row in csv.reader(io.StringIO(text, newline=""), delimiter=delimiter)])]
    if ext == "docx":
        import docx

        tables = []
        for table in docx.Document(str(path)).tables:
            rows = []
            for row in table.rows:
                cells, seen = [], None
                for cell in row.cells:  # python-docx repeats a merged cell: keep it once
                    cells.append(None if cell._tc is seen or cell._tc.vMerge == "continue" else _typed(cell.text))
                    seen = cell._tc
                rows.append(cells)
            tables.append(grid(rows))
        return tables
    if ext == "pptx":
        import pptx

        tables = []
        for slide in pptx.Presentation(str(path)).slides:
            for shape in slide.shapes:
                if getattr(shape, "has_table", False) and shape.has_table:
                    tables.append(grid([[None if c.is_spanned else _typed(c.text) for c in row.cells]
                                        for row in shape.table.rows]))
        return tables
    if name == "multicolumn.pdf":
        return [grid(MULTICOLUMN_PAGE_3)]
    if name == "korean-text-with-tables.pdf":
        return [grid(table) for table in KOREAN_PAGE_1]
    return []


def workbook_tables(data: bytes) -> list[Grid]:
    """Every sheet of a delivered workbook as a grid of cells."""
    import openpyxl

    book = openpyxl.load_workbook(io.BytesIO(data))
    return [grid([[c.value for c in row] for row in sheet.iter_rows()]) for sheet in book.worksheets]


def grid(rows: Grid) -> Grid:
    """Rows without empty rows/columns around the table and without trailing empty cells."""
    rows = [[None if _blank(c) else (" ".join(c.split()) if isinstance(c, str) else c) for c in row] for row in rows]
    return trim(rows)


def compare(source: list[Grid], delivered: list[Grid]) -> tuple[int, int]:
    """(cells of the source found equal at the same place in the delivered table, cells in the source)."""
    equal = total = 0
    for index, table in enumerate(source):
        other = delivered[index] if index < len(delivered) else []
        for r, row in enumerate(table):
            for c, cell in enumerate(row):
                if cell is None:
                    continue
                total += 1
                mine = other[r][c] if r < len(other) and c < len(other[r]) else None
                equal += same(cell, mine)
    return equal, total


def same(a: Any, b: Any) -> bool:
    """Equal as cells: numbers by value and only as numbers, dates as dates, text as text."""
    if isinstance(a, bool) or isinstance(b, bool):
        return a == b and type(a) is type(b)
    if isinstance(a, (int, float)):
        return isinstance(b, (int, float)) and abs(a - b) <= 1e-9 * max(1.0, abs(a))
    if isinstance(a, dt.datetime) and isinstance(b, dt.datetime):
        return a.replace(tzinfo=None) == b
    return a == b


def _typed(text: str) -> Any:
    text = " ".join(str(text).split())
    if _NUMBER.match(text) and not (len(text) > 1 and text[0] == "0" and text[1] != "."):
        plain = text.replace(",", "")
        return float(plain) if "." in plain else int(plain)
    return text or None


def _blank(cell: Any) -> bool:
    return cell is None or (isinstance(cell, str) and not cell.strip())
