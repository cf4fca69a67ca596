"""Build downloadable files from text and tables: CSV, XLSX, DOCX and Markdown."""

from __future__ import annotations

import csv
import datetime as dt
import io
import math
import re
import zipfile
from typing import TYPE_CHECKING

from agents.toolkit.tables import pipe_table
from extractors.tables import Cell, Table, money, number, text_of

if TYPE_CHECKING:
    from docx.document import Document as DocxDocument
    from docx.text.paragraph import Paragraph

CSV_MIME = "text/csv; charset=utf-8"
XLSX_MIME = "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet"
DOCX_MIME = "application/vnd.openxmlformats-officedocument.wordprocessingml.document"
MARKDOWN_MIME = "text/markdown; charset=utf-8"
ZIP_MIME = "application/zip"

_SHEET_BAD = re.compile(r"[\[\]:*?/\\]")


def csv_bytes(rows: list[list[Cell]]) -> bytes:
    """CSV as UTF-8 with a byte-order mark, so Excel opens accented text correctly."""
    # Excel reads BOM-less CSV in the local ANSI code page and garbles é/ü/漢; Python's
    # csv module and pandas read the BOM fine with encoding="utf-8-sig".
    buffer = io.StringIO()
    csv.writer(buffer, lineterminator="\r\n").writerows([[text_of(c) for c in row] for row in rows])
    return buffer.getvalue().encode("utf-8-sig")


def zip_bytes(files: list[tuple[str, bytes]]) -> bytes:
    """A ZIP archive holding the named files."""
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        for name, data in files:
            archive.writestr(name, data)
    return buffer.getvalue()


def sheet_names(labels: list[str]) -> list[str]:
    """Valid, distinct Excel sheet names (31 characters, no []:*?/\\) for the labels."""
    names: list[str] = []
    seen: set[str] = set()
    for n, label in enumerate(labels, 1):
        base = _SHEET_BAD.sub(" ", label).strip().strip("'") or f"Table {n}"
        name = base[:31]
        counter = 2
        while name.casefold() in seen:
            suffix = f" ({counter})"
            name = base[: 31 - len(suffix)] + suffix
            counter += 1
        seen.add(name.casefold())
        names.append(name)
    return names


def _value(cell: Cell) -> Cell:
    """What a workbook cell holds: numbers stay numbers, number-like text becomes one, dates stay dates."""
    if isinstance(cell, str):
        value = number(cell)
        return value if value is not None else _clean(cell)
    if isinstance(cell, dt.datetime) and cell.tzinfo is not None:
        return cell.replace(tzinfo=None)  # Excel has no time zones
    if isinstance(cell, float) and not math.isfinite(cell):
        return str(cell)
    return cell


def currency_format(symbol: str, decimals: int) -> str:
    """Excel's number format for an amount in this currency, with the decimals the document wrote:
    the symbol after the number for € and CHF ("#,##0.00 \"€\""), before it for $, £ and ¥; Excel
    shows the separators of the reader's locale."""
    digits = "#,##0" + ("." + "0" * decimals if decimals else "")
    return f'{digits} "{symbol}"' if symbol in ("€", "CHF") else f'"{symbol}"{digits}'


def xlsx_bytes(tables: list[Table], names: list[str] | None = None) -> bytes:
    """A workbook with one sheet per table: typed cells, a bold frozen header row, fitted columns."""
    from openpyxl import Workbook
    from openpyxl.styles import Font
    from openpyxl.utils import get_column_letter

    workbook = Workbook()
    workbook.remove(workbook.active)
    if not tables:
        workbook.create_sheet("Sheet1")
    bold = Font(bold=True)
    for table, name in zip(tables, names or sheet_names([t.name for t in tables])):
        sheet = workbook.create_sheet(name)
        widths: dict[int, int] = {}
        for r, row in enumerate(table.rows, 1):
            for c, raw in enumerate(row, 1):
                value = _value(raw)
                if value is None:
                    continue
                amount = money(raw) if isinstance(raw, str) and isinstance(value, str) else None
                if amount is not None:  # "1 280,00 €" is a number shown as money, not text
                    value = amount[0]
                cell = sheet.cell(row=r, column=c, value=value)
                if amount is not None:
                    cell.number_format = currency_format(amount[1], amount[2])
                if cell.data_type == "f":
                    # Text like "=SUM(A1)" from a document is data, not a formula to run.
                    cell.data_type = "s"
                if isinstance(value, dt.datetime) and value.time() == dt.time(0):
                    cell.number_format = "yyyy-mm-dd"
                if table.header_row is not None and r == table.header_row + 1:
                    cell.font = bold
                longest = max((len(line) for line in text_of(value).splitlines()), default=0)
                widths[c] = max(widths.get(c, 0), longest)
        for c, width in widths.items():
            sheet.column_dimensions[get_column_letter(c)].width = min(60, max(8, width + 2))
        if table.header_row is not None:
            sheet.freeze_panes = sheet.cell(row=table.header_row + 2, column=1)
    buffer = io.BytesIO()
    workbook.save(buffer)
    return buffer.getvalue()


def _clean(cell: str) -> str | None:
    # openpyxl refuses control characters; empty cells stay empty rather than "".
    cleaned = re.sub(r"[\x00-\x08\x0b\x0c\x0e-\x1f\ufffe\uffff]", "", cell)
    return cleaned or None


