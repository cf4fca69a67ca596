"""A question that asks what a document is about asks for its gist: "What is this text about? Answer in two
sentences." over the corpus's sample-french-1.txt quoted one passage of detail offline and ignored the two
sentences (a walk, ninth session). It is now planned as a summary of that length, in en/de/fr; a question
about a thing in the documents ("What is the dispute about?") stays a question."""

from __future__ import annotations

import pytest

from agents.language import detect_intents
from agents.offline import OfflineModel
from agents.registry import build_registry
from tests.agents.conftest import RecordingModel, play_round, squash, text_document

GIST = [
    ("What is this text about? Answer in two sentences.", 2),
    ("What's the report about?", None),
    ("Worum geht es in dem Bericht? Antworte in zwei Sätzen.", 2),
    ("Wovon handelt der Text?", None),
    ("Worum geht es in diesem Dokument? Antworte in einem Satz.", 1),
    ("De quoi parle ce rapport ? Réponds en une phrase.", 1),
    ("De quoi s'agit-il ?", None),
]
NOT_GIST = ["What is the dispute about?", "What is the war about?", "What does the report say about the budget?",
            "Worum geht es beim Streit um die Miete?", "Que dit le rapport sur le budget ?"]
REPORT = text_document("harbour.txt", (
    "The harbour authority rebuilt the north pier in 2023. Work began in March and ended in November, two months "
    "late. The new pier takes ships of up to 200 metres. Storms in October damaged the old crane, which was "
    "replaced. The budget rose from 12 to 14 million euros. Fishing boats moved to the south basin during the "
    "works. Passenger ferries kept their timetable throughout. The authority plans a second pier for 2026."))


@pytest.mark.parametrize(("question", "_count"), GIST)
def test_asking_what_a_document_is_about_asks_for_a_summary(question, _count):
    assert detect_intents(question, False) == ["summary"]


@pytest.mark.parametrize("question", NOT_GIST)
def test_asking_about_a_thing_in_the_documents_stays_a_question(question):
    assert detect_intents(question, False) == ["answer"]


def test_a_gist_and_a_second_question_are_both_asked():
    assert detect_intents("What is the essay about and who wrote it?", False) == ["summary", "answer"]
    assert detect_intents("Worum geht es im Bericht? Und wer hat ihn geschrieben?", False) == ["summary", "answer"]


@pytest.mark.parametrize(("question", "count"), [case for case in GIST if case[1]])
async def test_a_gist_round_summarises_in_the_sentences_asked_for(question, count):
    done = await play_round(question, [REPORT], RecordingModel(OfflineModel()), build_registry(entry_points=False))
    assert [t.agent for t in done.plan.plan.tasks] == ["summarizer"]
    [summary] = done.by_agent("summarizer")
    sentences = [line[2:] for line in summary.text.splitlines() if line.startswith("> ")]
    assert len(sentences) == count, summary.text
    assert all(s in squash(REPORT.text) for s in sentences)
