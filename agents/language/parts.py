"""The parts of a question that asks two things or more ("How much electricity did the station use,
and who is the on-call technician?"), so each is searched, answered and cited on its own.

Issue 50: two-part questions got half an answer (3 of 12 right): one search for both parts ranks
the passages of the part with the rarer words first, and the other part goes unanswered without a
word. A question is cut where a new question begins: after a question mark, or at a conjunction or
comma followed by a question word of en/de/fr ("..., and who", "... und wann", "... et où"). The
question words are the interrogatives of each language (closed classes, like the function words);
"When and where is the meeting?" asks two things of one subject and stays whole (its first part is
too short to be a question). A part with no word of its own besides function words and words of
comparing ("..., which the lowest?", "... and why?") is read with the first part's words.

A request's parts may name different documents ("Résume le Word et donne le tableau Excel en CSV",
"Was steht im PDF ..., und welche Zahl hat die Excel-Datei ...?"): `documents_by_part` cuts it into its
pieces of work, each with what it asks for and the documents it names, so each reads its own (issue 50:
both were read for both, and the PDF's question was searched in the workbook alone). Pure, no I/O.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from agents.language.compare import totalling_words
from agents.language.detect import detect_language
from agents.language.intents import Intent, detect_intents
from agents.language.references import named_documents, without_document_nouns, without_named_kinds
from agents.language.words import function_words, tokens

_ASKING = (r"who|whom|whose|what|when|where|which|why|how|is|are|does|do|did|can"
           r"|wer|wen|wem|wessen|was|wann|wo|woher|wohin|welche[nmrs]?|warum|weshalb|wie|gibt"
           r"|qui|que|quoi|quand|où|quel|quelle|quels|quelles|lequel|laquelle|pourquoi|comment|combien|est-ce")
_CUT = re.compile(rf"(?:\?\s+|[,;]\s*(?:(?:and|und|et|sowie|also|aussi)\s+)?|\s+(?:and|und|et)\s+)(?=(?:{_ASKING})\b)",
                  re.IGNORECASE)
_END = re.compile(r"(?<=\?)\s+")
_ASKS = re.compile(rf"\W*(?:(?:and|und|et|also|aussi)\s+)?(?:{_ASKING})\b", re.IGNORECASE)
MIN_WORDS = 3  # a first part shorter than this asks with the next of one subject ("When and where is ...")


def _asking(question: str) -> list[str]:
    # A sentence after a question that asks nothing ("... ? Answer in English.", "... ? Cite the page.") is
    # an instruction about the answer, not a part to search and say "not found" for.
    return [c for n, c in enumerate(_END.split(question.strip())) if n == 0 or _ASKS.match(c) or c.rstrip().endswith("?")]


def without_instructions(question: str) -> str:
    """The question without the sentences after it that ask nothing ("Answer in English.", "Bitte mit Quelle.")."""
    return " ".join(_asking(question))


def question_parts(question: str) -> list[str]:
    """The question's parts, each a question of its own, in order; [question] when it asks one thing."""
    chunks = _asking(question)
    pieces = [p.strip(" ,;") for chunk in chunks for p in _CUT.split(chunk)]
    pieces = [p for p in pieces if p]
    if len(pieces) >= 2 and not _ASKS.match(pieces[0]) and without_document_nouns(pieces[0]) != pieces[0]:
        # A lead-in that points at the documents and asks nothing ("According to this article, how many ...",
        # "Laut diesem Artikel, wie viele ...") says where to look: it belongs to the question after it.
        pieces = [f"{pieces[0]}, {pieces[1]}", *pieces[2:]]
    if len(pieces) < 2:
        return [question.strip()]
    if len(tokens(pieces[0])) < MIN_WORDS:
        return [question.strip()]
    first = pieces[0].rstrip("?")
    function = function_words(detect_language(question, default="en"))
    parts = [pieces[0]]
    for piece in pieces[1:]:
        own = [w for w in tokens(totalling_words(piece)) if w.casefold() not in function]
        parts.append(piece if own else f"{piece.rstrip('?')} ({first})")
    return [(p if p.endswith("?") else f"{p}?")[:1].upper() + (p if p.endswith("?") else f"{p}?")[1:] for p in parts]


# Where a request's next piece of work or question may begin: a sentence's end, a semicolon, a comma,
# a conjunction ("and", "und", "et", "then", "puis", "dann"). A piece that asks for nothing itself ("the
# PDF and the Excel", a relative clause) belongs to the one before it (the first one to the next).
_AND = r"(?:and|und|et|then|puis|dann|sowie|ensuite|danach)"
_PIECE = re.compile(rf"(?:(?<=[.!?])\s+|\s*[;,]\s*|\s+(?={_AND}\s))(?:{_AND}\s+)*", re.IGNORECASE)


@dataclass(frozen=True)
class RequestPart:
    """One piece of a request: its words, what it asks for and the documents it names."""

    text: str
    intents: tuple[Intent, ...]
    documents: tuple[str, ...]


def documents_by_part(prompt: str, facts: Sequence[Mapping[str, Any]], has_tables: bool = False) -> list[RequestPart]:
    """The request's pieces of work in order, each with its intents (`detect_intents`) and the documents
    it names (`named_documents` over `facts`), when two of them name different documents; else []: the
    request is about the documents it names as a whole."""
    cuts = [0, *(n for m in _PIECE.finditer(prompt) for n in (m.start(), m.end())), len(prompt)]
    pieces = [(a, b) for a, b in zip(cuts[::2], cuts[1::2], strict=True) if prompt[a:b].strip(" .,;")]
    # What it asks for, not the kinds of document it names: "and the Excel" asks for no table. A piece asks
    # only for what the whole request asks for: "a report on the survey and the harvest figures" asks for
    # no table in its second piece, whose "figures" alone would.
    asked = detect_intents(without_named_kinds(prompt, facts), has_tables)
    merged: list[tuple[int, int, tuple[Intent, ...]]] = []  # start, end, intents
    begin: int | None = None  # where pieces that ask for nothing yet began
    for a, b in pieces:
        a = a if begin is None else begin
        own = detect_intents(without_named_kinds(prompt[a:b], facts), has_tables)
        if not own and _ASKS.match(prompt[a:b]):  # "Que dit le PDF ...": a question word opens it
            own = ["answer"]
        intents = tuple(i for i in own if i in asked)
        if intents:
            merged.append((a, b, intents))
            begin = None
        elif merged:
            merged[-1] = (merged[-1][0], b, merged[-1][2])
        else:
            begin = a
    parts = [RequestPart(prompt[a:b].strip(), intents, tuple(named_documents(prompt[a:b], facts)))
             for a, b, intents in merged]
    naming = {p.documents for p in parts if p.documents}
    return parts if len(naming) > 1 else []
