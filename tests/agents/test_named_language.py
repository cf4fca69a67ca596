"""A short question's language is told by its words, not by the names in it: "When did Molière die?" was
French and answered in French, "When was Molière born?" Dutch (the planner then explained that the
offline model answers in English, German or French), "Wer ist François Dupont?" Portuguese. A name is
spelt in its own language whatever the language around it; a short text is classified without them.
The questions below were written before the change and measured once (23 -> 26 of 27 right); they are a
tuning set now. Detection on the corpus's UDHR (35/37), the one-line requests (12/12) and the earlier
held-out prompts (103/105) is unchanged (`bench/quality.py`)."""

from __future__ import annotations

import pytest

from agents.language import detect_language

NAMED = [
    ("en", "When was Molière born?"), ("en", "When did Molière die?"),
    ("en", "When did Goethe write Faust?"), ("en", "Where did Dvořák teach?"), ("en", "What did Müller sign?"),
    ("en", "Who is François Dupont?"), ("en", "How old was Sánchez?"), ("en", "What does Schmidt recommend?"),
    ("en", "Where did Björk perform?"), ("en", "Why did Jürgen leave Köln?"), ("en", "When did Zoë arrive in Zürich?"),
    ("de", "Wann starb Molière?"), ("de", "Wo wohnte Hemingway?"), ("de", "Was schrieb Shakespeare über Verona?"),
    ("de", "Wer ist François Dupont?"), ("de", "Wie alt war García?"), ("de", "Was empfiehlt Dr. Smith?"),
    ("de", "Wann kam Jean-Luc nach Lyon?"), ("de", "Warum verließ Giovanni Napoli?"), ("de", "Wer leitet Sunrise Holdings?"),
    ("fr", "Quand Goethe est-il mort ?"), ("fr", "Où vivait Hemingway ?"), ("fr", "Qu'a écrit Shakespeare sur Vérone ?"),
    ("fr", "Qui est Hans Müller ?"), ("fr", "Quel âge avait García ?"), ("fr", "Que recommande le Dr Smith ?"),
    ("fr", "Quand Jürgen est-il arrivé à Köln ?"), ("fr", "Pourquoi Walter a-t-il quitté Boston ?"),
    pytest.param("fr", "Qui dirige Sunrise Holdings ?",
                 marks=pytest.mark.xfail(strict=True, reason="two words left, read as Italian")),
]


@pytest.mark.parametrize(("language", "question"), NAMED)
def test_a_short_question_is_in_the_language_of_its_words_not_of_its_names(language, question):
    assert detect_language(question, default="en") == language


def test_a_long_text_keeps_its_names():
    text = ("Molière, born Jean-Baptiste Poquelin in Paris, wrote Tartuffe and Le Misanthrope; "
            "his company played before Louis XIV at Versailles for many years.")
    assert detect_language(text, default="en") == "en"
