"""The parts of a question that asks two things or more ("How much electricity did the station use,
and who is the on-call technician?"), so each is searched, answered and cited on its own.

Issue 50: two-part questions got half an answer (3 of 12 right): one search for both parts ranks
the passages of the part with the rarer words first, and the other part goes unanswered without a
word. A question is cut where a new question begins: after a question mark, or at a conjunction or
comma followed by a question word of en/de/fr ("..., and who", "... und wann", "... et où"). The
question words are the interrogatives of each language (closed classes, like the function words);
"When and where is the meeting?" asks two things of one subject and stays whole (its first part is
too short to be a question). A part with no word of its own besides function words and words of
comparing ("..., which the lowest?", "... and why?") is read with the first part's words. Pure, no I/O.
"""

from __future__ import annotations

import re

from agents.language.compare import totalling_words
from agents.language.detect import detect_language
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
