"""Superlative questions over table rows: "Which team has the most Stanley Cups?" asks for the row
with the largest value in the column the question names, however well its words match.

BM25 cannot see that: every row of the table holds the column's heading once, so the rows tie, and
the one with 13 cups comes wherever the table put it. Retrieval hands its ranking here; the rows of
the named column come back first, in the order of their values. Pure, no I/O.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence

from extractors.tables import number

# Superlatives in en/de/fr, matched on the lowercased question.
_MOST = re.compile(
    r"\b(?:most|highest|largest|biggest|greatest|maximum|meisten|höchste[nmrs]?|größte[nmrs]?|grösste[nmrs]?"
    r"|(?:le|la|les) plus(?! petit| faible| bas))\b"
)
_LEAST = re.compile(
    r"\b(?:least|lowest|smallest|fewest|minimum|wenigsten|niedrigste[nmrs]?|kleinste[nmrs]?|geringste[nmrs]?"
    r"|(?:le|la|les) moins|(?:le|la|les) plus (?:petit|faible|bas)\w*)\b"
)
# A total is not one of the things a superlative compares.
_TOTAL = re.compile(r"(?:(?:sub-?|grand |sous-)?total|gesamt\w*|insgesamt|summe|zwischensumme|sum)\b", re.IGNORECASE)
_CAPTION = " — "  # "In millions of CHF, 2023 — Zone NA; Sales (a): 12,553" (`row_passage`)


# Where the words a superlative qualifies end: "the highest sales | in 2023", "les plus | de ..." is not.
_PHRASE_END = re.compile(r"[?!.,;:]|\b(?:in|im|for|during|between|among|at|on|than|by|dans|pour|pendant|entre|parmi"
                         r"|während|für|bei|zwischen|unter|als|que)\b")


def _first(question: str) -> tuple[int, re.Match[str] | None]:
    """The question's first superlative ("And the fewest? (Which has the most ...?)": the fewest)."""
    text = question.lower()
    found = [(m.start(), sign, m) for sign, pattern in ((1, _MOST), (-1, _LEAST)) if (m := pattern.search(text))]
    if not found:
        return 0, None
    _, sign, match = min(found, key=lambda f: f[0])
    return sign, match


def direction(question: str) -> int:
    """1 when the question asks for the largest value, -1 for the smallest, else 0."""
    return _first(question)[0]


def qualified(question: str) -> str:
    """The words the superlative qualifies: "the most Stanley Cups in ..." -> "Stanley Cups"."""
    _, found = _first(question)
    if found is None:
        return ""
    rest = question[found.end():]
    end = _PHRASE_END.search(rest.lower())
    return rest[:end.start()] if end else rest


def names_nothing(question: str) -> bool:
    """A superlative without the words it qualifies ("And which zone had the lowest?"): the measure
    is the one the question before it named."""
    return bool(direction(question)) and not re.search(r"\w", qualified(question))


def row_passage(caption: str, header: list[str], row: list[str]) -> str:
    """A table row with its column headings: "Zone NA; Sales (a): 12,553; ...", the sheet's values
    as shown (what `agents.retrieval.table_rows` indexes and `row_cells` reads back)."""
    heads = header + [""] * (len(row) - len(header))
    cells = "; ".join(f"{h}: {v}" if h else v for h, v in zip(heads, row, strict=False) if v)
    return f"{caption}{_CAPTION}{cells}" if caption else cells


def row_cells(text: str) -> list[tuple[str, str]]:
    """A row passage's (heading, value) pairs, "" the heading of a cell without one (the row's
    label: "Zone NA; Sales (a): 12,553"); [] for a passage without a headed cell."""
    body = text.split(_CAPTION, 1)[-1]
    cells = []
    for part in body.split("; "):
        heading, colon, value = part.partition(": ")
        cells.append((heading.strip(), value.strip()) if colon else ("", part.strip()))
    return cells if any(heading for heading, _ in cells) else []


def value_of(cell: str) -> float | None:
    """A cell's number as a sheet shows it: "12,553", "(81)" (negative), "15,50 €", "4.2%"."""
    text = cell.strip().rstrip("%").strip()
    text = re.sub(r"^[$€£¥]\s?|\s?[$€£¥]$", "", text)
    negative = text.startswith("(") and text.endswith(")")
    found = number(text[1:-1] if negative else text.replace("−", "-"))
    if found is None or isinstance(found, bool):
        return None
    return -float(found) if negative else float(found)


def extreme_first(question: str, texts: Sequence[str], scores: Sequence[float],
                  terms_of: Callable[[str], set[str]], query: set[str]) -> list[int] | None:
    """The passages' new order for a superlative question: the rows of the numeric column the
    question names, largest (or smallest) value first, then the rest as ranked. The column is the
    one whose heading shares most words with what the superlative qualifies ("the highest sales"),
    then with the whole question; the rows, those of the best-ranked block (one caption: "2023",
    not "2022"). None when the question asks no superlative or no row has such a column."""
    sign = direction(question)
    if not sign:
        return None
    wanted = terms_of(qualified(question))
    rows = {i: row_cells(text) for i, text in enumerate(texts)}
    labels = {i: terms_of(_label(cells)) & query for i, cells in rows.items() if cells}
    # Per numeric column: its heading's words in what the superlative qualifies ("the highest
    # sales"), the rows labelled with the kind of thing asked for ("which zone": "Zone NA"), its
    # heading's words in the whole question.
    headings: dict[str, list[int]] = {}
    for i, cells in rows.items():
        for heading, value in cells:
            if heading and value_of(value) is not None:
                if heading not in headings:
                    words = terms_of(heading)
                    # ... and of two alike, the one with fewer other words ("Impairment of intangible
                    # assets", not "Impairment of goodwill and ... intangible assets").
                    headings[heading] = [len(words & wanted), 0, len(words & query), -len(words - wanted - query)]
                headings[heading][1] += bool(labels[i])
    needed = 0 if wanted else 2
    if not headings or max(h[needed] for h in headings.values()) == 0:
        return None
    column = max(headings, key=lambda h: headings[h])  # the first of the best, in ranking order
    # The column's first cell in a row: the first period where a sheet repeats its headings per period.
    values = {i: value_of(next((v for h, v in cells if h == column), "")) for i, cells in rows.items()}
    found = [i for i, v in values.items() if v is not None and not _TOTAL.match(_label(rows[i]))]
    if not found:
        return None
    if all(values[i] <= 0 for i in found):  # type: ignore[operator]
        # A column of charges shown as negatives, "(285)": the largest impairment is the most negative.
        sign = -sign
    block = _caption(texts[found[0]])  # the best-ranked row's
    found = [i for i in found if _caption(texts[i]) == block]
    # "Which zone ...": when several rows are labelled with the kind of thing asked for ("Zone NA",
    # "Zone EUR"), the others ("Unallocated items") are not candidates.
    named = [i for i in found if labels[i]]
    chosen = sorted(named if len(named) > 1 else found, key=lambda i: (-sign * values[i], i))  # type: ignore[operator]
    taken = set(chosen)
    return chosen + [i for i in range(len(texts)) if i not in taken]


def _label(cells: list[tuple[str, str]]) -> str:
    """The row's label: its first cell without a heading ("Zone NA"), else its first cell."""
    return next((value for heading, value in cells if not heading), cells[0][1] if cells else "")


def _caption(text: str) -> str:
    return text.split(_CAPTION, 1)[0] if _CAPTION in text else ""
