"""A question that names the document by what it is ("What does the essay say the sign is for?") is not
"not found" for that word: over a PDF essay that never calls itself an essay, the answer quoted the right
passage and printed "Not found in issue918.pdf: «essay»" under it (a walk through the service with a
corpus document nobody here wrote); "the document", "the article", "the author" and "the paper" did the
same. The words a person names the documents by say where to look, not what to find; what the question
asks that no document writes is still named (en/de/fr)."""

from __future__ import annotations

import pytest

from agents.knowledge.coverage import coverage
from agents.language import without_document_nouns
from tests.agents.conftest import offline_answer, text_document

ESSAYS = {
    "en": ("bees.txt", "Bees and the orchard\n\nWithout bees, the apple trees of the valley would bear a third of "
                       "their fruit. The growers rent forty hives each spring from a beekeeper in the hills.\n\n"
                       "The blossom lasts ten days, and rain in those days costs more than frost."),
    "de": ("bienen.txt", "Bienen und der Obstgarten\n\nOhne Bienen trügen die Apfelbäume des Tals ein Drittel "
                         "ihrer Früchte. Die Obstbauern mieten jeden Frühling vierzig Bienenstöcke bei einem Imker "
                         "in den Hügeln.\n\nDie Blüte dauert zehn Tage, und Regen in diesen Tagen kostet mehr als Frost."),
    "fr": ("abeilles.txt", "Les abeilles et le verger\n\nSans les abeilles, les pommiers de la vallée ne porteraient "
                           "qu'un tiers de leurs fruits. Les arboriculteurs louent quarante ruches chaque printemps "
                           "à un apiculteur des collines.\n\nLa floraison dure dix jours, et la pluie pendant ces "
                           "jours coûte plus que le gel."),
}
ASKED = {
    "en": (("What does the essay say about the hives?", "What does the author write about the hives?",
            "According to this article, how many hives do the growers rent?"), "forty hives",
           "What does the report say about the tractors?", "tractors"),
    "de": (("Was sagt der Aufsatz über die Bienenstöcke?", "Was schreibt der Autor über die Bienenstöcke?",
            "Wie viele Bienenstöcke mieten die Obstbauern laut diesem Artikel?"), "vierzig Bienenstöcke",
           "Was sagt der Bericht über die Traktoren?", "Traktoren"),
    "fr": (("Que dit l'essai sur les ruches ?", "Qu'écrit l'auteur sur les ruches ?",
            "Selon cet article, combien de ruches les arboriculteurs louent-ils ?"), "quarante ruches",
           "Que dit le rapport sur les tracteurs ?", "tracteurs"),
}
NOT_FOUND = ("not found", "nicht gefunden", "introuvable")


@pytest.mark.parametrize("language", ["en", "de", "fr"])
async def test_the_word_a_question_names_the_document_by_is_not_named_as_not_found(language):
    name, text = ESSAYS[language]
    doc = text_document(name, text)
    questions, answer, _, _ = ASKED[language]
    for question in questions:
        assert coverage(question, [doc], [doc.text]).absent == (), question
        text = await offline_answer(question, [doc], language)
        said = text.casefold()
        assert answer.casefold() in said, (question, text)
        assert not any(n in said for n in NOT_FOUND), (question, text)


@pytest.mark.parametrize("language", ["en", "de", "fr"])
def test_what_the_question_asks_that_no_document_writes_is_still_not_found(language):
    name, text = ESSAYS[language]
    doc = text_document(name, text)
    _, _, unwritten, missing = ASKED[language]
    assert coverage(unwritten, [doc], [doc.text]).absent == (missing,)


def test_a_document_noun_is_dropped_only_after_a_word_that_points_at_a_document():
    assert without_document_nouns("What does the essay say about the hives?") == "What does the say about the hives?"
    assert without_document_nouns("Que dit l'article sur les ruches ?") == "Que dit l' sur les ruches ?"
    assert without_document_nouns("Which reports were filed in May?") == "Which reports were filed in May?"
