"""A table's blocks as its reader sees them, for computing over it (`agents.knowledge.compiled`).

Reports lay a sheet out for the eye, not for a program:

- a caption row above the headings names what they are about ("In millions of CHF ... January–June
  2023"): it is part of each heading under it. A caption row has fewer cells than the headings under
  it; one label captions every column, several caption each the run of headed columns (between empty
  columns) they sit in; the label column's caption (the unit) captions nothing;
- the same headings again further down start another block of the same columns ("January–June
  2022" under "January–June 2023"): each block is its own table, or every zone would count twice.

Pure, no I/O.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from extractors.tables import Cell, Table, number, text_of


@dataclass(frozen=True)
class Block:
    """One block of a table: a heading per column (captions included) and the rows under them."""

    headings: list[str]
    rows: list[list[Cell]]


def value(cell: Cell) -> float | None:
    """A cell's number (a percentage, an amount with its currency sign), or None."""
    if isinstance(cell, bool):
        return None
    if isinstance(cell, int | float):
        return float(cell)
    text = str(cell or "").strip().rstrip("%").replace("€", "").replace("$", "").replace("£", "").strip()
    found = number(text) if text else None
    return float(found) if found is not None else None


def _texts(row: Sequence[Cell]) -> dict[int, str]:
    """The row's filled cells by column, their whitespace made single spaces."""
    return {i: " ".join(text_of(c).split()) for i, c in enumerate(row) if text_of(c).strip()}


def _wordy(row: Sequence[Cell], years: bool = False) -> bool:
    """A row of words only (headings; with `years`, a caption: "2024" is a word there): filled, and no
    cell is a number."""
    def word(cell: Cell) -> bool:
        found = value(cell)
        return found is None or (years and found.is_integer() and 1800 <= found <= 2100)
    return bool(_texts(row)) and all(word(c) for c in row if text_of(c).strip())


def _next_filled(rows: Sequence[Sequence[Cell]], after: int) -> int | None:
    return next((i for i in range(after + 1, len(rows)) if _texts(rows[i])), None)


def _captions(rows: Sequence[Sequence[Cell]], head: int, floor: int) -> list[int]:
    """The caption rows right above the headings at `head` (blank rows between), not above `floor`."""
    found: list[int] = []
    width = len(_texts(rows[head]))
    for i in range(head - 1, floor - 1, -1):
        texts = _texts(rows[i])
        if not texts:
            continue
        if not _wordy(rows[i], years=True) or len(texts) >= width:
            break
        found.insert(0, i)
    return found


def _headings(row: Sequence[Cell], captions: Sequence[Sequence[Cell]]) -> list[str]:
    heads = [" ".join(text_of(c).split()) for c in row]
    runs: list[list[int]] = []  # runs of headed columns, the label column left out
    for i in range(1, len(heads)):
        if heads[i] and runs and runs[-1][-1] == i - 1:
            runs[-1].append(i)
        elif heads[i]:
            runs.append([i])
    for caption in captions:
        labels = {i: t for i, t in _texts(caption).items() if i > 0}
        for run in runs:
            said = [t for i, t in labels.items() if len(labels) == 1 or run[0] <= i <= run[-1]]
            for i in run:
                heads[i] = " ".join([*said, heads[i]])
    return heads


def blocks(table: Table) -> list[Block]:
    """The table's blocks, in order; one block with no headings when the table has no header row."""
    rows = table.rows
    if table.header_row is None:
        return [Block([], list(rows))]
    start = head = table.header_row
    while ((below := _next_filled(rows, head)) is not None and _wordy(rows[below])
           and len(_texts(rows[below])) > len(_texts(rows[head]))):
        head = below  # the row above was a caption of these headings
    again = _texts(rows[head])
    heads = [head] + [i for i in range(head + 1, len(rows)) if _texts(rows[i]) == again]
    firsts = [start] + [(_captions(rows, h, floor=heads[n] + 1) or [h])[0] for n, h in enumerate(heads[1:])]
    found: list[Block] = []
    for n, h in enumerate(heads):
        end = firsts[n + 1] if n + 1 < len(heads) else len(rows)
        captions = [rows[i] for i in _captions(rows, h, floor=firsts[n])]
        found.append(Block(_headings(rows[h], captions), [list(r) for r in rows[h + 1:end]]))
    return found
