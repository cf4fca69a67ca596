"""A document's title names the document, not a passage of it: "What is the overall status of Project
Atlas?" over the Atlas report shares "Project Atlas" with its title line, and the title passage ("Project
Atlas - Status Report Q3 2024. Prepared by ...") outranked the one that says the status (issue 50: title
and heading lines are not answers). Pure, no I/O."""

from __future__ import annotations

from collections.abc import Sequence

from agents.base import DocumentText, Passage
from agents.knowledge.retrieval import document_language
from agents.language import index_terms, query_terms

TITLE_WORDS = 16  # a first line longer than this is a sentence, not a title


def title_terms(doc: DocumentText, language: str) -> set[str]:
    """The index terms of the document's title: its first line (when short enough to be one) and its file name."""
    first = next((line.strip() for _, text in doc.items for line in text.splitlines() if line.strip()), "")
    title = first if len(first.split()) <= TITLE_WORDS else ""
    stem = doc.name.rsplit(".", 1)[0].replace("-", " ").replace("_", " ")
    return set(index_terms(f"{title} {stem}", language))


def titled_last(question: str, found: Sequence[Passage], documents: Sequence[DocumentText]) -> list[Passage]:
    """The passages, those that share with the question only words of their document's title after the
    others, when another passage shares a word beyond its title: such a passage matched the document's
    name. Passages found by meaning alone (no shared word) keep their places."""
    by_name = {d.name: d for d in documents}
    known: dict[str, tuple[str, set[str], set[str]]] = {}  # by document: its language, the question's terms, its title's

    def of(doc: DocumentText) -> tuple[str, set[str], set[str]]:
        if doc.name not in known:
            language = document_language(doc.items)
            known[doc.name] = language, set(query_terms(question, [language])), title_terms(doc, language)
        return known[doc.name]

    titled, beyond = [], False
    for p in found:
        if (doc := by_name.get(p.name)) is None:
            continue
        language, wanted, title = of(doc)
        matched = wanted & set(index_terms(f"{p.text} {p.section or ''}", language))
        if matched and matched <= title:
            titled.append(p)
        beyond = beyond or bool(matched - title)
    if not titled or not beyond:
        return list(found)
    return [p for p in found if p not in titled] + titled
