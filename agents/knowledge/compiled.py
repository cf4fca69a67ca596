"""Superlatives, comparisons and totals over a table, computed: the row that holds the maximum, not
the rows that share the question's words.

Issue 50: "which month had the highest total in 2024, which the lowest?", "the most expensive
item", "which depot had the lowest on-time rate?" were answered by the rows a passage search ranked
first, and a real model given those rows (Qwen 0.5B) named the team with one Stanley Cup as the one
with the most. Compiling the answer over a table is within the offline model's scope, and a real
model does better given the computed rows than asked to scan a table. For each operation asked
(`agents.language.compared`):

- the column: a numeric column whose heading shares a word with the question (a price asked for
  prefers a column of amounts); else the one whose heading means what a word of the question means
  in another language ("Umsatz" over a heading "Sales"), when the caller can tell (`agents.knowledge.measures`: `asked_measures`,
  `standout`: the vectors of cross-language retrieval); of two it names, the one named next to its
  words of comparing ("which number has the largest square": Square); else the table's one numeric
  column that is not a year, and the answer says no heading was named; of several, none is guessed:
  the answer lists them (the sheet's heading lines, quoted instead, answered nothing);
- the rows the question means: a value the question names ("in 2024", "Arcadia") keeps the rows
  that have it in that column; a word that begins several labels ("which zone": "Zone NA", "Zone
  EUR", not "Unallocated items") keeps those;
- the table: the one that fits best, then the one whose title lines name the question's words
  ("3.2 Products" above a table headed like the segments' one);
- the label: the column the question names that is not the measured one ("which variety"), else
  the first column of words; a label that repeats (a ledger's months) is summed per label first; with
  no column of labels, each row is its own;
- then the maximum, the minimum or the sum, with the row(s) it comes from; a row that totals the
  others ("Total", "Group total", "Zwischensumme", "Sous-total", or a row whose value is the sum of
  all the others) is none of them, and a table that writes its own total answers a sum with that
  row (the passage search finds it; adding it up again would count it twice).

Pure, no I/O; callers run it off the loop for long documents.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace

from agents.base import DocumentText
from agents.knowledge.blocks import value as cell_value
from agents.knowledge.passages import CAPTION, location, row_passage, row_passages, with_tables
from agents.knowledge.retrieval import document_language, reading
from agents.knowledge.sheets import Sheet, heading_text, measurable, sheet_words, sheets_of
from agents.language import (
    MAX,
    PRICE,
    SUM,
    asked_kind,
    compared,
    comparing_spans,
    content_words,
    detect_language,
    holds,
    tokens,
    totalling_words,
)
from agents.phrases import say
from agents.toolkit.tables import document_tables
from extractors.tables import Cell, Table, text_of

# Words of a subtotal or total row's label besides those of totalling (`agents.language.totalling_words`).
_TOTAL = re.compile(r"\b(?:sub-?totals?|grand total|zwischensummen?|gesamtsumme|sous-totale?s?|total général)\b",
                    re.IGNORECASE)


@dataclass(frozen=True)
class Compiled:
    """One operation's result over one table: the value, the label of its row (or group), the rows."""

    op: str  # MAX, MIN or SUM
    column: str  # the measured column's heading
    value: float
    label: str  # the answer's row or group ("Cordoba"); "" for a sum over rows
    rows: list[str] = field(default_factory=list)  # the rows it comes from, as passages ("variety: Cordoba; ...")
    count: int = 0  # rows compiled
    document: str = ""
    source: str = ""  # the table's item ("sheet Revenue", "page 3")
    named: bool = True  # whether the question names the column (by a word or a phrase that means its heading)
    among: tuple[str, ...] = ()  # when it does not: the table's numeric columns, the compared one first


def _distance(heading: str, question: str, asked: set[str], languages: Sequence[str], meant: Mapping[str, str]) -> int:
    """How far from the question's words of comparing it names the heading (in characters; the
    question's length when it does not): of two columns the question names, the one next to "the
    largest" is measured ("which number has the largest square", "le carré le plus grand"), the
    other names the rows."""
    words = sheet_words(heading, languages) & asked
    spots = [m.span() for m in re.finditer(r"[^\W_]+", question) if sheet_words(m.group(), languages) & words]
    phrase = meant.get(heading_text(heading), "")
    spots += [m.span() for m in re.finditer(re.escape(phrase), question)] if phrase else []
    gaps = [max(start - e, s - end, 0) for start, end in spots for s, e in comparing_spans(question)]
    return min(gaps, default=len(question))


