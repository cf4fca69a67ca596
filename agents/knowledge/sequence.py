"""What came after a row of an ordered table: "What came after the move to Hall 2?" over a table of
dated milestones is answered by the row after the one it names, not by the rows that share its words
(issue 50: a passage search quoted the named milestone and the ones before it).

A table is ordered when one of its columns dates every row (a year, a date, a month); its rows are
read in that order, backwards when the years fall (a chronicle written newest first). The row the
question names is the one whose other cells share the most of its words, half of that row's words at
least, and one row alone; the answer is the row after it. A question that shares no word with any row
(asked in another language than the table's) names the row its words mean: `row_labels` gives what to
compare, the caller's vectors compare it, `meant_row` picks the row that stands out. A follow-up that
names no row ("And what came after that?") goes on from the row the conversation reached, by the
requests before it (`continued`). Pure, no I/O; `agents.language.asks_after` tells whether a question asks this.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass

from agents.base import DocumentText, Passage
from agents.knowledge.compiled import as_written
from agents.knowledge.passages import location, row_passage
from agents.knowledge.retrieval import document_language
from agents.knowledge.sheets import Sheet, sheet_words, sheets_of
from agents.language import (
    DATE,
    asks_after,
    content_words,
    detect_language,
    holds,
    refers_back,
    without_after,
    without_asking,
)
from agents.phrases import say
from agents.toolkit.tables import document_tables
from extractors.tables import Cell, text_of

# A row means the question's words when its label's cosine with them (USE's vectors, as for headings in
# `agents.knowledge.measures`) is at least ROW_LIKE and ROW_STANDOUT above every other row's. Measured on
# our own chronicles: "second shop opened on the market" / "Zweiter Laden am Markt eröffnet" 0.831 (next
# 0.396), "connection to the national network" / "Raccordement au réseau national" 0.851 (next 0.147),
# "Eröffnung des dritten Ladens" / "Third shop opened at the station" 0.682 (next 0.541), "certification" /
# "Zertifizierung nach ISO 9001" 0.475 (next 0.122); "the brioche" over the bakery's rows at most 0.165.
ROW_LIKE, ROW_STANDOUT = 0.45, 0.1


Place = tuple[DocumentText, str, Sheet, list[list[Cell]], int, int]  # a row: document, item, sheet, rows, index, date column


@dataclass(frozen=True)
class Following:
    """The row a question names and the one after it in its table, as the document writes them."""

    named: str  # the named row's passage ("Datum: 30.09.2021; Meilenstein: Umzug nach Halle 2")
    after: str  # the next row's passage; "" when the named row is the table's last
    label: str  # the named row's cells but its date ("Umzug nach Halle 2")
    next_label: str  # the next row's cells, its date first ("10.11.2022, Zertifizierung nach ISO 9001")
    document: str
    source: str  # the table's item ("table 1", "page 1 table 1", "sheet 2021")
    date: str = ""  # the named row's date as written


def _dating(sheet: Sheet) -> int | None:
    """The column that dates every row (a year, a date, a month's name), if any."""
    for i in range(len(sheet.header)):
        cells = [text_of(r[i]).strip() for r in sheet.rows]
        if all(cells) and all(holds(DATE, c) for c in cells):
            return i
    return None


def _falling(sheet: Sheet, column: int) -> bool:
    """Whether the rows are written newest first: the years of the dating column fall."""
    years = [int(m.group()) for r in sheet.rows if (m := re.search(r"\b(?:1[5-9]|20)\d\d\b", text_of(r[column])))]
    return len(years) == len(sheet.rows) and all(a > b for a, b in zip(years, years[1:], strict=False))


def _ordered(documents: Sequence[DocumentText]) -> Iterator[tuple[DocumentText, str, Sheet, list[list[Cell]], int]]:
    """Each table dated row by row: its document, item, sheet, rows in time order and dating column."""
    for doc in documents:
        for table in document_tables(doc):
            for sheet in sheets_of(table):
                dated = _dating(sheet)
                if dated is not None:
                    yield doc, table.source or table.name, sheet, sheet.rows[::-1] if _falling(sheet, dated) else sheet.rows, dated


def _row_words(row: Sequence[Cell], dated: int, languages: list[str]) -> set[str]:
    return sheet_words(" ".join(text_of(c) for i, c in enumerate(row) if i != dated), languages)


def _naming(question: str) -> tuple[str, str]:
    """(the question's language, its words that name the row to go on from)."""
    language = detect_language(question, default="en")
    return language, " ".join(content_words(without_asking(without_after(question)), language))


def _named(question: str, documents: Sequence[DocumentText], meant: str = "") -> Place | None:
    """Where the row the question names sits: the one row whose other cells share the most of its words,
    half of that row's words at least; else the one whose label is `meant`; None when none or two alike."""
    return _named_by(question, documents, "") or (_named_by(question, documents, meant) if meant else None)


def _named_by(question: str, documents: Sequence[DocumentText], meant: str) -> Place | None:
    best: list[Place] = []  # the rows sharing the most
    most = 0
    language, naming = _naming(question)
    for doc, source, sheet, rows, dated in _ordered(documents):
        languages = list(dict.fromkeys([language, document_language(doc.items)]))
        asked = sheet_words(naming, languages)
        for n, row in enumerate(rows):
            words = _row_words(row, dated, languages)
            if meant:  # named by meaning: that row's words are all it shares
                shared = len(words) if _name(row, dated) == meant else 0
            else:
                shared = len(words & asked)
            if shared and 2 * shared >= len(words) and shared >= most:
                best = ([] if shared > most else best) + [(doc, source, sheet, rows, n, dated)]
                most = shared
    return best[0] if len(best) == 1 else None


def following(question: str, documents: Sequence[DocumentText], meant: str = "") -> Following | None:
    """The row after the one the question names, in the ordered table that holds it (none after it when
    that row is the last); None when no such table has one row the question clearly names. `meant`: the label of the
    row the question names in another language (`row_labels`, `meant_row`), where no word is shared."""
    place = _named(question, documents, meant)
    return _after(*place) if place else None


def row_labels(requests: Sequence[str], documents: Sequence[DocumentText]) -> tuple[dict[str, str], list[str]]:
    """({request: its words naming a row}, the names of the ordered tables' rows, `_name`): what to compare by
    meaning when words name no row ("the second shop opened on the market" over "Zweiter Laden am
    Markt eröffnet"); the requests without such words are left out; no labels without an ordered table."""
    namings = {r: naming for r in requests if (naming := _naming(r)[1])}
    labels = [_name(row, dated) for _, _, _, rows, dated in _ordered(documents) for row in rows]
    return namings, list(dict.fromkeys(label for label in labels if label))


def meant_row(labels: Sequence[str], cosines: Sequence[float]) -> str:
    """The label whose likeness in meaning to the question's words is at least ROW_LIKE and ROW_STANDOUT
    above every other label's; "" when none stands out."""
    order = sorted(range(len(labels)), key=lambda n: -cosines[n])
    if not order or cosines[order[0]] < ROW_LIKE:
        return ""
    return labels[order[0]] if len(order) == 1 or cosines[order[0]] - cosines[order[1]] >= ROW_STANDOUT else ""


def continued(question: str, earlier: Sequence[str], documents: Sequence[DocumentText],
              meant: Mapping[str, str] | None = None) -> Following | None:
    """What came after the row the conversation reached: "Und was kam danach?" after "Was kam nach der
    Umstellung auf Bio-Mehl?" goes on from the row that answer gave (the one after Bio-Mehl), not from
    Bio-Mehl again; after "Wann war die Umstellung?" from Bio-Mehl itself. `earlier`: the user's earlier
    requests, newest first; each follow-up of the same kind between them moves one row on. None when the
    question does not go on from them, or no earlier request names a row (by its words, else by the label
    `meant` gives it)."""
    if not refers_back(question):
        return None
    for moves, before in enumerate(earlier):
        if (place := _named(before, documents, (meant or {}).get(before, ""))) is not None:
            doc, source, sheet, rows, n, dated = place
            return _after(doc, source, sheet, rows, n + moves + asks_after(before), dated)
        if not (asks_after(before) and refers_back(before)):
            return None  # the conversation turned to something else before
    return None


def after_row(question: str, earlier: Sequence[str], documents: Sequence[DocumentText],
              meant: Mapping[str, str] | None = None) -> Following | None:
    """The row after the one the question names, or, when it names none and goes on from the requests
    before it ("And what came after that?"), after the row the conversation reached (`continued`).
    `meant`: the label of the row a request names by meaning (`row_labels`, `meant_row`)."""
    return (following(question, documents, (meant or {}).get(question, ""))
            or continued(question, earlier, documents, meant))


def _after(doc: DocumentText, source: str, sheet: Sheet, rows: list[list[Cell]], n: int, dated: int) -> Following | None:
    """The row `n` and the one after it, as the document writes them (no row after it when `n` is the
    last: `after` and `next_label` empty); None when there is no row `n`."""
    if not 0 <= n < len(rows):
        return None
    row, nxt = rows[n], rows[n + 1] if n + 1 < len(rows) else None
    written = as_written([row_passage("", sheet.header, [text_of(c) for c in r]) for r in (row, nxt) if r], doc)
    return Following(written[0], written[1] if nxt else "", _cells(row, dated, first=False),
                     _cells(nxt, dated, first=True) if nxt else "", doc.name, source, text_of(row[dated]).strip())


def _name(row: Sequence[Cell], dated: int) -> str:
    """The cell that names a row: its first with a letter but the date ("Load tests finished" of "Load
    tests finished | 25 October 2024 | Tom Becker"); what a question's words are compared with by meaning,
    where the other cells (an owner, a place) would only blur it."""
    return next((text for i, c in enumerate(row) if i != dated and re.search(r"[^\W\d_]", text := text_of(c).strip())), "")


def _cells(row: Sequence[Cell], dated: int, first: bool) -> str:
    """A row's cells but its date, or with its date first."""
    cells = [text_of(c).strip() for i, c in enumerate(row) if i != dated and text_of(c).strip()]
    return ", ".join([text_of(row[dated]).strip(), *cells] if first else cells)


def first_rows(after: Following, found: Sequence[Passage], documents: Sequence[DocumentText]) -> list[Passage]:
    """The next row and the named one as the first passages, then the others found."""
    doc = next((d for d in documents if d.name == after.document), None)
    top = max((p.score for p in found), default=1.0)
    # Where the search found the named row (a Word table under its heading), else the table's own item.
    seen = next((p for p in found if p.text == after.named and p.name == after.document), None)
    where = dict(page=seen.page, sheet=seen.sheet, section=seen.section) if seen else location(after.source)
    rows = [Passage(name=after.document, text=text, score=top, file_id=doc.file_id if doc else None, **where)
            for text in (after.after, after.named) if text]
    return rows + [p for p in found if p.text not in (after.after, after.named)]


def statement(after: Following, language: str) -> str:
    """What came after, in the user's language, marked with the two first passages; that nothing did,
    marked with the named row's, when it is the table's last."""
    if not after.after:
        return say("after_last_row", language, named=after.label, date=after.date, marks="[1]").strip() + "."
    return say("after_row", language, named=after.label, next=after.next_label, marks="[1][2]").strip() + "."
