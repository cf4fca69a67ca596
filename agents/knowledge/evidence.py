"""An answer drawn from passages shows what it stands on: the quoted sentence of each passage it
cites (or, when it cites none, of the best ones) under it, and a note naming its figures that no
passage holds. A model's answer is kept as it wrote it; what a reader needs to check it is added.

Why: with Qwen2.5-Coder-0.5B on issue 31's held-out set, Foreman's answers took numbers from the
wrong row and said "not found" where a passage held the fact, while its citations, in the message
metadata only, showed nothing a reader could compare. Pure, no I/O.

A small model cites by position: asked in German about an English report, Qwen wrote the right date
and cited [1], a passage about a power cut, which was then quoted under it. Figures are the same in
every language, so they decide: a cited passage that holds none of the answer's figures gives way to
the one given that holds the most, and the sentence quoted is the one holding them (`attributed`).
An answer that opens by echoing a passage's heading ("[1] report.txt:") loses it.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from agents.language import split_sentences
from agents.phrases import say

_MARK = re.compile(r"\[(\d{1,2})\]")
# A figure: two digits or more, or a decimal ("12,553", "3.5", "2024"); lone digits are list numbers.
_FIGURE = re.compile(r"(?<![\w.,])\d[\d'’.,\u202f\u00a0]*\d(?![\w])|(?<![\w.,])\d[.,]\d+")
_SEPARATORS = re.compile(r"[^\d]")


def _digits(figure: str) -> str:
    return _SEPARATORS.sub("", figure.rstrip(".,"))


def figures(text: str) -> list[str]:
    """The figures a text writes, passage marks left out, in order, each once."""
    return list(dict.fromkeys(m.group(0).rstrip(".,") for m in _FIGURE.finditer(_MARK.sub(" ", text))))


def unsupported(answer: str, passages: Sequence[str]) -> list[str]:
    """The answer's figures that none of the passages writes (separators ignored: "12,553" is "12553")."""
    held = {_digits(f) for text in passages for f in figures(text)}
    held |= {m for text in passages for m in re.findall(r"\d+", text)}
    return [f for f in figures(answer) if _digits(f) not in held]


def cited_numbers(text: str, known: Sequence[int]) -> list[int]:
    """The passage numbers a text cites, in order of first mention, among those it was given."""
    return list(dict.fromkeys(n for n in (int(m) for m in _MARK.findall(text)) if n in known))


def _held(figure_set: set[str], text: str) -> int:
    """How many of the figures (as digits) the text writes."""
    return len(figure_set & ({_digits(f) for f in figures(text)} | set(re.findall(r"\d+", text))))


def attributed(answer: str, hints: Sequence[dict[str, Any]], places: Sequence[str]) -> tuple[str, list[dict[str, Any]]]:
    """The answer with its marks moved to the passages that hold its figures and without an opening
    echo of a passage's heading; the hints with each quote the sentence that holds the most of them."""
    answer = answer.strip()
    for h, place in zip(hints, places, strict=False):
        heading = f"[{h['n']}] {place}:"
        if answer.casefold().startswith(heading.casefold()):
            answer = answer[len(heading):].strip()
    wanted = {_digits(f) for f in figures(answer)}
    if not wanted:
        return answer, list(hints)
    holding = {h["n"]: _held(wanted, str(h["text"])) for h in hints}
    best = max(holding, key=lambda n: (holding[n], -n), default=0)
    cited = cited_numbers(answer, list(holding))
    if holding.get(best) and best not in cited:
        for n in cited:
            if not holding[n]:
                answer = re.sub(rf"\[{n}\]", f"[{best}]", answer)
    quoted = []
    for h in hints:
        sentences = split_sentences(str(h["text"]))
        top = max(sentences, key=lambda s: _held(wanted, s), default="")
        quoted.append({**h, "quote": top} if top and _held(wanted, top) else dict(h))
    return answer, quoted


def with_evidence(answer: str, hints: Sequence[dict[str, Any]], places: Sequence[str], language: str,
                  limit: int) -> str:
    """The answer, then each passage it cites (the first `limit` when it cites none) as its quoted
    sentence with its place and mark ("> ..." / "— report.pdf, page 3 [2]"), then the figures of the
    answer no passage holds. `places[i]` is where `hints[i]` is from."""
    answer, hints = attributed(answer, hints, places)
    cited = cited_numbers(answer, [h["n"] for h in hints])
    wanted = {_digits(f) for f in figures(answer)}
    # Citing none, the passages that hold the answer's figures are shown first.
    shown = [h for h in hints if h["n"] in cited] if cited else \
        sorted(hints, key=lambda h: -_held(wanted, str(h["text"])))[:limit]
    where = {h["n"]: place for h, place in zip(hints, places, strict=False)}
    parts = [answer.rstrip(), f"**{say('sources', language)}**"]
    for h in sorted(shown, key=lambda h: cited.index(h["n"]))[:len(cited)] if cited else shown:
        parts.append(f"> {h['quote']}\n\n— {where.get(h['n'], h['name'])} [{h['n']}]")
    # A document's name the answer repeats ("protokoll-2024-09-03.txt") holds no figure of its own.
    named = re.sub("|".join(re.escape(str(n)) for n in {h["name"] for h in hints} if n) or r"(?!)", " ", answer,
                   flags=re.IGNORECASE)
    missing = unsupported(named, [str(h["text"]) for h in hints])
    if missing:
        parts.append(f"_{say('unsupported_figures', language, figures=', '.join(missing))}_")
    return "\n\n".join(parts)
