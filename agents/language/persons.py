"""People named on a line of their own, as a byline names a document's authors: "Avram Lyon", "Andreas Gal∗+,
Brendan Eich∗, Mike Shaver∗", "Maria Jensen and Tom Berg", "Par Claire Martin", "Von Anna Keller und Jonas
Weber". Pure, no I/O: a line is read as names when every part between its commas and "and"s is two to four
capitalised words (initials and particles such as "van", "de", "von" allowed), none a function word of any
language Foreman names, so that a title ("Ideology as ritual", "LOCK DOWN CULTURE AND CONTROL CREATIVITY")
or a heading sentence is not taken for one."""

from __future__ import annotations

import re

from agents.language.words import common_words

_MARKS = re.compile(r"[∗*+#$†‡§¶¹²³⁴⁵⁶⁷⁸⁹⁰]+|(?<=[a-zà-ÿ])\d{1,2}\b")  # footnote marks after a name
# What a byline names its authors after ("by", "Von", "Par", "Author:", "Verfasst von", "Rédigé par").
BYLINE_MARKER = (r"(?:by|von|par|authors?|autor(?:in|en)?|auteurs?|autrice|verfasser(?:in)?|written\s+by|prepared\s+by"
                 r"|verfasst\s+von|erstellt\s+von|geschrieben\s+von|écrit\s+par|rédigé\s+par)")
_LEAD = re.compile(rf"^\s*{BYLINE_MARKER}\s*:?\s+", re.IGNORECASE)
_JOINS = re.compile(r"\s*(?:,|;|&|\band\b|\bund\b|\bet\b)\s*")
_PARTICLES = frozenset("van von der den de del della di da du la le ter ten zu bin al".split())
_INITIAL = re.compile(r"^[A-ZÀ-ÖØ-Þ]\.(?:-?[A-ZÀ-ÖØ-Þ]\.)*$")
_NAME_WORD = re.compile(r"^[A-ZÀ-ÖØ-Þ][a-zà-öø-ÿA-ZÀ-ÖØ-Þ'’]*(?:-[A-ZÀ-ÖØ-Þ][a-zà-öø-ÿA-ZÀ-ÖØ-Þ'’]*)*$")
# Words that make a capitalised pair an organisation or a place of work, not a person ("Mozilla Corporation").
_ORGANISATIONS = frozenset("""corporation corp inc ltd llc gmbh ag sa sarl company university universität université
    institute institut college school hochschule laboratory laboratories labs lab department ministry ministerium
    ministère foundation stiftung fondation group gruppe groupe association verein society press verlag éditions""".split())
MAX_NAMES = 20
MAX_LINE = 240


def person_names(line: str) -> list[str]:
    """The people a line names, when naming people is all it does (after an optional "by", "von", "par" or
    "Author:"); [] for any other line."""
    text = _MARKS.sub("", _LEAD.sub("", line.strip()))
    if not text or len(line) > MAX_LINE or text.endswith((".", ":", "?", "!")) and not _INITIAL.match(text.split()[-1]):
        return []
    names = [part.strip() for part in _JOINS.split(text) if part.strip()]
    if not names or len(names) > MAX_NAMES or not all(_is_name(n) for n in names):
        return []
    return names


def names_a_line(text: str) -> bool:
    """Whether a line of the text names people and nothing else, as a byline does."""
    return any(person_names(line) for line in text.splitlines())


def _is_name(part: str) -> bool:
    words = part.split()
    proper = [w for w in words if w.casefold() not in _PARTICLES]
    if not 2 <= len(proper) <= 4 or not (_NAME_WORD.match(proper[-1]) and len(proper[-1]) > 1):
        return False
    stop = common_words()
    if any(w.casefold().strip(".") in _ORGANISATIONS for w in proper):
        return False
    return all((_NAME_WORD.match(w) or _INITIAL.match(w)) and w.casefold() not in stop for w in proper)
