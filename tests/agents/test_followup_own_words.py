"""A follow-up's own words say what it asks now; the question before it only says what it goes on from.
"And what does Havel call that function?" after a question about the greengrocer's sign (the corpus
essay issue918.pdf) quoted the greengrocer passage again: searched with both questions' words, the earlier
one's outweighed its own. The passages that hold more of the follow-up's own words now come first
(the essay; documents written for this test, en/de/fr, which passed before as well)."""

from __future__ import annotations

import pytest

from tests.agents.conftest import offline_answer, text_document

MILLS = {
    "en": ("mill.txt", "The old mill\n\nThe miller grinds rye for the village bakery every Tuesday. The mill wheel turns "
                       "on the stream behind the church.\n\nThe miller calls the narrow channel that feeds the wheel the "
                       "leat. In dry summers the leat runs low and the mill stops for weeks.",
           "What does the miller grind for the bakery?", "And what does the miller call that channel?", "leat"),
    "de": ("muehle.txt", "Die alte Mühle\n\nDer Müller mahlt jeden Dienstag Roggen für die Dorfbäckerei. Das Mühlrad "
                         "dreht sich am Bach hinter der Kirche.\n\nDen schmalen Kanal, der das Rad speist, nennt der "
                         "Müller den Mühlgraben. In trockenen Sommern führt der Mühlgraben wenig Wasser und die Mühle "
                         "steht wochenlang still.",
           "Was mahlt der Müller für die Bäckerei?", "Und wie nennt der Müller diesen Kanal?", "Mühlgraben"),
    "fr": ("moulin.txt", "Le vieux moulin\n\nLe meunier moud du seigle pour la boulangerie du village chaque mardi. La "
                         "roue tourne sur le ruisseau derrière l'église.\n\nLe meunier appelle le bief le canal étroit "
                         "qui alimente la roue. Pendant les étés secs, le bief baisse et le moulin s'arrête des semaines.",
           "Que moud le meunier pour la boulangerie ?", "Et comment le meunier appelle-t-il ce canal ?", "bief"),
}


@pytest.mark.parametrize("language", ["en", "de", "fr"])
async def test_a_follow_up_quotes_what_its_own_words_ask_first(language):
    name, text, first, then, wanted = MILLS[language]
    doc = text_document(name, text)
    history = [("user", f"[round 1] {first}"), ("assistant", "[round 1] rye")]
    text = await offline_answer(then, [doc], language, history)
    quotes = [line for line in text.splitlines() if line.startswith("> ")]
    assert quotes and wanted in quotes[0], text


async def test_the_essay_follow_up_quotes_the_passage_its_own_words_ask_about():
    from tests.agents.conftest import load_document

    essay = load_document("issue918.pdf")
    history = [("user", "[round 1] What does the essay say the sign in the greengrocer's shop is for?"),
               ("assistant", "[round 1] > Václav Havel's greengrocer displays a sign")]
    then = "And what does Havel call that function?"
    text = await offline_answer(then, [essay], "en", history)
    quotes = [line for line in text.splitlines() if line.startswith("> ")]
    assert quotes and "excusatory function" in quotes[0], text


def test_the_passages_holding_more_of_the_follow_ups_own_words_come_first_in_the_searchs_order():
    from agents.base import Passage
    from agents.knowledge.follow_ups import own_words_first

    found = [Passage("e.txt", "The greengrocer puts a sign in his shop; Havel saw it.", 3.0),
             Passage("e.txt", "Havel calls this the excusatory function.", 2.0),
             Passage("e.txt", "Havel wrote plays.", 1.0)]
    assert own_words_first("And what does Havel call that function?", found) == [found[1], found[0], found[2]]
    assert own_words_first("And then?", found) == found