def _column(sheet: Sheet, question: str, asked: set[str], languages: Sequence[str], price: bool, op: str,
            near: Mapping[str, float], meant: Mapping[str, str]) -> int | None:
    """The measured column: its heading's words in the question (of two, the one named next to the words
    of comparing); else the heading that means a word of the question (`near`, `meant`); else one that
    is not a year."""
    def score(i: int) -> tuple[int, float, int]:
        cells = " ".join(f"{sheet.header[i]}: {text_of(r[i])}" for r in sheet.rows[:5])
        return (len(sheet_words(sheet.header[i], languages) & asked), near.get(heading_text(sheet.header[i]), 0.0),
                int(price and holds(PRICE, cells)))
    candidates = measurable(sheet)
    if not candidates:
        return None
    def unasked(i: int) -> int:  # "Trading operating profit" asked: not "Underlying trading operating profit"
        return len(sheet_words(heading_text(sheet.header[i]), languages) - asked)
    def key(i: int) -> tuple[object, ...]:
        words, like, priced = score(i)
        return (words, like > 0, -_distance(sheet.header[i], question, asked, languages, meant), like, priced,
                -unasked(i), _period(sheet.header[i], question), -candidates.index(i))
    best = max(candidates, key=key)
    if score(best) > (0, 0, 0):
        return best
    if len(candidates) == 1 and op != SUM:
        return candidates[0]
    return _row_total(sheet, candidates)


def _row_total(sheet: Sheet, candidates: Sequence[int]) -> int | None:
    """The column that adds up the others in every row (a "Total" of the quarters, however it is headed):
    the whole of each row's measure, what a question naming no column asks about ("the highest sales in
    2023" over a sheet of quarters and their total). Found by the numbers, not by the heading's words."""
    rows = [r for r in sheet.rows if all(cell_value(r[i]) is not None for i in candidates)]
    if len(rows) < 2 or len(candidates) < 3:
        return None
    def adds_up(row: list[Cell], i: int) -> bool:
        whole = cell_value(row[i]) or 0.0
        return abs(sum(cell_value(row[j]) or 0.0 for j in candidates if j != i) - whole) <= 0.005 * max(abs(whole), 1.0)

    return next((i for i in candidates if all(adds_up(r, i) for r in rows)), None)


def _period(heading: str, question: str) -> tuple[int, int]:
    """Of two columns or blocks of one measure ("H1 2023 Sales", "H1 2024 Sales"): the period the
    question names first, else the latest."""
    years = {int(y) for y in re.findall(r"\b(?:19|20)\d\d\b", heading)}
    said = {int(y) for y in re.findall(r"\b(?:19|20)\d\d\b", question)}
    return int(bool(years & said)), max(years, default=0)


def _mentioned(sheet: Sheet, question: str, target: int) -> list[list[Cell]]:
    """The rows the question means: for each column with a value the question names, those rows."""
    said = {t.casefold() for t in tokens(question)}
    rows = sheet.rows
    for i in range(len(sheet.header)):
        if i == target:
            continue
        named = {text_of(r[i]).casefold() for r in rows  # a dash for "none" names nothing
                 if (words := {t.casefold() for t in tokens(text_of(r[i]))}) and words <= said}
        if named:
            rows = [r for r in rows if text_of(r[i]).casefold() in named]
    return rows


def _is_total(row: Sequence[Cell]) -> bool:
    """A row that totals the others: a cell of words that is only a word of totalling ("Total", "Summe"),
    or a label that names a total or subtotal ("Group total", "Total Europe", "Zwischensumme", "Sous-total")."""
    return any(_names_total(c) for c in row if isinstance(c, str) and c.strip() and not any(ch.isdigit() for ch in c))


def _names_total(label: str) -> bool:
    words = tokens(label)
    return (not totalling_words(label).strip() or bool(_TOTAL.search(label))
            or (0 < len(words) <= 3 and words[0].casefold() in ("total", "gesamt")))


