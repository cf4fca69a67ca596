"""Tables as extraction finds them in a document's structure: typed cells, a header row, a source.

A spreadsheet's cells, a CSV's rows and the table cells of Word, PowerPoint, HTML and PDF pages
are kept here as cells, so no agent ever re-splits flattened text to find them again. A table
travels with its content item in `metadata["tables"]` (JSON: dates as {"date": "<ISO>"}).
"""

from __future__ import annotations

import datetime as dt
import functools
import math
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from extractors.language import by_words

Cell = str | int | float | bool | dt.datetime | dt.date | dt.time | None

_NUMERIC = re.compile(r"^[-+]?(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?(?:[eE][-+]?\d+)?$")
_EUROPEAN = re.compile(
    r"^(?:\d{1,3}(?:\.\d{3})+|\d{1,3}(?:[ \u00a0\u202f]\d{3})+|\d+),\d+$|^\d{1,3}(?:\.\d{3}){2,}$"
    r"|^\d{1,3}(?:[ \u00a0\u202f]\d{3})+$"  # "12 480": thousands set apart by spaces, as French writes them
)


@dataclass
class Table:
    """One table: rows of typed cells, which row is the header, and where it came from."""

    name: str  # "sheet Revenue", "page 3 table 1", "slide 2 table 1", "table 1"
    rows: list[list[Cell]]
    header_row: int | None = 0  # index of the header row in `rows`, None when there is none
    source: str = field(default="", compare=False)  # the item it came from: "sheet Revenue", "page 3"
    meta: dict[str, Any] = field(default_factory=dict, compare=False)  # e.g. {"finder": "pdfplumber"}

    @property
    def width(self) -> int:
        return max((len(row) for row in self.rows), default=0)

    def cell_count(self) -> int:
        """Filled cells."""
        return sum(1 for row in self.rows for cell in row if not _blank(cell))


# Languages that write "1.234,5": there a dot before groups of three digits separates thousands, and a
# German report's "72.300" (€) is 72300, not 72.3 (`number(..., decimal_comma=True)`).
DECIMAL_COMMA = frozenset({"de", "fr", "es", "it", "nl", "pt", "da", "no", "nb", "sv", "fi", "pl", "cs", "sk", "tr",
                           "ru", "uk", "hu", "ro", "hr", "sl", "id"})
_DOT_GROUPS = re.compile(r"[-+]?\d{1,3}(?:\.\d{3})+")
_COMMA_THREE = re.compile(r"[-+]?\d+,\d{3}")  # "12,345": 12.345 where the comma marks decimals
# Cells only one reading fits: "1.234,5" and "4,25" write comma decimals, "1,234.5" and "4.25" dot decimals
# ("72.300" and "12,345" fit both).
_COMMA_DECIMAL = re.compile(r"[-+]?(?:\d{1,3}(?:\.\d{3})+,\d+|\d+,(?:\d{1,2}|\d{4,}))")
_DOT_DECIMAL = re.compile(r"[-+]?(?:\d{1,3}(?:,\d{3})+\.\d+|\d+\.(?:\d{1,2}|\d{4,}))")


def number(text: str, decimal_comma: bool = False) -> int | float | None:
    """The text as a number when it plainly is one ("1", "-2.5", "1,234.50", "1.234,50"), else None. With
    `decimal_comma` (a document in such a language) "72.300" is seventy-two thousand three hundred and
    "12,345" twelve point three four five."""
    text = text.strip()
    if decimal_comma and _DOT_GROUPS.fullmatch(text):
        return int(text.replace(".", ""))
    if decimal_comma and _COMMA_THREE.fullmatch(text):
        return float(text.replace(",", "."))
    sign = text[:1] if text[:1] in "+-" else ""
    digits = text[len(sign):]
    # Leading zeros are identifiers (postcodes, article numbers): keep them as text.
    if len(digits) > 1 and digits[0] == "0" and digits[1] not in ".,":
        return None
    if _NUMERIC.match(text):
        plain = text.replace(",", "")
    elif _EUROPEAN.match(digits):
        # "1.234,50", "4,2", "1 234,5": comma decimals as German and French documents write them.
        # "12,345" stays with the English reading above: a thousands group, not a decimal.
        plain = sign + re.sub(r"[.\s\u00a0\u202f]", "", digits).replace(",", ".")
    else:
        return None
    if re.fullmatch(r"[-+]?\d+", plain):
        whole = int(plain)
        return whole if abs(whole) < 10**15 else None  # Excel keeps 15 significant digits
    number = float(plain)
    return number if math.isfinite(number) else None


