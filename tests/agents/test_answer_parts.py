"""A question that asks two things is answered part by part, each cited, and a part the documents do
not hold is said plainly (agents/knowledge/answer_parts.py, agents/language/parts.py), en/de/fr, on documents
written for this test."""

from __future__ import annotations

import pytest

from agents.base import TaskContext, TaskSpec
from agents.builtin.analyst import Analyst
from agents.language import detect_language, question_parts
from agents.offline import OfflineModel
from tests.agents.conftest import text_document
from tests.scripted import ScriptedModel

# Long enough that one search for both parts ranks one part's passages first.
ORCHARD = text_document("orchard.txt", (
    "Orchard cooperative annual report 2025.\n\n"
    "The cooperative harvested 412 tonnes of apples in 2025, mostly Topaz and Elstar. "
    "The apple harvest started on 2 September and ended on 18 October. Apple prices fell by 6 percent. "
    "Apples were sold to four supermarkets and two schools. Apple storage used the two cold rooms.\n\n"
    "The board elected a new treasurer, Hanna Lindqvist, in March. "
    "Membership grew to 58 farms.\n\n"
    "The cold rooms were repaired in July after a compressor failure that cost 9,800 euros."))
SCHULE_DE = text_document("schule.txt", (
    "Elternbrief der Grundschule am Hang, Herbst 2026.\n\n"
    "Die Herbstferien beginnen am 19. Oktober und enden am 30. Oktober. "
    "In den Ferien ist das Sekretariat nur dienstags geöffnet. Ferienbetreuung gibt es in der ersten Ferienwoche.\n\n"
    "Der Förderverein sammelt für neue Spielgeräte; bisher kamen 3.450 Euro zusammen. "
    "Die Schulleiterin ist Frau Petra Okonkwo."))
MAIRIE_FR = text_document("mairie.txt", (
    "Bulletin municipal de Saint-Rémy, novembre 2026.\n\n"
    "La mairie est ouverte du lundi au vendredi de 9 h à 12 h. "
    "Le conseil municipal se réunira le 12 décembre à 20 h dans la salle des fêtes.\n\n"
    "La nouvelle bibliothèque compte 8 200 livres et ouvrira en janvier. "
    "La présidente du comité des fêtes, Amélie Roux, remercie les bénévoles du marché de Noël."))


def test_a_question_is_cut_where_a_new_question_begins():
    assert question_parts("When and where is the annual general meeting?") == [
        "When and where is the annual general meeting?"]
    assert question_parts("How many tonnes of apples were harvested, and who is the treasurer?") == [
        "How many tonnes of apples were harvested?", "Who is the treasurer?"]
    assert question_parts("Wann beginnen die Herbstferien und wer ist die Schulleiterin?") == [
        "Wann beginnen die Herbstferien?", "Wer ist die Schulleiterin?"]
    assert question_parts("Combien de livres compte la bibliothèque ? Qui est le maire ?") == [
        "Combien de livres compte la bibliothèque ?", "Qui est le maire ?"]
    assert question_parts("Why was pump 2 taken out of service?") == ["Why was pump 2 taken out of service?"]


@pytest.mark.parametrize(("doc", "question", "quoted"), [
    (ORCHARD, "How many tonnes of apples were harvested in 2025, and who is the new treasurer?",
     ["412 tonnes", "Hanna Lindqvist"]),
    (SCHULE_DE, "Wann beginnen die Herbstferien und wer ist die Schulleiterin?", ["19. Oktober", "Petra Okonkwo"]),
    (MAIRIE_FR, "Combien de livres compte la nouvelle bibliothèque ? Qui préside le comité des fêtes ?",
     ["8 200 livres", "Amélie Roux"]),
])
async def test_each_part_is_answered_and_cited(doc, question, quoted):
    text = await _ask(question, doc, OfflineModel())
    for part in quoted:
        assert part in text, text
    assert text.index(quoted[0]) < text.index(quoted[1])


@pytest.mark.parametrize(("doc", "question", "answered", "missing"), [
    (ORCHARD, "How many tonnes of apples were harvested, and what is the price of the tractor?", "412 tonnes",
     "Not found in orchard.txt: «tractor»."),
    (SCHULE_DE, "Wer ist die Schulleiterin und welche Buslinie fährt zur Schule?", "Petra Okonkwo",
     "In schule.txt nicht gefunden: «Buslinie»"),
    (MAIRIE_FR, "Quand se réunit le conseil municipal et quel est le numéro de la piscine ?", "12 décembre",
     "Introuvable dans mairie.txt : «numéro», «piscine»"),
])
async def test_a_part_the_documents_do_not_hold_is_said_plainly(doc, question, answered, missing):
    text = await _ask(question, doc, OfflineModel())
    assert answered in text and missing in text, text
    assert text.index(answered) < text.index(missing)


async def test_a_real_model_is_told_the_parts_and_which_is_not_in_the_documents():
    model = ScriptedModel("412 tonnes were harvested [1].")
    text = await _ask("How many tonnes of apples were harvested, and what is the price of the tractor?", ORCHARD, model)
    system = model.requests[0].messages[0]["content"]
    assert "The question asks 2 things" in system and "never mention tractor" in system
    assert text.rstrip().endswith("_Not found in orchard.txt: «tractor»._")


async def _ask(question: str, doc, model) -> str:
    result = await Analyst().run(TaskSpec(id="t1", agent="analyst", instructions=question),
                                 TaskContext(prompt=question, language=detect_language(question),
                                             documents={doc.name: doc}, predecessors={}, model=model))
    return result.text


@pytest.mark.parametrize(("doc", "question", "quoted"), [
    (ORCHARD, "Who is the new treasurer? Answer in English and cite the passage.", "Hanna Lindqvist"),
    (SCHULE_DE, "Wann beginnen die Herbstferien? Bitte mit Quelle.", "19. Oktober"),
    (MAIRIE_FR, "Combien de livres compte la nouvelle bibliothèque ? Réponds en français.", "8 200 livres"),
])
async def test_a_sentence_after_the_question_that_asks_nothing_is_no_part_said_not_found(doc, question, quoted):
    # "Answer in English." after a question was a second part, searched and "Not found: «Answer in English.»".
    assert len(question_parts(question)) == 1
    answer = await _ask(question, doc, OfflineModel())
    assert quoted in answer
    assert not any(w in answer for w in ("Not found", "nicht gefunden", "Nicht gefunden", "Introuvable"))