def _sums_the_rest(sums: Mapping[str, float], name: str) -> bool:
    """A group whose value is the sum of all the others (three at least: 1, 2 and 3 are no total): a total row however it is labelled."""
    rest = [v for n, v in sums.items() if n != name]
    return len(rest) >= 3 and abs(sum(rest) - sums[name]) <= 0.005 * max(abs(sums[name]), 1e-9)


def _label(sheet: Sheet, asked: set[str], languages: Sequence[str], target: int,
           meant: Mapping[str, str]) -> int | None:
    """The column the question names by a word that is not the measured column's ("which year"), or by
    a phrase that means its heading ("welche Zahl" over "Number"), else the first column of words."""
    words = [i for i in range(len(sheet.header)) if i != target and i not in sheet.numeric
             and any(text_of(r[i]).strip() for r in sheet.rows)]  # an empty margin column labels nothing
    other = asked - sheet_words(sheet.header[target], languages)
    named = [i for i in words + [i for i in sheet.numeric if i != target]
             if sheet_words(sheet.header[i], languages) & other or heading_text(sheet.header[i]) in meant]
    return next(iter(named or words), None)


def _kind(sheet: Sheet, rows: Sequence[list[Cell]], label: int | None, asked: set[str],
          languages: Sequence[str]) -> list[list[Cell]]:
    """The rows of the kind the question asks about: "which zone" over labels "Zone NA", "Zone EUR",
    "Unallocated items" keeps the zones. A word of the question that begins two labels at least, and
    not every one, names a kind of row; the rows whose label begins otherwise are not of it."""
    if label is None:
        return list(rows)
    def first(row: list[Cell]) -> set[str]:
        said = tokens(text_of(row[label]))
        return sheet_words(said[0], languages) & asked if said else set()
    kinds = {w for r in rows for w in first(r)}
    kept = [r for r in rows if first(r) & kinds]
    return kept if kinds and 2 <= len(kept) < len(rows) else list(rows)


def compile_over(sheet: Sheet, question: str, op: str, languages: Sequence[str],
                 near: Mapping[str, float] | None = None, meant: Mapping[str, str] | None = None,
                 alone: bool = False, titled: bool = False) -> tuple[int, Compiled] | None:
    """(how well the table fits the question, the result) for one operation over one table; `near`:
    the headings (`heading_text`) that mean a phrase of the question in another language, with the cosine,
    and `meant`: the phrase each means. `alone`: the only table of the documents, whose one numeric column
    a maximum or minimum may be asked of by no word of its heading (the result says so: `Compiled.named`);
    `titled`: a table whose title lines name what the question asks about ("3.1 Operating segments" for
    "which segment")."""
    # A heading matched by meaning alone chooses the column of a maximum or minimum, not of a sum: a sum
    # is a table's own total row more often than not, which the passage search finds by its words.
    near, meant = ((near or {}), (meant or {})) if op != SUM else ({}, {})
    asked = sheet_words(" ".join(content_words(totalling_words(question), languages[0])), languages)
    target = _column(sheet, question, asked, languages, asked_kind(question) == PRICE, op, near, meant)
    if target is None:
        return _unnamed(sheet, question, op, asked, languages, titled)
    mentioned = _mentioned(sheet, question, target)
    rows = [r for r in mentioned if cell_value(r[target]) is not None]
    if op == SUM and any(_is_total(r) for r in rows):
        return None  # the table writes its own total: that row is the answer, as a passage search finds it
    rows = [r for r in rows if not _is_total(r)]  # a "Total" row is no zone, month or item of the table
    label = _label(sheet, asked, languages, target, meant)
    kind = _kind(sheet, rows, label, asked, languages)
    if len(kind) < 2:
        return None
    named_label = label is not None and bool((sheet_words(sheet.header[label], languages) & asked
                                              - sheet_words(sheet.header[target], languages))
                                             or heading_text(sheet.header[label]) in meant)
    headed = len(sheet_words(sheet.header[target], languages) & asked) + (heading_text(sheet.header[target]) in near)
    if not headed and not named_label and target == _row_total(sheet, measurable(sheet)):
        return None  # a row total measured, and the rows not named: "which quarter" asks across the columns
    fit = headed + (len(mentioned) < len(sheet.rows) or len(kind) < len(rows)) + named_label
    # "The most important finding" names nothing of a table: no table question. Over the one table given,
    # whose one numeric column is all a maximum can be of, or a table its title says the question is about,
    # it is computed, saying no heading was named.
    candidates = measurable(sheet)
    lone = op != SUM and alone and candidates == [target]
    if not fit and not lone:
        return None
    unnamed = () if headed else tuple(dict.fromkeys(heading_text(sheet.header[i]) or sheet.header[i] for i in candidates))
    rows = kind
    passages = {id(r): row_passage("", sheet.header, [text_of(c) for c in r]) for r in rows}
    if op == SUM:
        total = sum(cell_value(r[target]) or 0.0 for r in rows)
        return fit, Compiled(op, sheet.header[target], total, "", [passages[id(r)] for r in rows], len(rows),
                             named=bool(headed), among=unnamed)
    groups: dict[str, list[list[Cell]]] = {}
    for n, r in enumerate(rows):  # with no column of labels, each row is its own: its other cells name it
        named = text_of(r[label]).strip() if label is not None else ""
        if named and label in sheet.numeric:  # "Number: 15", not a bare 15 beside the value
            named = f"{sheet.header[label]}: {named}" if sheet.header[label] else named
        groups.setdefault(named or _others(sheet, r, target) or f"#{n + 1}", []).append(r)
    sums = {name: sum(cell_value(r[target]) or 0.0 for r in group) for name, group in groups.items()}
    pick = max if op == MAX else min
    name = pick(sums, key=lambda n: sums[n])
    if op == MAX and _sums_the_rest(sums, name):  # an unlabelled total row: the largest, and no zone or item
        del sums[name]
        name = pick(sums, key=lambda n: sums[n])
    return fit, Compiled(op, sheet.header[target], sums[name], name, [passages[id(r)] for r in groups[name]],
                         len(rows), named=bool(headed), among=unnamed)


