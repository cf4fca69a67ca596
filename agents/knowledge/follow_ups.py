"""A question read as a follow-up of the ones before it: "And what was it in 2022?" asks about what
the question before it named, with a new number ("Und 2024?" after a question about 2023)."""

from __future__ import annotations

import re

from agents.base import DocumentText, Passage, Retriever
from agents.knowledge.memory import previous_requests
from agents.language import detect_language, index_terms, refers_back

FOLLOWED = 3  # earlier requests a follow-up question may lean on
_NUMBER = re.compile(r"\d+(?:[.,]\d+)*")


async def follow_up(question: str, found: list[Passage], docs: list[DocumentText], history: list[tuple[str, str]],
                    retriever: Retriever, passages: int) -> tuple[str, list[Passage]]:
    """A question read as a follow-up when its own words find nothing or when it goes on by a
    pronoun: "And what was it in 2022?" asks about the total sales the one before asked for. Their words join the question, the
    newest first, until passages are found; else the question as asked, with what it found."""
    asked = question
    earlier_requests = previous_requests(history, FOLLOWED)
    numbered = bool(_NUMBER.search(question))
    for n, earlier in enumerate(earlier_requests, 1):
        if numbered:  # "And of 9?", "Et en 2022 ?": the newest number asked replaces those before it
            earlier = _NUMBER.sub(" ", earlier)
        numbered = numbered or bool(_NUMBER.search(earlier))
        asked = f"{asked} ({earlier})"
        if refers_back(earlier) and n < len(earlier_requests):
            continue  # it went on from the one before it, which named what both ask about
        if more := await retriever.search(asked, docs, passages * 3):
            return asked, numbers_first(question, own_words_first(question, more))[:passages]
    return question, found


def own_words_first(question: str, found: list[Passage]) -> list[Passage]:
    """The passages that hold more of the follow-up's own words first, the search's order kept among equals:
    searched with the earlier question's words too, "And what does Havel call that function?" found the
    passage the earlier question asked about first (its words outweighed the follow-up's own)."""
    language = detect_language(question, default="en")
    own = set(index_terms(question, language))
    if not own:
        return found
    held = [len(own & set(index_terms(p.text, language))) for p in found]
    return [found[i] for i in sorted(range(len(found)), key=lambda i: -held[i])]


def numbers_first(question: str, found: list[Passage]) -> list[Passage]:
    """The passages that write every number the question asks about first, in their order: "And in
    2024?" after a question about 2023 is searched with that question's words, which the 2023
    passages hold as well (issue 50: the same quotes came back, 2023 first). A row is in its sheet: the
    croissants row of the sheet named 2024 writes 2024."""
    wanted = set(_NUMBER.findall(question))
    if not wanted:
        return found
    holding = [p for p in found if wanted <= set(_NUMBER.findall(" ".join(filter(None, (p.text, p.sheet, p.section)))))]
    return holding + [p for p in found if p not in holding]
