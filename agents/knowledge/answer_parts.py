"""A question that asks two things is searched, answered and cited part by part.

One search for "How much electricity did the station use, and who is the on-call technician?"
ranks first the passages of the part with the rarer words, and the answer quotes those: the other
part goes unanswered without a word (issue 50: two-part questions right 3 times in 12). Each part
(`agents.language.question_parts`) is searched on its own; the passages given to the model are the
parts' best in turn (the first of each, then the second...); each part is judged on its own passages
(`agents.knowledge.coverage`), so a part the documents do not hold is said plainly while the other is answered.
A part that names some of the documents ("what does the PDF say ..., and which number in the Excel file
...?": `agents.language.named_documents`) is searched and judged in those alone, and a part they do not
answer is said not found in those (issue 50: the PDF's part was looked for in the workbook).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from agents.base import DocumentText, Passage, Retriever
from agents.knowledge.coverage import Coverage, coverage
from agents.knowledge.retrieval import without_copies
from agents.language import named_documents, without_named_documents
from agents.toolkit.cpu import off_loop_if_long, text_size


@dataclass
class Part:
    """One part of a question, what its own search found and what of it no document writes."""

    question: str
    found: list[Passage] = field(default_factory=list)
    covered: Coverage = field(default_factory=Coverage)
    documents: list[str] = field(default_factory=list)  # the names of the documents it was searched in


def _facts(docs: list[DocumentText]) -> list[dict[str, Any]]:
    return [{"name": d.name, "ext": d.ext, "origin": d.origin, "round": d.round} for d in docs]


def named_in(question: str, docs: list[DocumentText]) -> list[DocumentText]:
    """The documents of `docs` a part of a question names, a pick among them; all of them when it names none."""
    named = set(named_documents(question, _facts(docs)))
    return [d for d in docs if d.name in named] or docs


async def search_parts(parts: list[str], docs: list[DocumentText], retriever: Retriever, k: int) -> list[Part]:
    """Each part searched on its own, in the documents it names (`named_in`), and judged on its best passages.
    A part that names its documents is searched by its other words: "the PDF", "budget.xlsx" say where to
    look, and the words of a file's name ("…-by-segment.xlsx") would rank its headings first."""
    out = []
    for question in parts:
        own = named_in(question, docs)
        size = sum(text_size(d.items) for d in own)
        query = without_named_documents(question, _facts(own)) if len(own) < len(docs) else question
        found = without_copies(await retriever.search(query or question, own, k), own, k)
        covered = await off_loop_if_long(size, coverage, query or question, own, [p.text for p in found])
        out.append(Part(question, found, covered, [d.name for d in own]))
    return out


def merged(parts: list[Part], k: int) -> list[Passage]:
    """The parts' passages in turn (each part's best first), each once, at most `k`; a part its
    documents do not answer gives none."""
    out: list[Passage] = []
    lists = [p.found for p in parts if not p.covered.unanswered]
    for rank in range(max((len(f) for f in lists), default=0)):
        for found in lists:
            if rank < len(found) and all(found[rank].text != p.text for p in out):
                out.append(found[rank])
    return out[:k]


def part_hints(parts: list[Part], found: list[Passage], hints: list[dict[str, Any]],
               quote_of: Callable[[str, Passage], str]) -> list[dict[str, Any]]:
    """For the model's request: each part's question, the number of its best passage among `hints`
    (made from `found`, in order) and that passage's sentence answering the part, or the words of it
    no document writes."""
    by_text = {p.text: h for p, h in zip(found, hints, strict=True)}
    out: list[dict[str, Any]] = []
    for part in parts:
        entry: dict[str, Any] = {"question": part.question, "absent": part.covered.unanswered,
                                 "documents": part.documents}
        best = next((p for p in part.found if p.text in by_text), None) if not part.covered.unanswered else None
        if best is not None:
            entry.update(n=by_text[best.text]["n"], quote=quote_of(part.question, best))
        elif not entry["absent"]:
            entry["absent"] = [part.question.rstrip("?")]  # nothing found for it at all
        out.append(entry)
    return out