def _unnamed(sheet: Sheet, question: str, op: str, asked: set[str], languages: Sequence[str],
             titled: bool) -> tuple[int, Compiled] | None:
    """A maximum or minimum asked of a table (by its title, the heading of its labels or a row it
    names) whose numeric columns the question names none of: no value is guessed; the result, with no
    column, lists them (`statement`), where a passage search would quote the lines that share the
    question's words, its title among them."""
    candidates = measurable(sheet)
    if op == SUM or len(candidates) < 2:
        return None
    labels = [i for i in range(len(sheet.header)) if i not in sheet.numeric]
    named = any(sheet_words(sheet.header[i], languages) & asked for i in labels)
    if not (titled or named or any(len(_mentioned(sheet, question, i)) < len(sheet.rows) for i in candidates[:1])):
        return None
    among = tuple(dict.fromkeys(heading_text(sheet.header[i]) or sheet.header[i] for i in candidates))
    return 0, Compiled(op, "", 0.0, "", [], len(sheet.rows), named=False, among=among)


def _others(sheet: Sheet, row: Sequence[Cell], target: int) -> str:
    """A row's cells but the measured one, as "heading: value" ("Square: 225"): what names a row of a
    table with no column of labels."""
    return "; ".join(f"{sheet.header[i]}: {text_of(c)}" if sheet.header[i] else text_of(c)
                     for i, c in enumerate(row) if i != target and text_of(c).strip())


