"""What a question may name a table's measure with in another language than its headings ("Umsatz"
over a heading "Sales"): the phrases to compare, and the headings whose vectors stand out for one of
them (`agents.knowledge.compiled` measures the column so named). Pure, no I/O."""

from __future__ import annotations

import re
from collections.abc import Sequence

from agents.base import DocumentText
from agents.knowledge.retrieval import document_language
from agents.knowledge.sheets import heading_text, measurable, sheet_words, sheets_of
from agents.language import compared, content_words, detect_language, tokens, totalling_words
from agents.toolkit.tables import document_tables
from extractors.tables import Cell, text_of

# A heading means what a phrase of the question means when its cosine with it (USE's vectors,
# `agents.knowledge.embeddings.word_embedder`) is at least LIKE and STANDOUT above the next heading's:
# measured on headings and words of our own, "Umsatz"/"Sales" 0.681 (next 0.436), "Beschäftigten"/
# "Employees" 0.794 (next 0.454), "chiffre d'affaires"/"Sales" 0.524 (next 0.498), "Betriebsergebnis"/
# "Operating profit" 0.700 (next 0.558), while a word naming no heading ("Welches", "hatte", "élevé") is
# 0.05-0.35 with all of them.
LIKE, STANDOUT = 0.45, 0.02


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
        for sheet in (sheet for table in document_tables(doc) for sheet in sheets_of(table)):
            asked = sheet_words(" ".join(content_words(totalling_words(question), language)), languages)
            if any(sheet_words(sheet.header[i], languages) & asked for i in measurable(sheet)):
                return [], []
            headings += [heading_text(sheet.header[i]) for i in measurable(sheet)]
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
    return {heading: like for heading, (like, _) in meanings(phrases, headings, cosines).items()}


def meanings(phrases: Sequence[str], headings: Sequence[str],
             cosines: Sequence[Sequence[float]]) -> dict[str, tuple[float, str]]:
    """`standout`'s headings, each with its cosine and the phrase of the question it means ("Zahl" for
    "Number"): where the question names it tells the measure from the rows (`_distance`)."""
    found: dict[str, tuple[float, str]] = {}
    for phrase, row in zip(phrases, cosines, strict=True):
        order = sorted(range(len(headings)), key=lambda h: -row[h])
        if (order and row[order[0]] >= LIKE and (len(order) == 1 or row[order[0]] - row[order[1]] >= STANDOUT)
                and row[order[0]] > found.get(headings[order[0]], (0.0, ""))[0]):
            found[headings[order[0]]] = (row[order[0]], phrase)
    return found
