"""Documents cut into passages: prose at sentence ends, about CHUNK_WORDS words each; a table's rows
(a sheet's, or a table inside prose) one passage each with their headings; each knows its page, sheet or
section. Pure, no I/O; ranked by `agents.knowledge.retrieval`."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TypedDict

from agents.language import split_sentences
from extractors.tables import Table, text_of

CHUNK_WORDS = 90  # a passage: a few sentences, enough to answer, short enough to quote

_NUMBER = re.compile(r"^[(+\-−]?[$€£¥]?\d[\d.,'’ ]*%?\)?$|^[—–-]$")
_YEAR = re.compile(r"^(?:19|20)\d\d$")
_LOCATION = re.compile(r"^(?:(page|slide) (\d+)|sheet (.+))$", re.IGNORECASE)


@dataclass
class Chunk:
    """A passage of a document and where it is."""

    seq: int
    text: str
    page: int | None = None
    sheet: str | None = None
    section: str | None = None


class Location(TypedDict, total=False):
    """Where a content item is in its document: one of these, or none."""

    page: int
    sheet: str
    section: str


def location(item_name: str) -> Location:
    """Page, sheet or section of a content item, from its name ("page 3", "sheet Revenue", "comments")."""
    match = _LOCATION.match(item_name.strip())
    if match and match.group(1) and match.group(1).lower() == "page":
        return {"page": int(match.group(2))}
    if match and match.group(3):
        return {"sheet": match.group(3)}
    name = item_name.strip()
    # A document's one item ("text", "body", an HTML "page") is no place within it.
    return {"section": name} if name and name.lower() not in ("text", "body", "page") else {}


CAPTION = " — "  # "In millions of CHF, 2023 — Zone NA; Sales (a): 12,553" (`row_passage`)


def row_passage(caption: str, header: list[str], row: list[str]) -> str:
    """A table row with its column headings: "Zone NA; Sales (a): 12,553; ...", the sheet's values as shown."""
    heads = header + [""] * (len(row) - len(header))
    cells = "; ".join(f"{h}: {v}" if h else v for h, v in zip(heads, row, strict=False) if v)
    return f"{caption}{CAPTION}{cells}" if caption else cells


_CELL = re.compile(r"^[^.:;!?]{1,80}: ")  # "Cause and remedy: ...": a cell under its column's heading


def is_row(text: str) -> bool:
    """Whether a passage is a table row (`row_passage`): two cells or more, half of them or more under a heading."""
    cells = text.rpartition(CAPTION)[2].split("; ")
    headed = sum(bool(_CELL.match(cell)) for cell in cells)
    return len(cells) >= 2 and headed > 0 and 2 * headed >= len(cells)


def _is_number(cell: str) -> bool:
    return bool(_NUMBER.match(cell)) and not _YEAR.match(cell)


def table_rows(text: str) -> tuple[list[str], str]:
    """The data rows of a tab-separated sheet as passages of their own, each with the heading row
    above its block (and the row above that, which names the unit or period), and the text left:
    titles and notes, for sentence chunks.

    A row is data when it has two cells or more and one of them is a number (a year alone is a
    heading: "2023 | 2022"); the other rows of two cells or more are headings. A block of such rows
    that no number follows is a table of words (milestones and their dates, names and roles): its
    first row heads the others, each a passage; a lone one is text."""
    rows: list[str] = []
    rest: list[str] = []
    headings: list[list[str]] = []
    in_data = False

    def words_only() -> None:
        if len(headings) > 1:
            rows.extend(row_passage("", headings[0], cells) for cells in headings[1:])
        else:
            rest.extend("\t".join(cells) for cells in headings)

    for line in text.split("\n"):
        cells = [c.strip() for c in line.split("\t")]
        filled = [c for c in cells if c]
        if len(filled) < 2:
            if headings and not in_data and filled:  # a line of text after rows of words ends their table
                words_only()
                headings = []
            rest.append(line)
        elif any(_is_number(c) for c in filled):
            header = headings[-1] if headings else []
            caption = ", ".join(c for c in headings[-2] if c) if len(headings) > 1 else ""
            rows.append(row_passage(caption, header, cells))
            in_data = True
        else:
            if in_data:  # a heading after data starts the next block
                headings, in_data = [], False
            headings.append(cells)
    if not in_data:
        words_only()
    return rows, "\n".join(rest)


