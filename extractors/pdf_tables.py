"""Tables on PDF pages: pdfplumber's ruled-table finder, and rule-bounded tables without verticals.

Only pages with at least two horizontal rules (path objects at least a quarter of the page wide,
under 3 points high) are searched: pdfium finds those in milliseconds, while pdfplumber's layout
analysis costs about 0.1 s a page (a 352-page book has one such page instead of 352).

Three kinds of tables are found:
- ruled grids, by pdfplumber's `find_tables` (lines strategy);
- grids without outer borders (stacked rules, vertical rules between columns only), by the same
  finder with the rules' ends given as the outer columns;
- tables between horizontal rules only (LaTeX booktabs, many reports): the words between the
  outer rules are grouped into lines, and columns are the gaps that no line's words cross.

Pages without rules whose text lines up figures in rows (`aligned_pages`: three lines or more
with two figures each) are searched too, for tables set without any rule (issue 50: government
statistics, expenditure reports, price lists were not found): their lines and the gaps between
columns, as for the booktabs tables (`_aligned_grids`).

Chosen by measurement on the corpus PDFs with tables: pdfplumber's lines strategy alone found
none of multicolumn.pdf page 3 and korean-text-with-tables.pdf, and its text strategy split
"Population" into "Populati" + "on"; PyMuPDF's `find_tables` found both but split "8.9" into
"89" + "." and is AGPL. With the two additions above, every table of those two files comes out
cell for cell (tests/agents/test_table_fidelity.py), and freeculture.pdf gives only its three
real grids on page 183.
Candidates that read like prose (long cells, half-empty grids, one row) are dropped.
"""

from __future__ import annotations

import io
import logging
import re
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import pypdfium2

from extractors.tables import Comma, Table, never, text_tables

Rows = list[list[str | None]]  # a grid's cells as the page writes them

if TYPE_CHECKING:
    from pdfplumber.page import CroppedPage, Page

log = logging.getLogger(__name__)

MAX_PAGES = 60  # pages searched per document; the rest keep their text
_COLUMN_GAP = 6.0  # points of white space that separate two columns (a word space is ~2.5)


def rule_pages(document: pypdfium2.PdfDocument) -> list[int]:
    """1-based numbers of the pages holding at least two horizontal rules."""
    pages = []
    for index in range(len(document)):
        page = document[index]
        try:
            width = page.get_width()
            rules = 0
            for obj in page.get_objects(filter=[pypdfium2.raw.FPDF_PAGEOBJ_PATH], max_depth=2):
                left, bottom, right, top = obj.get_bounds()
                if right - left > 0.25 * width and top - bottom < 3:
                    rules += 1
            if rules >= 2:
                pages.append(index + 1)
        finally:
            page.close()
    return pages


_FIGURE_TOKEN = re.compile(r"^[(+\-−]?[$€£¥]?\d[\d.,'’\u202f\u00a0]*%?\)?$")
ALIGNED_LINES = 3  # consecutive lines with two figures or more each: rows of a table without rules


LONE_FIGURES = 6  # lines that are one figure alone: cells a PDF writes one text object each


def aligned_pages(texts: dict[int, str]) -> list[int]:
    """1-based numbers of the pages that may hold a table set without rules (statistics, price lists,
    expenditure tables): `ALIGNED_LINES` consecutive lines holding two figures or more each (rows
    the text keeps whole), or `LONE_FIGURES` lines that are a figure alone (cells written one by
    one). Prose with a number here and there has neither; the words' positions decide after."""
    pages = []
    for number, text in texts.items():
        run = lone = 0
        for line in text.splitlines():
            words = _grouped(line.split())
            run = run + 1 if _row_of_figures(words) else 0
            lone += len(words) == 1 and bool(_FIGURE_TOKEN.match(words[0])) and not _SMALL_WHOLE.match(words[0])
            if run >= ALIGNED_LINES or lone >= LONE_FIGURES:
                pages.append(number)
                break
    return pages


_SMALL_WHOLE = re.compile(r"^\d{1,3}$")


