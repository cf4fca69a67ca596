"""A question that asks for a price, a date or a number is "not found" when no passage holds one,
however many of its words the passages share; when one does, that one is quoted first.

The documents and questions here are written for this test (tuning-style, en/de/fr), not the held-out set."""

from __future__ import annotations

import pytest

from agents.language import DATE, NUMBER, PRICE, asked_kind, holds
from tests.agents.conftest import offline_answer, text_document

GUIDES = {
    "en": ("museum-guide.txt",
           "Welcome to the guided tour of the lighthouse museum. The guided tour starts at the ticket desk "
           "and lasts about an hour. Please keep to the paths and do not touch the lamps. "
           "The guided tour ends in the lantern room with a view of the harbour."),
    "de": ("museumsfuehrer.txt",
           "Willkommen zur Führung durch das Leuchtturmmuseum. Die Führung beginnt an der Kasse und "
           "dauert etwa eine Stunde. Bitte bleiben Sie auf den Wegen und berühren Sie die Lampen nicht. "
           "Die Führung endet im Laternenraum mit Blick auf den Hafen."),
    "fr": ("guide-musee.txt",
           "Bienvenue à la visite guidée du musée du phare. La visite guidée commence à l'accueil et "
           "dure environ une heure. Merci de rester sur les chemins et de ne pas toucher les lampes. "
           "La visite guidée se termine dans la salle de la lanterne avec vue sur le port."),
}
PRICE_QUESTIONS = {"en": "How much does the guided tour cost?", "de": "Was kostet die Führung?",
                   "fr": "Combien coûte la visite guidée ?"}
NOT_FOUND = {"en": "Not found:", "de": "Nicht gefunden:", "fr": "Introuvable :"}
PRICES = {"en": "The guided tour costs 8 EUR for adults.", "de": "Die Führung kostet 8 € für Erwachsene.",
          "fr": "La visite guidée coûte 8 euros pour les adultes."}


@pytest.mark.parametrize("question, kind", [
    ("How much does the guided tour cost?", PRICE), ("What is the entrance fee?", PRICE),
    ("Was kostet die Führung?", PRICE), ("Wie hoch ist die Gebühr?", PRICE), ("Quel est le tarif ?", PRICE),
    ("When does the museum open?", DATE), ("Wann wurde der Leuchtturm gebaut?", DATE),
    ("En quelle année le phare a-t-il été construit ?", DATE),
    ("How many lamps are there?", NUMBER), ("Wie viele Stufen hat der Turm?", NUMBER),
    ("Combien de marches compte la tour ?", NUMBER),
    ("Who built the lighthouse?", ""), ("Was zeigt der Laternenraum?", ""), ("Où commence la visite ?", ""),
    # "when" joining a clause to another question word asks no date; after "and" it asks one again
    ("What should I do when the alarm beeps twice?", ""), ("Que faire quand l'alarme sonne deux fois ?", ""),
    ("Was tun, wann immer der Alarm piept?", ""), ("Who called when the pump failed?", ""),
    ("What was decided, and when?", DATE), ("Wer hat angerufen und wann?", DATE), ("Qui a appelé, et quand ?", DATE),
    ("Can you tell me when the museum opens?", DATE), ("Quand commence la visite ?", DATE),
])
def test_the_kind_of_fact_a_question_asks_for(question, kind):
    assert asked_kind(question) == kind


@pytest.mark.parametrize("text, kinds", [
    ("Adults pay 8 EUR.", {PRICE, NUMBER}), ("Eintritt: 12,50 €", {PRICE, NUMBER}), ("CHF 25.-", {PRICE, NUMBER}),
    ("department: Maintenance; quarter: Q2; cost_eur: 14720", {PRICE, NUMBER}),  # a table row: the column names the currency
    ("Position: Miete; Betrag (€): 950", {PRICE, NUMBER}), ("europe_share: 12", {NUMBER}),
    ("L'entrée est gratuite.", {PRICE}), ("Der Eintritt ist kostenlos.", {PRICE}),
    ("Built in 1887.", {DATE, NUMBER}), ("Ouvert le lundi", {DATE}), ("Treffpunkt um 14 Uhr", {DATE, NUMBER}),
    ("It has three floors.", {NUMBER}), ("Welcome to the tour of the museum.", set()),
    ("Bienvenue à une visite du musée.", set()),  # "une" is an article here, not a number
])
def test_what_kind_of_fact_a_text_holds(text, kinds):
    assert {k for k in (PRICE, DATE, NUMBER) if holds(k, text)} == kinds


async def _answer(language: str, question: str, text: str) -> str:
    name = GUIDES[language][0]
    return await offline_answer(question, [text_document(name, text)], language)


@pytest.mark.parametrize("language", ["en", "de", "fr"])
async def test_a_price_asked_over_a_guide_that_gives_none_is_not_found(language):
    name, text = GUIDES[language]
    answer = await _answer(language, PRICE_QUESTIONS[language], text)
    assert NOT_FOUND[language] in answer and name in answer
    # The closest passage is still shown after the sentence that says so, never as if it answered.
    assert answer.index(NOT_FOUND[language]) < answer.index("> ")


@pytest.mark.parametrize("language", ["en", "de", "fr"])
async def test_a_price_the_guide_gives_is_quoted_first_even_below_the_welcome_line(language):
    name, text = GUIDES[language]
    answer = await _answer(language, PRICE_QUESTIONS[language], f"{text}\n\n{PRICES[language]}")
    assert NOT_FOUND[language] not in answer
    first_quote = answer[answer.index("> "):].splitlines()[0]
    assert "8" in first_quote


ALARMS = {
    "en": ("What should I do when the alarm beeps twice?", "The alarm beeps twice when the filter is full. Empty the "
           "filter and wait five minutes before you restart the machine. The alarm beeps once when the tank is empty."),
    "de": ("Was soll ich tun, wann immer der Alarm zweimal piept?", "Der Alarm piept zweimal, wenn der Filter voll ist. "
           "Leeren Sie den Filter und warten Sie fünf Minuten, bevor Sie das Gerät neu starten."),
    "fr": ("Que faire quand l'alarme sonne deux fois ?", "L'alarme sonne deux fois quand le filtre est plein. Videz le "
           "filtre et attendez cinq minutes avant de redémarrer la machine."),
}


@pytest.mark.parametrize("language", ["en", "de", "fr"])
async def test_a_when_that_joins_a_clause_asks_no_date_and_the_remedy_is_quoted(language):
    """"What should I do when the red light blinks three times?" was read as asking for a date: "Not found:
    ... give no date for this", above the passage with the remedy. A "when" after another question word of
    its sentence joins a clause; the question asks what to do. (The offline model quotes the sentence that
    matches best, the alarm's, not yet the remedy after it.)"""
    question, text = ALARMS[language]
    answer = await _answer(language, question, text)
    assert "> " in answer and NOT_FOUND[language] not in answer[:answer.index("> ")], answer
    assert {"en": "beeps twice", "de": "piept zweimal", "fr": "sonne deux fois"}[language] in answer