def _is_table(where: Location, text: str) -> bool:
    lines = [line for line in text.split("\n") if line.strip()]
    return "sheet" in where or (len(lines) > 1 and 2 * sum("\t" in line for line in lines) >= len(lines))


def with_tables(items: Sequence[tuple[str, str]], tables: Sequence[Table]) -> list[tuple[str, str]]:
    """A document's text items, and each of its tables whose rows the text does not hold (a slide's table,
    kept out of its prose) as an item named by the table ("slide 2 table 1"), cells apart by tabs: a
    question about the table on the slides finds its rows by their words and by the table's name."""
    held: str | None = None
    extra: list[tuple[str, str]] = []
    for table in tables:
        lines = ["\t".join(" ".join(text_of(cell).split()) for cell in row) for row in table.rows]
        first = " ".join(next((line for line in lines if line.strip()), "").split())
        if not table.name or not first:
            continue
        if held is None:
            held = " ".join(" ".join(text for _, text in items).split())
        if first not in held:
            extra.append((table.name, "\n".join(lines)))
    return [*items, *extra]


def chunk_items(items: Sequence[tuple[str, str]]) -> list[Chunk]:
    """A document's text items cut into passages of about CHUNK_WORDS words at sentence ends; a
    sheet's rows are passages of their own, with their headings, so an answer quotes the row, and so
    are the rows of a table inside prose (a Word document's, an HTML page's: `table_blocks`)."""
    chunks: list[Chunk] = []
    for name, text in items:
        where = location(name)
        for is_table, part in _blocks(where, text):
            rows, rest = table_rows(part) if is_table else ([], part)
            chunks += [Chunk(seq=len(chunks) + i, text=row, **where) for i, row in enumerate(rows)]
            if rows and " ".join(rest.split()) == " ".join(name.split()):
                continue  # the heading its rows are under, and nothing else: they carry it as their section
            chunks += _prose(rest, where, len(chunks))
    return chunks


def row_passages(items: Sequence[tuple[str, str]]) -> list[str]:
    """The row passages `chunk_items` makes of the items' tables, without cutting their prose."""
    return [row for name, text in items for is_table, part in _blocks(location(name), text) if is_table
            for row in table_rows(part)[0]]


def _blocks(where: Location, text: str) -> list[tuple[bool, str]]:
    return [(True, text)] if _is_table(where, text) else table_blocks(text)


def table_blocks(text: str) -> list[tuple[bool, str]]:
    """The text in document order as (is a table, text): a table is a run of two or more lines with
    tab-separated cells (how the extractors write a table inside prose), the rest is prose."""
    parts: list[tuple[bool, list[str]]] = []
    for line in text.split("\n"):
        tabbed = "\t" in line.strip("\t ")
        if parts and parts[-1][0] == tabbed:
            parts[-1][1].append(line)
        else:
            parts.append((tabbed, [line]))
    blocks: list[tuple[bool, str]] = []
    for tabbed, lines in parts:
        is_table = tabbed and len(lines) > 1
        if blocks and not is_table and not blocks[-1][0]:
            blocks[-1] = (False, blocks[-1][1] + "\n" + "\n".join(lines))
        else:
            blocks.append((is_table, "\n".join(lines)))
    return blocks


def _prose(text: str, where: Location, seq: int) -> list[Chunk]:
    """Passages of about CHUNK_WORDS words, cut at sentence ends."""
    chunks: list[Chunk] = []
    current: list[str] = []
    words = 0
    for sentence in split_sentences(text):
        n = len(sentence.split())
        if current and words + n > CHUNK_WORDS:
            chunks.append(Chunk(seq=seq + len(chunks), text=" ".join(current), **where))
            current, words = [], 0
        current.append(sentence.strip())
        words += n
    if current:
        chunks.append(Chunk(seq=seq + len(chunks), text=" ".join(current), **where))
    return chunks
