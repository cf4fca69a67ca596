"""What a question asks to compile over a table: the highest, the lowest, the total (en/de/fr).

"Which month had the highest total in 2024, which the lowest?" asks for a maximum and a minimum of
a column; "Wie viel wurde insgesamt ausgegeben?" for a sum. A passage search answers such questions
with the rows that share the question's words, not with the row that holds the maximum (issue 50:
superlatives were never right, 0 of 5); `agents.knowledge.compiled` computes them instead.

The words are superlatives and words of totalling, not phrasings of one question: English "-est"
and "most/least", German "-ste(n)" forms and "am ...sten", French "le/la/les plus/moins". A word of
the lowest ("plus bas", "moins cher") is read before "le plus", so "la plus basse" is a minimum.
When a maximum or minimum is asked, "total" names the column ("the highest total"), not a sum.
A question may also ask for what came after a row of an ordered table ("What came after the move to
Hall 2?", "Was kam nach dem Umzug?", "Qu'est-ce qui a suivi l'installation ?"): `asks_after`. A bare
"next" ("the next meeting") names no row to go on from, and German "nach" only with an article
("nach dem Umzug", not "Umzug nach Halle 2"). Pure, no I/O.
"""

from __future__ import annotations

import re

MAX, MIN, SUM = "max", "min", "sum"

_MIN = re.compile(
    r"\b(?:lowest|smallest|least|fewest|minimum|cheapest|worst|shortest|lightest|slowest|poorest"
    r"|niedrigste[nmrs]?|kleinste[nmrs]?|wenigste[nmrs]?|billigste[nmrs]?|günstigste[nmrs]?|geringste[nmrs]?"
    r"|schlechteste[nmrs]?|kürzeste[nmrs]?|am niedrigsten|am wenigsten|am günstigsten|am billigsten"
    r"|(?:le|la|les) moins(?: \w+)?|plus (?:bas|basse|basses|faibles?|petite?s?|courte?s?)|moins cher|moins chère"
    r"|minimale?s?|minimum)\b",
    re.IGNORECASE,
)
_MAX = re.compile(
    r"\b(?:highest|largest|biggest|greatest|most|maximum|best|longest|heaviest|fastest|top"
    r"|höchste[nmrs]?|größte[nmrs]?|meiste[nmrs]?|teuerste[nmrs]?|beste[nmrs]?|längste[nmrs]?|stärkste[nmrs]?"
    r"|am höchsten|am meisten|am teuersten|am besten"
    r"|(?:(?:le|la|les) )?plus (?:élevée?s?|grande?s?|haute?s?|forte?s?)|(?:le|la|les) plus|meilleure?s?|maximale?s?"
    r"|maximum)\b",
    re.IGNORECASE,
)
_SUM = re.compile(
    r"\b(?:total|totals|sum|altogether|in all|combined|insgesamt|gesamt\w*|summe|zusammen"
    r"|au total|en tout|somme|cumulée?s?)\b",
    re.IGNORECASE,
)


_AFTER = re.compile(
    r"\b(?:after|afterwards|followed|succeeded"
    r"|nach (?:dem|der|den|einem|einer)|danach|folgte|gefolgt|darauf folgende[nmrs]?"
    r"|après|ensuite|(?:a|ont|avait) suivi|succédé)\b",
    re.IGNORECASE,
)


def asks_after(question: str) -> bool:
    """Whether the question asks for what came after something it names (the row after it)."""
    return bool(_AFTER.search(question))


def without_after(question: str) -> str:
    """The question without its words of order: what is left names the row to go on from."""
    return _AFTER.sub(" ", question)


def _operations(question: str) -> list[tuple[tuple[int, int], str]]:
    """Where the question's words of comparing stand and what each asks (MIN, MAX; a "lowest" is not also
    read as a "highest"), in order; its words of totalling (SUM) when it compares nothing."""
    rest = _MIN.sub(lambda m: " " * (m.end() - m.start()), question)
    found = [(m.span(), MIN) for m in _MIN.finditer(question)] + [(m.span(), MAX) for m in _MAX.finditer(rest)]
    return sorted(found) or [(m.span(), SUM) for m in _SUM.finditer(question)]


def compared(question: str) -> list[str]:
    """The operations the question asks for, in the order it asks them (MAX, MIN, SUM), each once;
    [] when it asks for none."""
    return list(dict.fromkeys(op for _, op in _operations(question)))


def comparing_spans(question: str) -> list[tuple[int, int]]:
    """Where the question's words of comparing stand (character spans), or of totalling when it
    compares nothing: the measure is named next to them ("the largest square", "le carré le plus
    grand"), the rows further off ("which number")."""
    return [span for span, _ in _operations(question)]


def totalling_words(question: str) -> str:
    """The question without its words of comparing and totalling: what is left names the column and rows."""
    return _SUM.sub(" ", without_comparing(question))


def without_comparing(question: str) -> str:
    """The question without its words of comparing ("the lowest", "le plus élevé"): they ask for an
    operation, not for something a document writes. Totalling words stay ("Gesamtumsatz" names a figure)."""
    return _MAX.sub(" ", _MIN.sub(" ", question))