def _row_of_figures(words: list[str]) -> bool:
    """A line of words that reads as a table row: two figures or more, a third of its words at least
    ("Wheat t 212.50 198.00", not a sentence naming 2025 and 14), one of them a measure (a decimal,
    an amount, a share, a number of four digits or more): a contents line or a book's margin line
    numbers ("1 CHAPTER SIX: Founders 85") hold only small whole numbers. A table of small whole
    numbers alone, without rules, is not found."""
    figures = [w for w in _grouped(words) if _FIGURE_TOKEN.match(w)]
    return len(figures) >= 2 and 3 * len(figures) >= len(words) and \
        any(not _SMALL_WHOLE.match(f) for f in figures)


def _grouped(words: list[str]) -> list[str]:
    """The words with thousands written apart joined ("Janvier 4 120 38 6" -> "Janvier", "4120", "38",
    "6"): French, Swiss and ISO style separate digit groups by a space, which the page's text keeps as a
    plain one, and each group alone reads as a small whole number. A run of one to three digits followed by
    groups of exactly three is one figure; the words' positions decide the cells after."""
    joined: list[str] = []
    open_figure = False  # the last word is a figure's first group, or groups joined so far, without decimals
    for word in words:
        if open_figure and _GROUP.match(word):
            joined[-1] += word
            open_figure = len(word) == 3  # its decimals end the figure
        else:
            joined.append(word)
            open_figure = bool(_LEADING.match(word))
    return joined


_GROUP = re.compile(r"^\d{3}(?:[.,]\d+)?$")  # a group of three digits, the last one with its decimals
_LEADING = re.compile(r"^[(+\-−]?[$€£¥]?\d{1,3}$")  # a figure's first group


def find_pdf_tables(data: bytes, pages: list[int], password: str | None = None,
                    aligned: Sequence[int] = (), comma: Comma = never) -> dict[int, list[Table]]:
    """Tables by page number for the given pages (ruled) and the `aligned` ones (rows lined up
    without rules, searched only when no rule is on the page); a page pdfplumber cannot read gives none.
    Their numbers are read the way they are written, or else as the document's language does (`comma`)."""
    unruled = [n for n in aligned if n not in pages]
    if not pages and not unruled:
        return {}
    import pdfplumber  # imported here: only documents with ruled pages pay for it

    found: dict[int, list[Table]] = {}
    try:
        with pdfplumber.open(io.BytesIO(data), password=password or "") as pdf:
            for number in sorted([*pages, *unruled])[:MAX_PAGES]:
                try:
                    page = pdf.pages[number - 1]
                    grids, finder = (_page_grids(page), "pdfplumber") if number in pages \
                        else (_aligned_grids(page), "pdfplumber-aligned")
                    tables = text_tables(grids, f"page {number} ", f"page {number}", comma, page=number,
                                         finder=finder)
                except Exception:  # noqa: BLE001 - pdfminer raises many kinds on odd pages
                    log.debug("table finding failed on page %d", number, exc_info=True)
                    continue
                if tables:
                    found[number] = tables
    except Exception:  # noqa: BLE001 - a PDF pdfminer cannot open keeps its text, without tables
        log.debug("pdfplumber could not open the PDF", exc_info=True)
    return found


def _page_grids(page: Page) -> list[Rows]:
    grids: list[tuple[tuple[float, float, float, float], Rows]] = []
    findings = page.find_tables()
    for finding in findings:
        rows = _texts(finding.extract())
        if _table_like(rows):
            grids.append((finding.bbox, rows))
    if not findings:  # ruled grids rejected as prose do not fall back to the rules alone
        for bbox, columns in _open_grids(page):
            region = page.crop(bbox, strict=False)
            for finding in region.find_tables({"vertical_strategy": "explicit", "explicit_vertical_lines": columns,
                                               "horizontal_strategy": "lines"}):
                rows = _texts(finding.extract())
                if _table_like(rows):
                    grids.append((finding.bbox, rows))
    if not findings and not grids:
        box = _ruled_region(page)
        if box is not None:
            rows = _columns(page.crop(box, strict=False))
            if _table_like(rows):
                grids.append((box, rows))
    return [rows for _, rows in grids]


