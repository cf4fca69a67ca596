"""The tables of a document: those extraction found in its structure, or pipe tables in plain text.

Spreadsheets, CSV, Word, PowerPoint, HTML and PDF tables come from the extractors as cells
(`DocumentText.tables`); only plain text and Markdown are searched for tables here, and only
for unambiguous layouts (pipe tables, tab-separated blocks), so prose never becomes a table.
The layout rules below (CSV lines, aligned columns) remain for text an agent is handed directly.
"""

from __future__ import annotations

import csv
import re
from collections.abc import Callable
from itertools import islice
from typing import TYPE_CHECKING, cast

from extractors.tables import Cell, Table, text_of

if TYPE_CHECKING:
    from agents.base import DocumentText

# Documents whose extraction is plain text: the only ones searched for tables in their text.
_TEXT_EXTS = {"txt", "text", "md", "markdown"}


_MD_SEPARATOR = re.compile(r"^\s*\|?\s*:?-{3,}:?\s*(?:\|\s*:?-{3,}:?\s*)*\|?\s*$")
_PIPE_SPLIT = re.compile(r"(?<!\\)\|")
_NUMBER = re.compile(r"^[-+(]?[$€£¥]?\s?\d[\d,.' \u00a0]*%?\)?$")


def _pipe_cells(line: str) -> list[str]:
    body = line.strip()
    if body.startswith("|"):
        body = body[1:]
    if body.endswith("|") and not body.endswith("\\|"):
        body = body[:-1]
    return [cell.strip().replace("\\|", "|") for cell in _PIPE_SPLIT.split(body)]


# Each detector returns (rows, end): rows is None when no table starts at line i, and end is
# then the first line a retry could make a difference at, so long non-table runs are scanned
# once instead of once per line.
Found = tuple[list[list[str]] | None, int]


def pipe_table(lines: list[str], i: int) -> tuple[list[list[str]], int] | None:
    """The cells of a Markdown pipe table starting at line i (header, separator, rows) and the
    line after it; None when no table starts there."""
    if i + 1 >= len(lines) or "|" not in lines[i] or "|" not in lines[i + 1]:
        return None
    if not _MD_SEPARATOR.match(lines[i + 1]):
        return None
    rows = [_pipe_cells(lines[i])]
    j = i + 2
    while j < len(lines) and "|" in lines[j] and lines[j].strip():
        rows.append(_pipe_cells(lines[j]))
        j += 1
    return rows, j


def _markdown(lines: list[str], i: int) -> Found:
    """A pipe table starting at line i, made rectangular."""
    found = pipe_table(lines, i)
    if found is None:
        return None, i + 1
    rows, j = found
    return _rectangular(rows), j


def _tsv(lines: list[str], i: int) -> Found:
    """Consecutive tab-separated lines (at least two) with the same number of fields."""
    width = lines[i].count("\t")
    j = i
    while j < len(lines) and width and lines[j].count("\t") == width:
        j += 1
    # Some PDF text layers use tabs as word spaces; their lines have ragged field counts. A
    # table may follow a title line, but must run to the end of the tab-separated lines.
    if j - i < 2 or (j < len(lines) and "\t" in lines[j]):
        return None, i + 1
    rows = _rectangular([[cell.strip() for cell in line.split("\t")] for line in lines[i:j]])
    return (rows if _plausible(rows) else None), j


def _csv_fields(line: str, delimiter: str) -> list[str] | None:
    try:
        rows = list(csv.reader([line], delimiter=delimiter))
    except csv.Error:
        return None
    return rows[0] if len(rows) == 1 else None


def _csv(lines: list[str], i: int, whole: bool, delimiter: str) -> Found:
    """Consecutive delimited lines with the same field count; short cells unless whole."""
    first = _csv_fields(lines[i], delimiter)
    if not first or len(first) < 2:
        return None, i + 1
    rows, j = [first], i + 1
    while j < len(lines) and lines[j].strip():
        fields = _csv_fields(lines[j], delimiter)
        if fields is None or len(fields) != len(first):
            break
        rows.append(fields)
        j += 1
    # Two comma-separated lines in prose are common; embedded CSV needs three rows.
    if len(rows) < (2 if whole else 3) or not _data_like(rows, whole, delimiter):
        return None, j
    rows = [[cell.strip() for cell in row] for row in rows]
    return (rows if _plausible(rows) else None), j


