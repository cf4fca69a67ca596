"""A table read as sheets: its blocks (`agents.knowledge.blocks`) with their headings, rows and numeric
columns, and the words of a heading or a question compared across them. What `compiled` computes over
and `measures` matches a question's words to. Pure, no I/O."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from agents.knowledge.blocks import blocks
from agents.knowledge.blocks import value as cell_value
from agents.language import DATE, holds, stems, tokens
from extractors.tables import Cell, Table, text_of

ROWS = 2_000  # rows of one table read at most (a sheet beyond that is a dataset, not a question's table)


def sheet_words(text: str, languages: Sequence[str]) -> set[str]:
    """The stems of a heading's or question's words, numbers and dates left out: a column headed
    "January–June 2023" is a period, which a question names to choose its rows, not its measure."""
    words = [w.casefold() for w in tokens(text.replace("_", " ")) if not w.isdigit() and not holds(DATE, w)]
    return {s for language in languages for s in stems(words, language)}


def is_year(values: Sequence[float]) -> bool:
    return bool(values) and all(v.is_integer() and 1800 <= v <= 2100 for v in values)


@dataclass
class Sheet:
    header: list[str]
    rows: list[list[Cell]]
    numeric: list[int]  # columns mostly numbers


def sheets_of(table: Table) -> list[Sheet]:
    """The table's blocks (`agents.knowledge.blocks`: captions in the headings, a block per period) with
    two rows at least, each as a sheet."""
    found = []
    for block in blocks(table):
        rows = [r for r in block.rows[:ROWS] if any(text_of(c).strip() for c in r)]
        if len(rows) < 2:
            continue
        width = max(len(block.headings), max(len(r) for r in rows))
        header = block.headings + [""] * (width - len(block.headings))
        rows = [list(r) + [None] * (width - len(r)) for r in rows]
        data = [r for r in rows if any(cell_value(c) is not None for c in r)]  # not the notes under a table
        numeric = [i for i in range(width) if 2 * sum(cell_value(r[i]) is not None for r in data) > len(data)]
        found.append(Sheet(header, rows, numeric))
    return found


def measurable(sheet: Sheet) -> list[int]:
    """The numeric columns that may be measured: not a column of years."""
    return [i for i in sheet.numeric if not is_year([v for r in sheet.rows if (v := cell_value(r[i])) is not None])]


def heading_text(heading: str) -> str:
    """A heading's words that name a measure: no units in brackets, numbers or dates ("H1 2024 Sales
    (EUR m)" is "Sales")."""
    bare = re.sub(r"\([^)]*\)|\[[^\]]*\]", " ", heading.replace("_", " "))
    return " ".join(w for w in tokens(bare) if not any(ch.isdigit() for ch in w) and not holds(DATE, w))