_HEADING = re.compile(r"^(#{1,6})\s+(.*?)\s*#*\s*$")
_BULLET = re.compile(r"^\s*[-*+•]\s+(.*)$")
_NUMBERED = re.compile(r"^\s*\d{1,3}[.)]\s+(.*)$")
_RULE = re.compile(r"^\s*([-*_])(?:\s*\1){2,}\s*$")
_QUOTE = re.compile(r"^\s*>\s?(.*)$")
_INLINE = re.compile(
    r"\*\*(?P<b1>.+?)\*\*|__(?P<b2>.+?)__"
    r"|(?<![\w*])\*(?=\S)(?P<i1>.+?)(?<=\S)\*(?![\w*])"
    r"|(?<![\w_])_(?=\S)(?P<i2>.+?)(?<=\S)_(?![\w_])"
    r"|`(?P<code>[^`]+)`|\[(?P<link>[^\]]+)\]\((?P<url>[^)\s]+)\)"
)


def _runs(paragraph: Paragraph, text: str) -> None:
    """Add Markdown inline text to a python-docx paragraph: bold, italic, code and links."""
    pos = 0
    for match in _INLINE.finditer(text):
        if match.start() > pos:
            paragraph.add_run(text[pos : match.start()])
        parts = match.groupdict()
        if parts["b1"] or parts["b2"]:
            paragraph.add_run(parts["b1"] or parts["b2"]).bold = True
        elif parts["i1"] or parts["i2"]:
            paragraph.add_run(parts["i1"] or parts["i2"]).italic = True
        elif parts["code"]:
            paragraph.add_run(parts["code"]).font.name = "Courier New"
        else:
            # Word shows no Markdown link syntax; the address stays readable after the text.
            paragraph.add_run(f"{parts['link']} ({parts['url']})")
        pos = match.end()
    if pos < len(text):
        paragraph.add_run(text[pos:])


def docx_bytes(markdown: str, title: str | None = None) -> bytes:
    """A Word document from simple Markdown: headings, paragraphs, lists, quotes, pipe tables."""
    from docx import Document

    document = Document()
    lines = markdown.splitlines()
    # A text opening with the title as a heading ("# Title", a summary's "## Summary of x") says it once,
    # as the document's title.
    first = next((i for i, line in enumerate(lines) if line.strip()), None)
    match = _HEADING.match(lines[first]) if first is not None else None
    if title and first is not None and match and match.group(2).strip().casefold() == title.strip().casefold():
        lines = lines[first + 1:]
    if title:
        document.add_heading(title, level=0)
    paragraph: list[str] = []

    def flush() -> None:
        if paragraph:
            _runs(document.add_paragraph(), " ".join(part.strip() for part in paragraph))
            paragraph.clear()

    i = 0
    while i < len(lines):
        line = lines[i]
        if not line.strip():
            flush()
        elif line.lstrip().startswith("```"):
            flush()
            i += 1
            code = []
            while i < len(lines) and not lines[i].lstrip().startswith("```"):
                code.append(lines[i])
                i += 1
            if code:
                document.add_paragraph("\n".join(code))
        elif _RULE.match(line):
            flush()
        elif match := _QUOTE.match(line):
            flush()
            quoted = [match.group(1)]
            while i + 1 < len(lines) and (more := _QUOTE.match(lines[i + 1])):
                quoted.append(more.group(1))
                i += 1
            _runs(document.add_paragraph(style="Quote"), " ".join(q.strip() for q in quoted))
        elif match := _HEADING.match(line):
            flush()
            level = min(len(match.group(1)), 3)
            _runs(document.add_heading("", level=level), match.group(2))
        elif table := pipe_table(lines, i):
            flush()
            rows, i = table
            _table(document, rows)
            continue
        elif match := _BULLET.match(line) or _NUMBERED.match(line):
            flush()
            style = "List Bullet" if _BULLET.match(line) else "List Number"
            nested = len(line) - len(line.lstrip()) >= 2  # an indented item belongs to the one above
            _runs(document.add_paragraph(style=style + (" 2" if nested else "")), match.group(1))
        else:
            paragraph.append(line)
        i += 1
    flush()
    buffer = io.BytesIO()
    document.save(buffer)
    return buffer.getvalue()


def _table(document: DocxDocument, rows: list[list[str]]) -> None:
    """A Word table: the first row a bold header repeated on every page, numbers right-aligned."""
    from docx.enum.text import WD_ALIGN_PARAGRAPH
    from docx.oxml import OxmlElement
    from docx.oxml.ns import qn

    width = max(map(len, rows))
    table = document.add_table(rows=len(rows), cols=width)
    table.style = "Table Grid"
    for r, row in enumerate(rows):
        for c in range(width):
            cell = table.cell(r, c)
            text = row[c] if c < len(row) else ""
            _runs(cell.paragraphs[0], text)
            if r == 0:
                for run in cell.paragraphs[0].runs:
                    run.bold = True
            elif _numeric(text):
                cell.paragraphs[0].alignment = WD_ALIGN_PARAGRAPH.RIGHT
    header = table.rows[0]._tr.get_or_add_trPr()
    repeat = OxmlElement("w:tblHeader")
    repeat.set(qn("w:val"), "true")
    header.append(repeat)


_FIGURE = re.compile(r"^[(\-−+]?[$€£¥]?\s?[\d.,\u00a0\u202f ]*\d[\d.,\u00a0\u202f ]*\s?(?:%|[$€£¥]|[A-Z]{3})?\)?$")


def _numeric(text: str) -> bool:
    """A figure as tables show them: "12,553", "(81)", "-1.5", "2.50%", "€ 4,20", "1 234,5"."""
    text = text.strip()
    return bool(text) and number(text.strip("()%$€£¥ ")) is not None or bool(text and _FIGURE.match(text))


def markdown_bytes(text: str) -> bytes:
    """Markdown as UTF-8 bytes ending in a newline."""
    return (text if text.endswith("\n") else text + "\n").encode("utf-8")
