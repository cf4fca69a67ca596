"""A document's title names the document, not a passage of it (issue 50: "What is the overall status of
Project Atlas?" quoted the report's title and byline first). en/de/fr, on documents written here."""

from __future__ import annotations

import io

import docx
import pytest

from agents.base import DocumentText, Passage, TaskContext, TaskSpec
from agents.builtin.analyst import Analyst
from agents.knowledge.titles import titled_last
from agents.offline import OfflineModel
from extractors import extract
from tests.agents.conftest import text_document


def report(name: str, text: str) -> DocumentText:
    """The report as a Word document: its first line the title, a line alone a heading, the rest paragraphs."""
    document = docx.Document()
    blocks = text.split("\n\n")
    title, byline = blocks[0].split("\n", 1)
    document.add_heading(title, 0)
    document.add_paragraph(byline)
    for block in blocks[1:]:
        heading, body = block.split("\n", 1)
        document.add_heading(heading, 1)
        document.add_paragraph(body)
    out = io.BytesIO()
    document.save(out)
    found = extract(out.getvalue(), name)
    return DocumentText.of(name, "docx", found.mime, len(out.getvalue()), found.items)

REPORTS = {
    "en": ("harbour-lights-report.docx",
           "Harbour Lights Festival - Final Report 2024\n"
           "Prepared by Dana Whitfield for the Harbour Lights Festival board, 4 November 2024.\n\n"
           "Attendance\n"
           "The festival drew 18,400 visitors over its three evenings, a fifth more than in 2023.\n\n"
           "Finances\n"
           "Ticket sales brought in 96,000 euros and the festival closed with a small surplus.",
           "How many visitors came to the Harbour Lights Festival?", "18,400"),
    "de": ("weinfest-abschlussbericht.docx",
           "Weinfest Rebenhang - Abschlussbericht 2024\n"
           "Erstellt von Jonas Albrecht für den Vorstand des Weinfests Rebenhang, 2. Oktober 2024.\n\n"
           "Besucher\n"
           "Das Weinfest zählte an zwei Tagen 7.250 Besucher, deutlich mehr als im Vorjahr.\n\n"
           "Finanzen\n"
           "Der Verkauf der Probiergläser brachte 21.300 Euro ein.",
           "Wie viele Besucher hatte das Weinfest Rebenhang?", "7.250"),
    "fr": ("rapport-fete-des-lanternes.docx",
           "Fête des Lanternes de Bellerive - Rapport final 2024\n"
           "Rédigé par Claire Morel pour le comité de la Fête des Lanternes de Bellerive, le 12 septembre 2024.\n\n"
           "Fréquentation\n"
           "La fête a accueilli 5 900 visiteurs sur deux soirées, soit un tiers de plus qu'en 2023.\n\n"
           "Budget\n"
           "La buvette a rapporté 14 200 euros.",
           "Combien de visiteurs la Fête des Lanternes de Bellerive a-t-elle accueillis ?", "5 900"),
}


@pytest.mark.parametrize("language", sorted(REPORTS))
async def test_the_answer_quotes_the_passage_that_says_it_not_the_title(language):
    name, text, question, wanted = REPORTS[language]
    doc = report(name, text)
    result = await Analyst().run(TaskSpec(id="t1", agent="analyst", instructions=question),
                                 TaskContext(prompt=question, language=language, documents={doc.name: doc},
                                             predecessors={}, model=OfflineModel()))
    first_quote = next(line for line in result.text.splitlines() if line.startswith(">"))
    assert wanted in first_quote, result.text


def test_a_passage_that_shares_only_title_words_goes_after_one_that_shares_more():
    doc = text_document("atlas.txt", "Project Atlas - Status Report\nPrepared by M. Okafor.\n\nThe overall status is AMBER.")
    title = Passage("atlas.txt", "Project Atlas - Status Report Prepared by M. Okafor.", 5.0)
    status = Passage("atlas.txt", "The overall status is AMBER.", 3.0)
    assert titled_last("What is the overall status of Project Atlas?", [title, status], [doc]) == [status, title]
    # Asked only what the title says, nothing moves; nor when nothing else shares a word.
    assert titled_last("What is Project Atlas?", [title, status], [doc]) == [title, status]
    by_meaning = Passage("atlas.txt", "Le statut global est ambre.", 3.0)
    assert titled_last("What is the overall status of Project Atlas?", [title, by_meaning], [doc]) == [title, by_meaning]
