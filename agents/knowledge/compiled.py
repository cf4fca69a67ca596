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
  in another language ("Umsatz" over a heading "Sales"), when the caller can tell (`asked_measures`,
  `standout`: the vectors of cross-language retrieval); else the table's one numeric column that is
  not a year;
- the rows the question means: a value the question names ("in 2024", "Arcadia") keeps the rows
  that have it in that column;
- the label: the column the question names that is not the measured one ("which variety"), else
  the first column of words; a label that repeats (a ledger's months) is summed per label first;
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
from agents.knowledge.blocks import blocks
from agents.knowledge.blocks import value as _value
from agents.knowledge.passages import CAPTION, row_passage, row_passages, with_tables
from agents.knowledge.retrieval import document_language, reading
from agents.language import (
    DATE,
    MAX,
    PRICE,
    SUM,
    asked_kind,
    compared,
    content_words,
    detect_language,
    holds,
    stems,
    tokens,
    totalling_words,
)
from agents.phrases import say
from agents.toolkit.tables import document_tables
from extractors.tables import Cell, Table, text_of

ROWS = 2_000  # rows of one table read at most (a sheet beyond that is a dataset, not a question's table)
# A heading means what a phrase of the question means when its cosine with it (USE's vectors,
# `agents.knowledge.embeddings.word_embedder`) is at least LIKE and STANDOUT above the next heading's:
# measured on headings and words of our own, "Umsatz"/"Sales" 0.681 (next 0.436), "Beschäftigten"/
# "Employees" 0.794 (next 0.454), "chiffre d'affaires"/"Sales" 0.524 (next 0.498), "Betriebsergebnis"/
# "Operating profit" 0.700 (next 0.558), while a word naming no heading ("Welches", "hatte", "élevé") is
# 0.05-0.35 with all of them.
LIKE, STANDOUT = 0.45, 0.02
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


def _words(text: str, languages: Sequence[str]) -> set[str]:
    """The stems of a heading's or question's words, numbers and dates left out: a column headed
    "January–June 2023" is a period, which a question names to choose its rows, not its measure."""
    words = [w.casefold() for w in tokens(text.replace("_", " ")) if not w.isdigit() and not holds(DATE, w)]
    return {s for language in languages for s in stems(words, language)}


def _is_year(values: Sequence[float]) -> bool:
    return bool(values) and all(v.is_integer() and 1800 <= v <= 2100 for v in values)


@dataclass
class _Sheet:
    header: list[str]
    rows: list[list[Cell]]
    numeric: list[int]  # columns mostly numbers


def _sheets(table: Table) -> list[_Sheet]:
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
        data = [r for r in rows if any(_value(c) is not None for c in r)]  # not the notes under a table
        numeric = [i for i in range(width) if 2 * sum(_value(r[i]) is not None for r in data) > len(data)]
        found.append(_Sheet(header, rows, numeric))
    return found


def _candidates(sheet: _Sheet) -> list[int]:
    """The numeric columns that may be measured: not a column of years."""
    return [i for i in sheet.numeric if not _is_year([v for r in sheet.rows if (v := _value(r[i])) is not None])]


def _column(sheet: _Sheet, question: str, asked: set[str], languages: Sequence[str], price: bool, op: str,
            near: Mapping[str, float]) -> int | None:
    """The measured column: its heading's words in the question; else the heading that means a word of
    the question (`near`); else one that is not a year."""
    def score(i: int) -> tuple[int, float, int]:
        cells = " ".join(f"{sheet.header[i]}: {text_of(r[i])}" for r in sheet.rows[:5])
        return (len(_words(sheet.header[i], languages) & asked), near.get(heading_text(sheet.header[i]), 0.0),
                int(price and holds(PRICE, cells)))
    candidates = _candidates(sheet)
    if not candidates:
        return None
    def unasked(i: int) -> int:  # "Trading operating profit" asked: not "Underlying trading operating profit"
        return len(_words(heading_text(sheet.header[i]), languages) - asked)
    best = max(candidates, key=lambda i: (score(i), -unasked(i), _period(sheet.header[i], question),
                                          -candidates.index(i)))
    if score(best) > (0, 0, 0):
        return best
    if len(candidates) == 1 and op != SUM:
        return candidates[0]
    return _row_total(sheet, candidates)


def _row_total(sheet: _Sheet, candidates: Sequence[int]) -> int | None:
    """The column that adds up the others in every row (a "Total" of the quarters, however it is headed):
    the whole of each row's measure, what a question naming no column asks about ("the highest sales in
    2023" over a sheet of quarters and their total). Found by the numbers, not by the heading's words."""
    rows = [r for r in sheet.rows if all(_value(r[i]) is not None for i in candidates)]
    if len(rows) < 2 or len(candidates) < 3:
        return None
    def adds_up(row: list[Cell], i: int) -> bool:
        whole = _value(row[i]) or 0.0
        return abs(sum(_value(row[j]) or 0.0 for j in candidates if j != i) - whole) <= 0.005 * max(abs(whole), 1.0)

    return next((i for i in candidates if all(adds_up(r, i) for r in rows)), None)


def _period(heading: str, question: str) -> tuple[int, int]:
    """Of two columns or blocks of one measure ("H1 2023 Sales", "H1 2024 Sales"): the period the
    question names first, else the latest."""
    years = {int(y) for y in re.findall(r"\b(?:19|20)\d\d\b", heading)}
    said = {int(y) for y in re.findall(r"\b(?:19|20)\d\d\b", question)}
    return int(bool(years & said)), max(years, default=0)


def _mentioned(sheet: _Sheet, question: str, target: int) -> list[list[Cell]]:
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


def _label(sheet: _Sheet, asked: set[str], languages: Sequence[str], target: int) -> int | None:
    """The column the question names by a word that is not the measured column's ("which year"), else
    the first column of words."""
    words = [i for i in range(len(sheet.header)) if i != target and i not in sheet.numeric]
    other = asked - _words(sheet.header[target], languages)
    named = [i for i in words + [i for i in sheet.numeric if i != target]
             if _words(sheet.header[i], languages) & other]
    return next(iter(named or words), None)


def compile_over(sheet: _Sheet, question: str, op: str, languages: Sequence[str],
                 near: Mapping[str, float] | None = None) -> tuple[int, Compiled] | None:
    """(how well the table fits the question, the result) for one operation over one table; `near`:
    the headings (`heading_text`) that mean a phrase of the question in another language, with the cosine."""
    # A heading matched by meaning alone chooses the column of a maximum or minimum, not of a sum: a sum
    # is a table's own total row more often than not, which the passage search finds by its words.
    near = (near or {}) if op != SUM else {}
    asked = _words(" ".join(content_words(totalling_words(question), languages[0])), languages)
    target = _column(sheet, question, asked, languages, asked_kind(question) == PRICE, op, near)
    if target is None:
        return None
    mentioned = _mentioned(sheet, question, target)
    rows = [r for r in mentioned if _value(r[target]) is not None]
    if op == SUM and any(_is_total(r) for r in rows):
        return None  # the table writes its own total: that row is the answer, as a passage search finds it
    rows = [r for r in rows if not _is_total(r)]  # a "Total" row is no zone, month or item of the table
    if len(rows) < 2:
        return None
    label = _label(sheet, asked, languages, target)
    named_label = label is not None and bool(_words(sheet.header[label], languages) & asked
                                             - _words(sheet.header[target], languages))
    headed = len(_words(sheet.header[target], languages) & asked) + (heading_text(sheet.header[target]) in near)
    if not headed and not named_label and target == _row_total(sheet, _candidates(sheet)):
        return None  # a row total measured, and the rows not named: "which quarter" asks across the columns
    fit = headed + (len(mentioned) < len(sheet.rows)) + named_label
    if not fit:  # "the most important finding" names nothing of this table: no table question
        return None
    passages = {id(r): row_passage("", sheet.header, [text_of(c) for c in r]) for r in rows}
    if op == SUM:
        total = sum(_value(r[target]) or 0.0 for r in rows)
        return fit, Compiled(op, sheet.header[target], total, "", [passages[id(r)] for r in rows], len(rows))
    groups: dict[str, list[list[Cell]]] = {}
    for r in rows:
        groups.setdefault(text_of(r[label]) if label is not None else "", []).append(r)
    sums = {name: sum(_value(r[target]) or 0.0 for r in group) for name, group in groups.items()}
    pick = max if op == MAX else min
    name = pick(sums, key=lambda n: sums[n])
    if op == MAX and _sums_the_rest(sums, name):  # an unlabelled total row: the largest, and no zone or item
        del sums[name]
        name = pick(sums, key=lambda n: sums[n])
    return fit, Compiled(op, sheet.header[target], sums[name], name, [passages[id(r)] for r in groups[name]],
                         len(rows))


def compile_answer(question: str, documents: Sequence[DocumentText],
                   near: Mapping[str, float] | None = None, asked: str = "") -> list[Compiled]:
    """Each operation the question asks for, computed over the table that fits it best; [] when it
    asks for none or no table fits. `near`: the headings that mean a phrase of the question (`standout`).
    `asked`: a follow-up as the user wrote it, when `question` joins it to an earlier one ("And the
    fewest? (Which depot had the most deliveries?)"): the operations it asks for replace the earlier ones,
    which name the column and rows only."""
    ops = compared(asked) or compared(question)
    if not ops:
        return []
    results: list[Compiled] = []
    for op in ops:
        best: tuple[tuple[int, tuple[int, int]], Compiled] | None = None
        for doc in documents:
            languages = list(dict.fromkeys([detect_language(question, default="en"), document_language(doc.items)]))
            for table in document_tables(doc):
                for sheet in _sheets(table):
                    found = compile_over(sheet, question, op, languages, near)
                    if found is None:
                        continue
                    # A tie: the period asked, or the latest, by the column's heading, else by the table's
                    # name (a workbook's sheets "2021", "2022", "2023").
                    fit = (found[0], max(_period(found[1].column, question), _period(table.name, question)))
                    if best is None or fit > best[0]:
                        best = (fit, Compiled(**{**found[1].__dict__, "document": doc.name,
                                                 "source": table.source or table.name}))
        if best:
            doc = next(d for d in documents if d.name == best[1].document)
            results.append(replace(best[1], rows=as_written(best[1].rows, doc)))
    return results


def as_written(rows: Sequence[str], doc: DocumentText) -> list[str]:
    """The rows as the document's text writes them ("Deliveries: 7,905", "Sales: (999)"), where it holds
    them, not as the typed table's numbers ("7905", "-999"): the person finds the quote in the document."""
    written: dict[tuple[str, ...], str] = {}
    for row in row_passages(with_tables(doc.items, doc.tables)):  # a sheet's row under its caption, too
        for said in (row, row.rpartition(CAPTION)[2]):
            written.setdefault(reading(said), row)
    return [written.get(reading(row), row) for row in rows]


def heading_text(heading: str) -> str:
    """A heading's words that name a measure: no units in brackets, numbers or dates ("H1 2024 Sales
    (EUR m)" is "Sales")."""
    bare = re.sub(r"\([^)]*\)|\[[^\]]*\]", " ", heading.replace("_", " "))
    return " ".join(w for w in tokens(bare) if not any(ch.isdigit() for ch in w) and not holds(DATE, w))


def asked_measures(question: str, documents: Sequence[DocumentText]) -> tuple[list[str], list[str]]:
    """What a question may name its measure with in another language than the tables' headings: (its
    phrases: each content word that no heading or cell of the tables writes, and runs of such words
    as the question writes them, "chiffre d'affaires"; the `heading_text` of the tables' numeric
    columns). ([], []) when it compares nothing, or a numeric heading already shares a word with it."""
    if not compared(question):
        return [], []
    language = detect_language(question, default="en")
    headings: list[str] = []
    written: set[str] = set()
    for doc in documents:
        languages = [language, document_language(doc.items)]
        for sheet in (sheet for table in document_tables(doc) for sheet in _sheets(table)):
            asked = _words(" ".join(content_words(totalling_words(question), language)), languages)
            if any(_words(sheet.header[i], languages) & asked for i in _candidates(sheet)):
                return [], []
            headings += [heading_text(sheet.header[i]) for i in _candidates(sheet)]
            cells: list[Sequence[Cell]] = [sheet.header, *sheet.rows]
            written |= {w.casefold() for r in cells for c in r for w in tokens(text_of(c))}
    headings = [h for h in dict.fromkeys(headings) if h]
    rest = totalling_words(question)
    kept = [m for m in re.finditer(r"[^\W_]+", rest)
            if m.group() in content_words(m.group(), language) and m.group().casefold() not in written
            and not m.group().isdigit()]
    phrases = [m.group() for m in kept]
    for a, b in zip(kept, kept[1:], strict=False):
        if b.start() - a.end() <= 3 and "  " not in rest[a.end():b.start()]:  # "chiffre d'affaires": one phrase
            phrases.append(rest[a.start():b.end()])
    return (list(dict.fromkeys(phrases)), headings) if headings and phrases else ([], [])


def standout(phrases: Sequence[str], headings: Sequence[str], cosines: Sequence[Sequence[float]]) -> dict[str, float]:
    """The headings that mean a phrase of the question, with their cosine: for some phrase, it is at
    least LIKE and STANDOUT above every other heading's (`cosines[p][h]`, phrase by heading)."""
    found: dict[str, float] = {}
    for _, row in zip(phrases, cosines, strict=True):
        order = sorted(range(len(headings)), key=lambda h: -row[h])
        if order and row[order[0]] >= LIKE and (len(order) == 1 or row[order[0]] - row[order[1]] >= STANDOUT):
            found[headings[order[0]]] = max(row[order[0]], found.get(headings[order[0]], 0.0))
    return found


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
    value = figure(result.value, language)
    if result.op == SUM:
        return say("compiled_sum", language, column=result.column, value=value, n=result.count, marks=marks).strip()
    text = say(f"compiled_{result.op}", language, column=result.column, label=result.label or "—", value=value,
               marks=marks).strip()
    return f"{text} {say('compiled_group', language, n=len(result.rows))}" if len(result.rows) > 1 else text
