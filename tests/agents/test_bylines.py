"""Who wrote a document is answered from its byline: "Who wrote the essay?" over the corpus essay issue918.pdf
said no passage matched, "Who are the authors of the paper?" over tracemonkey.pdf quoted a funding notice
(a walk, tenth session). A byline shares no word with the question; each document's is now its first passage,
and a document whose opening names no one gets an honest "no author", never a title line about its subject
(sample-french-1.txt: "JEAN-BAPTISTE POQUELIN MOLIÈRE" heads a text about him). Documents of our own, en/de/fr."""

from __future__ import annotations

import pytest

from agents.language import AUTHOR, DATE, asked_kind, person_names
from tests.agents.conftest import load_document, offline_answer, text_document

REPORTS = {
    "en": ("harbour.txt", "Harbour works 2023\nMaria Jensen and Tom Berg\nMarch 2024\n\nThe harbour authority rebuilt "
           "the north pier. Work began in March and ended in November. The authority thanks the engineers who "
           "wrote the first survey.", "Who wrote the report?", "Maria Jensen and Tom Berg"),
    "de": ("hafen.txt", "Hafenarbeiten 2023\nVon Anna Keller und Jonas Weber\nMärz 2024\n\nDie Hafenbehörde baute die "
           "Nordmole neu. Die Arbeiten begannen im März. Der Autor der ersten Studie ist nicht bekannt.",
           "Wer hat den Bericht geschrieben?", "Von Anna Keller und Jonas Weber"),
    "fr": ("port.txt", "Travaux du port 2023\nPar Claire Martin\nMars 2024\n\nL'autorité portuaire a reconstruit la "
           "jetée nord. Les travaux ont commencé en mars. Les auteurs de l'étude remercient la ville.",
           "Qui a écrit ce rapport ?", "Par Claire Martin"),
}
NO_AUTHOR = {
    "en": ("ANNA LINDQVIST\nBorn 1901, died 1978\n\nAnna Lindqvist founded the weaving school in 1930. She taught "
           "there for forty years.", "Who is the author?", "give no author"),
    "de": ("ANNA LINDQVIST\nGeboren 1901, gestorben 1978\n\nAnna Lindqvist gründete 1930 die Webschule. Sie "
           "unterrichtete dort vierzig Jahre.", "Wer ist der Autor?", "gesucht: Autor"),
    "fr": ("ANNA LINDQVIST\nNée en 1901, morte en 1978\n\nAnna Lindqvist fonda l'école de tissage en 1930. Elle y "
           "enseigna quarante ans.", "Qui est l'auteur ?", "cherché : auteur"),
}


def _quotes(text: str) -> list[str]:
    return [line[2:] for line in text.splitlines() if line.startswith("> ")]


@pytest.mark.parametrize("language", ["en", "de", "fr"])
async def test_who_wrote_a_document_is_answered_by_its_byline(language):
    name, text, question, byline = REPORTS[language]
    answer = await offline_answer(question, [text_document(name, text)], language)
    assert _quotes(answer)[:1] == [byline], answer


@pytest.mark.parametrize("language", ["en", "de", "fr"])
async def test_a_document_whose_opening_names_no_one_has_no_author_and_says_so(language):
    text, question, said = NO_AUTHOR[language]
    answer = await offline_answer(question, [text_document("life.txt", text)], language)
    # Nothing quoted ("no passage matches"), or the nearest passages under "no author" said first.
    assert not _quotes(answer) or said in answer, answer
    assert not any("ANNA LINDQVIST" in quote for quote in _quotes(answer)), answer


async def test_the_corpus_essay_and_paper_name_their_authors():
    essay = await offline_answer("Who wrote the essay?", [load_document("issue918.pdf")], "en")
    assert _quotes(essay)[:1] == ["Avram Lyon"], essay
    paper = await offline_answer("Wer hat den Artikel geschrieben?", [load_document("tracemonkey.pdf")], "de")
    assert _quotes(paper)[0].startswith("Andreas Gal"), paper


def test_an_authorship_question_is_told_from_one_about_the_author():
    assert [asked_kind(q) for q in ("Who wrote it?", "Wer hat das verfasst?", "Qui est l'auteur ?",
                                    "Who are the authors of the paper?")] == [AUTHOR] * 4
    assert asked_kind("When was the author born?") == DATE
    assert asked_kind("What does the author say about pricing?") == ""


def test_a_line_is_read_as_names_only_when_naming_people_is_all_it_does():
    assert person_names("Mohammad R. Haghighat$, Blake Kaplan∗") == ["Mohammad R. Haghighat", "Blake Kaplan"]
    assert person_names("Von Anna Keller und Jonas Weber") == ["Anna Keller", "Jonas Weber"]
    for line in ("Ideology as ritual", "LOCK DOWN CULTURE AND CONTROL CREATIVITY", "Mozilla Corporation",
                 "Monday, December 5, 2011", "The results were good.", "Project Atlas - Status Report Q3 2024"):
        assert person_names(line) == [], line