def _aligned_grids(page: Page) -> list[Rows]:
    """Tables without rules: each block of lines with two figures or more (and the heading line
    above it), its columns the gaps no line's words cross (`_columns`)."""
    lines: list[list[dict[str, Any]]] = []
    for word in sorted(page.extract_words(keep_blank_chars=False, use_text_flow=False),
                       key=lambda w: (round(w["top"]), w["x0"])):
        if lines and abs(lines[-1][0]["top"] - word["top"]) < 3:
            lines[-1].append(word)
        else:
            lines.append([word])
    numeric = [_row_of_figures([w["text"] for w in line]) for line in lines]
    blocks: list[tuple[int, int]] = []
    for i, is_row in enumerate(numeric):
        if is_row and blocks and blocks[-1][1] == i - 1:
            blocks[-1] = (blocks[-1][0], i)
        elif is_row:
            blocks.append((i, i))
    grids: list[Rows] = []
    for first, last in blocks:
        if last - first + 1 < ALIGNED_LINES:
            continue
        start = first - 1 if first > 0 and len(lines[first - 1]) >= 2 else first  # the heading line
        top = min(w["top"] for w in lines[start]) - 1
        bottom = max(w["bottom"] for w in lines[last]) + 1
        rows = _columns(page.crop((0, top, float(page.width), bottom), strict=False))
        if _table_like(rows):
            grids.append(rows)
    return grids


def _open_grids(page: Page | CroppedPage) -> list[tuple[tuple[float, float, float, float], list[float]]]:
    """Grids drawn without outer borders: stacked horizontal rules over the same columns, with
    vertical rules between some columns. Returns (box, column edges) for each."""
    horizontals = [l for l in page.lines if abs(l["top"] - l["bottom"]) < 3 and l["x1"] - l["x0"] > 20]
    verticals = [l for l in page.lines if abs(l["x0"] - l["x1"]) < 3]
    groups: list[dict[str, Any]] = []
    for line in sorted(horizontals, key=lambda l: l["x0"]):
        for group in groups:  # rules overlapping in x belong to one table (tables may sit side by side)
            if line["x0"] <= group["x1"] + 2 and line["x1"] >= group["x0"] - 2:
                group["x0"], group["x1"] = min(group["x0"], line["x0"]), max(group["x1"], line["x1"])
                group["lines"].append(line)
                break
        else:
            groups.append({"x0": line["x0"], "x1": line["x1"], "lines": [line]})
    found = []
    for group in groups:
        runs: list[list[dict[str, Any]]] = []
        for line in sorted(group["lines"], key=lambda l: l["top"]):
            if runs and line["top"] - runs[-1][-1]["top"] <= 120:
                runs[-1].append(line)
            else:
                runs.append([line])
        for run in runs:
            if len(run) < 3:
                continue
            top, bottom = run[0]["top"], run[-1]["bottom"]
            x0, x1 = min(l["x0"] for l in run), max(l["x1"] for l in run)
            inner = sorted({round(v["x0"], 1) for v in verticals
                            if x0 + 2 < v["x0"] < x1 - 2 and v["top"] >= top - 2 and v["bottom"] <= bottom + 2})
            if inner:
                found.append(((x0 - 1, top - 1, x1 + 1, bottom + 1), [x0, *inner, x1]))
    return found


def _ruled_region(page: Page) -> tuple[float, float, float, float] | None:
    """The box from the first to the last of at least two long horizontal rules of equal extent."""
    width = float(page.width)
    rules = [line for line in page.lines if line["x1"] - line["x0"] > 0.25 * width and abs(line["top"] - line["bottom"]) < 3]
    if len(rules) < 2:
        return None
    first = rules[0]
    same = [r for r in rules if abs(r["x0"] - first["x0"]) < 5 and abs(r["x1"] - first["x1"]) < 5]
    if len(same) < 2:
        return None
    top = min(r["top"] for r in same)
    bottom = max(r["bottom"] for r in same)
    if bottom - top < 20:
        return None
    return (first["x0"] - 2, top - 1, first["x1"] + 2, bottom + 1)


