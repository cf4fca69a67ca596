"""A question set over the shared corpus: questions in en/de/fr, each with the document and the fact
that answers it, asked of groups of four documents (the other three are distractors).

Used by tests/core/test_question_set.py (the offline analyst over HTTP) and bench/quality.py.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

GROUPS: dict[str, list[str]] = {
    "A": ["docx_comments.docx", "sample-french-1.txt", "stanley-cups.tsv", "google-doc-document.pdf"],
    "B": ["tracemonkey.pdf", "ideas-page.html", "2023-half-year-analyses-by-segment.xlsx", "fake-html-cp1252.html"],
    "C": ["powerpoint_sample.pptx", "testWORD_various.docx", "testCSV.csv", "example-docs-README.md"],
}


@dataclass(frozen=True)
class Question:
    group: str
    language: str
    question: str
    document: str  # the file that answers it
    fact: str  # what the answer must contain (compared case- and space-insensitively)
    source_fact: str = ""  # the fact as the document's own text writes it, when the answer adds headings
    first: bool = False  # the fact must be in the first passage quoted (it is one of several alike)


QUESTIONS: list[Question] = [
    Question("A", "en", "What did John Reviewer comment?", "docx_comments.docx",
             "sample reviewer comment on the first paragraph"),
    Question("A", "de", "Was hat Jane Editor kommentiert?", "docx_comments.docx",
             "Another comment by a different reviewer"),
    Question("A", "fr", "Quand Molière est-il né ?", "sample-french-1.txt", "15 janvier 1622"),
    Question("A", "fr", "Qui a publié l'édition de ses œuvres en 1682 ?", "sample-french-1.txt", "Lagrange"),
    Question("A", "fr", "Selon Boileau, quel est le plus grand des écrivains du règne de Louis XIV ?",
             "sample-french-1.txt", "c'est Molière"),
    Question("A", "en", "How many Stanley Cups do the Maple Leafs have?", "stanley-cups.tsv", "Team: Maple Leafs; Location: TOR; Stanley Cups: 13",
             "Maple Leafs TOR 13"),
    Question("A", "de", "Wie viele Stanley Cups haben die Flyers?", "stanley-cups.tsv", "Team: Flyers; Location: PHI; Stanley Cups: 2",
             "Flyers PHI 2"),
    Question("A", "en", "Is explicit better than implicit?", "google-doc-document.pdf",
             "Explicit is better than implicit"),
    Question("A", "en", "What should errors never do?", "google-doc-document.pdf", "Errors should never pass silently"),
    Question("B", "en", "What speedup does the tracing VM achieve over SpiderMonkey?", "tracemonkey.pdf", "2x-20x"),
    Question("B", "en", "Which web browser embeds the SpiderMonkey JavaScript VM?", "tracemonkey.pdf", "Firefox"),
    Question("B", "en", "Where is the best place to look for anomalies?", "ideas-page.html", "frontiers of knowledge"),
    Question("B", "en", "How does knowledge grow?", "ideas-page.html", "Knowledge grows fractally"),
    Question("B", "de", "Was hat die schöne Frau gegessen?", "fake-html-cp1252.html", "Kaffee mit Kuchen"),
    Question("B", "de", "Wie viel betrug der Preis, den die schöne Frau bezahlt hat?", "fake-html-cp1252.html",
             "15,50 €"),
    Question("B", "fr", "Combien a coûté le café au lait ?", "fake-html-cp1252.html", "3,50 €"),
    Question("B", "fr", "Comment était l'été cette année ?", "fake-html-cp1252.html", "L'été était très chaud"),
    Question("B", "en", "What were the sales of Zone NA from January to June 2023?",
             "2023-half-year-analyses-by-segment.xlsx", "12,553"),
    Question("C", "en", "What notes are on the second slide?", "powerpoint_sample.pptx", "Some notes on the second slide"),
    Question("C", "en", "What does the footnote say?", "testWORD_various.docx", "This is a footnote"),
    Question("C", "en", "What is the header text?", "testWORD_various.docx", "This is the header text"),
    Question("C", "en", "Which file is a 10-K SEC filing?", "example-docs-README.md", "example-10k.html"),
    Question("C", "de", "Was ist example-10k.html?", "example-docs-README.md", "10-K SEC filing"),
    Question("C", "fr", "Qu'est-ce que layout-parser-paper.pdf ?", "example-docs-README.md", "layout parser paper"),
    Question("C", "en", "In which software was the CSV file of numbers and squares written?", "testCSV.csv",
             "Apache OpenOffice"),
    # Superlatives over a table: the row with the extreme value of the named column, quoted first.
    Question("A", "en", "Which team has the most Stanley Cups?", "stanley-cups.tsv",
             "Team: Maple Leafs; Location: TOR; Stanley Cups: 13", "Maple Leafs TOR 13", first=True),
    Question("A", "fr", "Quelle équipe a le moins de Stanley Cups ?", "stanley-cups.tsv",
             "Team: Blues; Location: STL; Stanley Cups: 1", "Blues STL 1", first=True),
    Question("B", "en", "Which zone had the highest sales in the first half of 2023?",
             "2023-half-year-analyses-by-segment.xlsx", "Zone NA; Sales (a): 12,553", "Zone NA 12,553", first=True),
    Question("B", "en", "Which zone had the lowest underlying trading operating profit in 2023?",
             "2023-half-year-analyses-by-segment.xlsx", "Zone GC; Sales (a): 2,548", "Zone GC 2,548", first=True),
    # The question's word for it is not the table's: revenue, Umsatz, ventes are the "Sales" column.
    Question("B", "en", "What was the total revenue in the first half of 2023?",
             "2023-half-year-analyses-by-segment.xlsx", "January–June 2023 — Total; Sales: 46,293", first=True),
    Question("B", "de", "Wie hoch war der Umsatz insgesamt im ersten Halbjahr 2023?",
             "2023-half-year-analyses-by-segment.xlsx", "January–June 2023 — Total; Sales: 46,293", first=True),
    Question("B", "fr", "Quel était le total des ventes au premier semestre 2023 ?",
             "2023-half-year-analyses-by-segment.xlsx", "January–June 2023 — Total; Sales: 46,293", first=True),
]


def _norm(text: str) -> str:
    return " ".join(re.sub(r"[`*_>]", " ", text).replace("’", "'").casefold().split())


def correct(question: Question, answer: str, cited: list[str], first_quote: str = "") -> bool:
    """The answer contains the fact (in its first quote, when the question says so), and the first
    file it cites is the right one."""
    where = first_quote if question.first else answer
    return _norm(question.fact) in _norm(where) and bool(cited) and cited[0] == question.document


def keyword_baseline(question: Question, texts: dict[str, str]) -> bool:
    """The baseline: the paragraph sharing the most words with the question, over the group's files."""
    words = set(re.findall(r"\w{3,}", question.question.casefold()))
    best, best_doc, best_score = "", "", -1
    for name, text in texts.items():
        for paragraph in re.split(r"\n\s*\n|\n", text):
            score = len(words & set(re.findall(r"\w{3,}", paragraph.casefold())))
            if score > best_score:
                best, best_doc, best_score = paragraph, name, score
    fact = question.source_fact or question.fact
    return _norm(fact) in _norm(best) and best_doc == question.document