def _data_like(rows: list[list[str]], whole: bool, delimiter: str) -> bool:
    """Whether delimited rows hold data rather than prose that happens to contain the delimiter."""
    cells = [cell for row in rows for cell in row if cell.strip()]
    if not cells:
        return False
    # Prose puts a space after each comma and wraps at a constant comma count now and then;
    # data cells are short and usually unspaced. A whole item that parses is trusted more.
    spaced = sum(1 for row in rows for cell in row[1:] if cell[:1].isspace())
    wordy = sum(len(cell.split()) for cell in cells) / len(cells)
    if spaced * 2 > len(rows) * (len(rows[0]) - 1) and (
        not whole or wordy > 3 or len(rows) < 3 or delimiter == ";"
    ):
        return False
    return whole or (sum(map(len, cells)) / len(cells) <= 30 and max(map(len, cells)) <= 120)


def _aligned(lines: list[str], i: int) -> Found:
    """At least three lines that split on wide gaps into the same columns of short cells."""
    rows: list[list[str]] = []
    starts: list[list[int]] = []
    j = i
    while j < len(lines) and lines[j].strip():
        line = lines[j].rstrip()
        cells = re.split(r"\s{2,}|\t", line.strip())
        if len(cells) < 2 or (rows and len(cells) != len(rows[0])):
            break
        rows.append(cells)
        starts.append([m.start() for m in re.finditer(r"(?:^|(?<=\s\s)|(?<=\t))\S", line)])
        j += 1
    if len(rows) < 3:
        return None, i + 1  # a shorter run may start a table one line further on
    cells = [cell for row in rows for cell in row]
    if sum(map(len, cells)) / len(cells) > 20 or max(map(len, cells)) > 40:
        return None, j  # prose columns of a multi-column page have long cells
    columns = list(zip(*rows[1:]))
    numeric = any(sum(1 for c in col if _NUMBER.match(c)) >= 0.6 * len(col) for col in columns)
    aligned = len(rows[0]) >= 3 and all(
        max(col) - min(col) <= 3 for col in zip(*starts) if len(col) == len(starts)
    )
    # Justified prose has double spaces too; a number column or exact alignment tells a table.
    if not (numeric or aligned):
        return None, j
    return (rows if _plausible(rows) else None), j


def _plausible(rows: list[list[str]]) -> bool:
    """At least two columns, a row with two filled cells, and cells that contain words or numbers."""
    if len(rows[0]) < 2 or not any(sum(1 for c in row if c) >= 2 for row in rows):
        return False
    filled = [cell for row in rows for cell in row if cell]
    # Glyph soup from PDFs with broken font maps is mostly punctuation.
    readable = [c for c in filled if sum(ch.isalnum() or ch.isspace() for ch in c) >= 0.6 * len(c)]
    return len(readable) >= 0.8 * len(filled)


def _rectangular(rows: list[list[str]]) -> list[list[str]]:
    """Pad short rows and drop trailing columns that are empty everywhere."""
    width = max(map(len, rows))
    rows = [row + [""] * (width - len(row)) for row in rows]
    while width > 1 and all(not row[width - 1] for row in rows):
        width -= 1
    return [row[:width] for row in rows]