_CURRENCIES = {"€": "€", "eur": "€", "euro": "€", "euros": "€", "$": "$", "usd": "$", "£": "£", "gbp": "£",
               "chf": "CHF", "fr.": "CHF", "¥": "¥"}
_MONEY = re.compile(r"^(?:(?P<pre>[€$£¥]|eur|usd|gbp|chf|fr\.)\s*(?P<a>[-+]?\d[\d.,'’ \u00a0\u202f]*)"
                    r"|(?P<b>[-+]?\d[\d.,'’ \u00a0\u202f]*?)\s*(?P<post>[€$£¥]|eur|euros?|usd|gbp|chf))$",
                    re.IGNORECASE)


def money(text: str) -> tuple[int | float, str, int] | None:
    """An amount written with its currency ("1 280,00 €", "€1,280.00", "CHF 1'280.50") as (number,
    currency symbol, decimals written), else None: a workbook keeps it a number with a currency format."""
    match = _MONEY.match(text.strip())
    if not match:
        return None
    amount = (match.group("a") or match.group("b") or "").strip().replace("'", "").replace("’", "")
    value = number(amount)
    if value is None:
        return None
    decimals = len(amount) - max(amount.rfind(","), amount.rfind(".")) - 1 if re.search(r"[.,]\d{1,2}$", amount) else 0
    return value, _CURRENCIES[(match.group("pre") or match.group("post") or "").casefold()], decimals


def typed(text: str, decimal_comma: bool = False) -> Cell:
    """A text cell (CSV, Word, HTML, PDF) as a number when it plainly is one; empty text is None."""
    text = " ".join(str(text).split())
    if not text:
        return None
    value = number(text, decimal_comma)
    return text if value is None else value


Comma = Callable[[], bool]  # whether a document's language writes "1.234,5", asked only when needed


def never() -> bool:
    return False


def comma_language(text: str) -> Comma:
    """Whether the text is in a language that writes "1.234,5" (`DECIMAL_COMMA`), read at most once and only
    when a table's cells leave it open (`writes_decimal_comma`): reading a language takes ~45 ms per 20,000
    characters, which a document without tables, or whose cells decide, need not pay."""
    return functools.cache(lambda: by_words(text) in DECIMAL_COMMA)


def writes_decimal_comma(rows: Sequence[Sequence[str | None]], comma: Comma = never) -> bool:
    """Whether a table's cells write "1.234,5": the cells say so where only one reading fits more of them
    ("4,25" against "4.25"); where they show neither, `comma`, what the document's language writes."""
    cells = [cell.strip() for row in rows for cell in row if cell]
    commas = sum(1 for cell in cells if _COMMA_DECIMAL.fullmatch(cell))
    dots = sum(1 for cell in cells if _DOT_DECIMAL.fullmatch(cell))
    return commas > dots if commas != dots else comma()


def text_table(name: str, rows: Sequence[Sequence[str | None]], source: str, comma: Comma = never,
               **meta: Any) -> Table | None:
    """`make_table` over cells read as text (CSV, Word, HTML, PDF, slides): each typed (`typed`), its
    numbers read the way the table writes them (`writes_decimal_comma`)."""
    decimal_comma = writes_decimal_comma(rows, comma)
    return make_table(name, [[typed(cell or "", decimal_comma) for cell in row] for row in rows], source, **meta)


def text_tables(grids: Sequence[Sequence[Sequence[str | None]]], prefix: str, source: str, comma: Comma = never,
                **meta: Any) -> list[Table]:
    """The grids that are tables (`text_table`), named "<prefix>table 1", "<prefix>table 2", ... in order."""
    tables: list[Table] = []
    for grid in grids:
        table = text_table(f"{prefix}table {len(tables) + 1}", grid, source, comma, **meta)
        if table is not None:
            tables.append(table)
    return tables


def _blank(cell: Cell) -> bool:
    return cell is None or (isinstance(cell, str) and not cell.strip())


