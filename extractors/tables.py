"""Tables as extraction finds them in a document's structure: typed cells, a header row, a source.

A spreadsheet's cells, a CSV's rows and the table cells of Word, PowerPoint, HTML and PDF pages
are kept here as cells, so no agent ever re-splits flattened text to find them again. A table
travels with its content item in `metadata["tables"]` (JSON: dates as {"date": "<ISO>"}).
"""

from __future__ import annotations

import datetime as dt
import math
import re
from dataclasses import dataclass, field
from typing import Any

Cell = str | int | float | bool | dt.datetime | dt.date | dt.time | None

_NUMERIC = re.compile(r"^[-+]?(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?(?:[eE][-+]?\d+)?$")
_EUROPEAN = re.compile(
    r"^(?:\d{1,3}(?:\.\d{3})+|\d{1,3}(?:[ \u00a0\u202f]\d{3})+|\d+),\d+$|^\d{1,3}(?:\.\d{3}){2,}$"
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


def number(text: str) -> int | float | None:
    """The text as a number when it plainly is one ("1", "-2.5", "1,234.50", "1.234,50"), else None."""
    text = text.strip()
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


def typed(text: str) -> Cell:
    """A text cell (CSV, Word, HTML, PDF) as a number when it plainly is one; empty text is None."""
    text = " ".join(str(text).split())
    if not text:
        return None
    value = number(text)
    return text if value is None else value


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