def _columns(region: CroppedPage) -> Rows:
    """The region's words as rows (by line) and columns (gaps no line's words cross)."""
    words = region.extract_words(keep_blank_chars=False, use_text_flow=False)
    if not words:
        return []
    lines: list[list[dict[str, Any]]] = []
    for word in sorted(words, key=lambda w: (round(w["top"]), w["x0"])):
        if lines and abs(lines[-1][0]["top"] - word["top"]) < 3:
            lines[-1].append(word)
        else:
            lines.append([word])
    # Runs of words closer than a column gap are one cell's text.
    runs_by_line = []
    for line in lines:
        line.sort(key=lambda w: w["x0"])
        runs: list[list[dict[str, Any]]] = [[line[0]]]
        for word in line[1:]:
            if word["x0"] - runs[-1][-1]["x1"] < _COLUMN_GAP:
                runs[-1].append(word)
            else:
                runs.append([word])
        runs_by_line.append(runs)
    # A caption set on the top rule is one run above the table's rows: not part of the grid.
    while runs_by_line and len(runs_by_line[0]) == 1:
        runs_by_line.pop(0)
    # Column boundaries: x-positions covered by no run of any line with several cells.
    spans = sorted((run[0]["x0"], run[-1]["x1"]) for runs in runs_by_line if len(runs) > 1 for run in runs)
    columns: list[list[float]] = []
    for x0, x1 in spans:
        if columns and x0 <= columns[-1][1] + 1:
            columns[-1][1] = max(columns[-1][1], x1)
        else:
            columns.append([x0, x1])
    rows: Rows = []
    for runs in runs_by_line:
        row: list[str | None] = [None] * len(columns)
        for run in runs:
            index = next((i for i, (x0, x1) in enumerate(columns) if run[0]["x0"] <= x1), len(columns) - 1)
            text = " ".join(w["text"] for w in run)
            row[index] = f"{row[index]} {text}" if row[index] is not None else text
        rows.append(row)
    return rows


def _texts(found: list[list[str | None]]) -> Rows:
    """pdfplumber's cells with their white space as one space each."""
    return [[" ".join((cell or "").split()) for cell in row] for row in found]


def _table_like(rows: Rows) -> bool:
    """At least two rows and two columns of short cells, mostly filled, not prose or glyph soup."""
    if len(rows) < 2 or max((len(r) for r in rows), default=0) < 2:
        return False
    cells = [c for row in rows for c in row]
    filled = [str(c) for c in cells if c not in (None, "")]
    if len(filled) < 4 or len(filled) < 0.6 * len(cells):  # diagrams drawn in boxes are sparse
        return False
    if max(map(len, filled)) > 150 or sum(map(len, filled)) / len(filled) > 40:
        return False
    # Glyph soup from broken font maps is mostly punctuation; a lone symbol ("©", "-") is a value.
    readable = [c for c in filled if len(c) <= 2 or sum(ch.isalnum() or ch.isspace() for ch in c) >= 0.6 * len(c)]
    if len(readable) < 0.8 * len(filled):
        return False
    # A listing laid out in columns (code and its comments) or sentences side by side are not a table.
    words = [c for c in filled if not _FIGURE.match(c)]
    if words and sum(1 for c in words if _CODE.search(c)) >= 0.5 * len(words):
        return False
    return not (words and sum(1 for c in words if _SENTENCE.match(c)) >= 0.5 * len(words))


# Comment markers, calls, assignments, statement ends, member access: what code looks like.
_CODE = re.compile(r"//|/\*|\*/|^\s*#\s*\w|[{};]\s*$|\b[A-Za-z_]\w*\([^()]*\)|\b\w+\s*[+\-*/]?=\s*\S|->|::|\b\w+\.\w+\(")
_SENTENCE = re.compile(r"^[A-ZÀ-Ý\"“(].{30,}[.!?:)\"”]$")  # a sentence: capitalised, long, closed
_FIGURE = re.compile(r"^[\d.,%()\-+\s$€£]*$")