def trim(rows: list[list[Cell]]) -> list[list[Cell]]:
    """Without empty rows at the top and bottom, empty columns at the left and trailing empty cells."""
    rows = [list(row) for row in rows]
    for row in rows:
        while row and _blank(row[-1]):
            row.pop()
    while rows and not rows[-1]:
        rows.pop()
    while rows and not rows[0]:
        rows.pop(0)
    filled = [row for row in rows if row]
    if not filled:
        return []
    left = min(next(i for i, cell in enumerate(row) if not _blank(cell)) for row in filled)
    return [row[left:] for row in rows]


def header_index(rows: list[list[Cell]]) -> int | None:
    """The header row: the first row whose cells are all text and fill the table's columns.

    Title lines above it (one filled cell in a wide table) are not the header; a table whose
    first full row holds numbers has none.
    """
    width = max((len(row) for row in rows), default=0)
    for index, row in enumerate(rows[:10]):
        filled = [cell for cell in row if not _blank(cell)]
        if not filled:
            continue
        if len(filled) < 2 and width >= 2:
            continue  # a title or a note above the table
        if all(isinstance(cell, str) for cell in filled) and index + 1 < len(rows):
            return index
        return None
    return None


def make_table(name: str, rows: list[list[Cell]], source: str, **meta: Any) -> Table | None:
    """A table from raw rows (trimmed, header found), or None when fewer than 2 rows and 2 columns hold data."""
    rows = trim(rows)
    filled_rows = [row for row in rows if sum(1 for cell in row if not _blank(cell)) >= 1]
    if len(filled_rows) < 2 or max((len(row) for row in rows), default=0) < 2:
        return None
    if not any(sum(1 for cell in row if not _blank(cell)) >= 2 for row in rows):
        return None  # one filled cell a row is a layout frame around text, not a table
    return Table(name=name, rows=rows, header_row=header_index(rows), source=source, meta=dict(meta))


def _cell_to_wire(cell: Cell) -> Any:
    if isinstance(cell, dt.datetime):
        return {"datetime": cell.isoformat()}
    if isinstance(cell, dt.date):
        return {"date": cell.isoformat()}
    if isinstance(cell, dt.time):
        return {"time": cell.isoformat()}
    if isinstance(cell, float) and not math.isfinite(cell):
        return str(cell)
    return cell


def _cell_from_wire(value: Any) -> Cell:
    if isinstance(value, dict):
        if "datetime" in value:
            return dt.datetime.fromisoformat(value["datetime"])
        if "date" in value:
            return dt.date.fromisoformat(value["date"])
        if "time" in value:
            return dt.time.fromisoformat(value["time"])
        return str(value)
    cell: Cell = value  # JSON's own scalars: a string, a number, a boolean or null
    return cell


def table_to_wire(table: Table) -> dict[str, Any]:
    """The table as JSON-ready data (camelCase keys like the rest of an item's metadata)."""
    return {"name": table.name, "source": table.source, "headerRow": table.header_row,
            "rows": [[_cell_to_wire(c) for c in row] for row in table.rows], **table.meta}


def table_from_wire(data: dict[str, Any]) -> Table:
    """A table from `table_to_wire`'s data."""
    meta = {k: v for k, v in data.items() if k not in {"name", "source", "headerRow", "rows"}}
    return Table(name=str(data.get("name", "")), source=str(data.get("source", "")),
                 header_row=data.get("headerRow"),
                 rows=[[_cell_from_wire(c) for c in row] for row in data.get("rows", [])], meta=meta)


def text_of(cell: Cell) -> str:
    """A cell as text: what a person reads in the table (dates in ISO, whole floats without .0)."""
    if cell is None:
        return ""
    if isinstance(cell, bool):
        return "TRUE" if cell else "FALSE"
    if isinstance(cell, float) and cell.is_integer() and abs(cell) < 1e15:
        return str(int(cell))
    if isinstance(cell, dt.datetime) and cell.time() == dt.time(0):
        return cell.date().isoformat()
    if isinstance(cell, (dt.date, dt.time)):
        return cell.isoformat()
    return str(cell)


def attach(metadata: dict[str, Any], tables: list[Table]) -> dict[str, Any]:
    """`metadata` with the item's tables under "tables" (only when there are any)."""
    if tables:
        metadata["tables"] = [table_to_wire(t) for t in tables]
    return metadata