def compile_answer(question: str, documents: Sequence[DocumentText],
                   near: Mapping[str, float] | None = None, asked: str = "",
                   meant: Mapping[str, str] | None = None) -> list[Compiled]:
    """Each operation the question asks for, computed over the table that fits it best; [] when it
    asks for none or no table fits. `near`: the headings that mean a phrase of the question (`standout`),
    `meant`: the phrase each means (`meanings`).
    `asked`: a follow-up as the user wrote it, when `question` joins it to an earlier one ("And the
    fewest? (Which depot had the most deliveries?)"): the operations it asks for replace the earlier ones,
    which name the column and rows only."""
    ops = compared(asked) or compared(question)
    if not ops:
        return []
    results: list[Compiled] = []
    tables = [(doc, table) for doc in documents for table in document_tables(doc)]
    for op in ops:
        best: tuple[tuple[bool, int, int, tuple[int, int]], Compiled] | None = None
        for doc, table in tables:
            languages = list(dict.fromkeys([detect_language(question, default="en"), document_language(doc.items)]))
            sheets = sheets_of(table)
            for sheet in sheets:
                titled = _titled(table, question, languages)
                found = compile_over(sheet, question, op, languages, near, meant,
                                     alone=len(tables) == 1 and len(sheets) == 1, titled=titled > 0)
                if found is None:
                    continue
                # A tie: the table whose title names what the question asks about ("3.2 Products" above
                # a table headed "Sales" like the segments' one), then the period asked, or the latest, by
                # the column's heading, else by the table's name (a workbook's sheets "2021", "2022", "2023").
                fit = (bool(found[1].column), found[0], titled,
                       max(_period(found[1].column, question), _period(table.name, question)))
                if best is None or fit > best[0]:
                    best = (fit, Compiled(**{**found[1].__dict__, "document": doc.name,
                                             "source": table.source or table.name}))
        if best:
            doc = next(d for d in documents if d.name == best[1].document)
            results.append(replace(best[1], rows=as_written(best[1].rows, doc)))
    return results


def _titled(table: Table, question: str, languages: Sequence[str]) -> int:
    """How many of the question's words the table's title lines (above its header row) and its name write."""
    above = table.rows[:table.header_row or 0]
    title = " ".join([table.name, *(text_of(c) for r in above for c in r)])
    asked = sheet_words(" ".join(content_words(totalling_words(question), languages[0])), languages)
    return len(sheet_words(title, languages) & asked)


def as_written(rows: Sequence[str], doc: DocumentText) -> list[str]:
    """The rows as the document's text writes them ("Deliveries: 7,905", "Sales: (999)"), where it holds
    them, not as the typed table's numbers ("7905", "-999"): the person finds the quote in the document."""
    written: dict[tuple[str, ...], str] = {}
    for row in row_passages(with_tables(doc.items, doc.tables)):  # a sheet's row under its caption, too
        for said in (row, row.rpartition(CAPTION)[2]):
            written.setdefault(reading(said), row)
    return [written.get(reading(row), row) for row in rows]


QUOTED = 5  # rows of one result quoted and cited at most (a sum's first rows)


def figure(value: float, language: str) -> str:
    """The value as the language writes it: 1,340.5 (en), 1.340,5 (de), 1 340,5 (fr); no trailing zeros."""
    decimals = 0 if value.is_integer() else min(4, len(f"{value:.4f}".rstrip("0").split(".")[1]))
    text = f"{value:,.{decimals}f}"
    if language == "de":
        return text.replace(",", "\0").replace(".", ",").replace("\0", ".")
    if language == "fr":
        return text.replace(",", "\u202f").replace(".", ",")
    return text


def statement(result: Compiled, language: str, marks: str) -> str:
    """What was computed, in the user's language: "Lowest on_time_rate_pct: Westbrook, 82.9 [1]"."""
    if not result.column:  # no column named of several: which there are, nothing guessed
        columns = ", ".join(f"«{c}»" for c in result.among[:6]) + (", …" if len(result.among) > 6 else "")
        at = location(result.source)
        place = (say("at_page", language, at=at["page"]) if "page" in at else say("at_sheet", language, at=at["sheet"])
                 if "sheet" in at else "")
        return say("compiled_which", language, columns=columns,
                   source=", ".join(p for p in (result.document, place) if p)).strip()
    value = figure(result.value, language)
    if result.op == SUM:
        return say("compiled_sum", language, column=result.column, value=value, n=result.count, marks=marks).strip()
    text = say(f"compiled_{result.op}", language, column=result.column, label=result.label or "—", value=value,
               marks=marks).strip()
    if not result.named:  # the column was not the question's word: say which one was compared
        text = f"{say('compiled_unnamed', language, column=result.column)} {text}"
    return f"{text} {say('compiled_group', language, n=len(result.rows))}" if len(result.rows) > 1 else text