def _whole_csv(text: str) -> list[list[str]] | None:
    """The whole text as one CSV table, quoted multi-line cells included, if it parses as one."""
    if "\t" in text or re.match(r"\s*\|", text):
        return None
    # Semicolons are what Excel writes where the decimal separator is a comma (de, fr).
    for delimiter in (",", ";"):
        if delimiter not in text:
            continue
        try:
            reader = csv.reader(text.splitlines(keepends=True), delimiter=delimiter)
            rows = [row for row in reader if row]
        except csv.Error:
            continue
        if len(rows) >= 2 and len(rows[0]) >= 2 and len({len(row) for row in rows}) == 1:
            rows = [[cell.replace("\r", "") for cell in row] for row in rows]
            if _data_like(rows, True, delimiter):
                rows = [[cell.strip() for cell in row] for row in rows]
                return rows if _plausible(rows) else None
    return None


def _parse(text: str, layout: bool = True) -> list[tuple[list[list[str]], int, int]]:
    """(rows, first line, end line) of each table in the text; CSV lines and aligned columns
    only with `layout`."""
    lines = text.splitlines()
    entire = _whole_csv(text) if layout else None
    if entire:
        return [(entire, 0, len(lines))]
    content = [n for n, line in enumerate(lines) if line.strip()]
    first = content[0] if content else 0
    detectors: tuple[Callable[[int], Found], ...] = (
        lambda i: _markdown(lines, i),
        lambda i: _tsv(lines, i),
        lambda i: _csv(lines, i, i == first, ","),
        lambda i: _csv(lines, i, i == first, ";"),
        lambda i: _aligned(lines, i),
    )[: 5 if layout else 2]
    retry = [0] * len(detectors)  # per detector: the first line worth trying again
    found: list[tuple[list[list[str]], int, int]] = []
    i = 0
    while i < len(lines):
        hit: tuple[list[list[str]], int] | None = None
        if lines[i].strip():
            for d, detect in enumerate(detectors):
                if i < retry[d]:
                    continue
                rows, end = detect(i)
                if rows:
                    hit = rows, end
                    break
                retry[d] = end
        if hit:
            found.append((hit[0], i, hit[1]))
            i = hit[1]
        else:
            i += 1
    return found


def tables_from_text(name: str, text: str, layout: bool = True) -> list[Table]:
    """Tables found in one text, named `name` when the text is one table, else "name table N"."""
    found = _parse(text, layout)
    lines = text.splitlines()
    content = [n for n, line in enumerate(lines) if line.strip()]
    if len(found) == 1 and found[0][1] <= content[0] and found[0][2] > content[-1]:
        return [Table(name, cast("list[list[Cell]]", found[0][0]), source=name)]
    return [Table(f"{name} table {n}", cast("list[list[Cell]]", rows), source=name)
            for n, (rows, _, _) in enumerate(found, 1)]


def find_tables(items: list[tuple[str, str]], layout: bool = True) -> list[Table]:
    """All tables in a document's (item name, text) items, in document order."""
    tables: list[Table] = []
    for name, text in items:
        tables.extend(tables_from_text(name, text, layout))
    return tables


def document_tables(doc: DocumentText) -> list[Table]:
    """The document's tables: from its structure, or pipe/tab tables when it is plain text."""
    if doc.tables:
        return list(doc.tables)
    if doc.ext.lower() in _TEXT_EXTS or doc.mime.startswith(("text/plain", "text/markdown")):
        return find_tables(doc.items, layout=False)
    return []


def markdown_table(table: Table, limit: int) -> list[str]:
    """The header row (or first row) and the rows after it, as a Markdown table; rows and columns
    left empty for layout (a spacer column, a blank line under the headings) are not shown."""
    start = table.header_row or 0

    def cell(value: Cell) -> str:
        return " ".join(text_of(value).split()).replace("|", "\\|")[:40]

    rows = list(islice((cells for cells in ([cell(c) for c in r] for r in table.rows[start:]) if any(cells)), limit))
    cols = [i for i in range(table.width) if any(i < len(r) and r[i] for r in rows)]
    if not rows or not cols:
        return []
    padded = [[r[i] if i < len(r) else "" for i in cols] for r in rows]
    out = ["| " + " | ".join(padded[0]) + " |", "|" + " --- |" * len(cols)]
    out += ["| " + " | ".join(r) + " |" for r in padded[1:]]
    return out
