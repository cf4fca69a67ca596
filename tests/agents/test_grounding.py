"""With a real model, every agent is told the language to write in first and last, and an answer drawn
from passages shows what it stands on: the quoted sentence of each passage it cites, and its figures
that no passage holds."""

from __future__ import annotations

import pytest

from agents.base import TaskContext, TaskSpec
from agents.builtin.analyst import Analyst
from agents.builtin.summarizer import Summarizer
from agents.builtin.translator import Translator
from agents.builtin.writer import Writer
from agents.knowledge.evidence import figures, unsupported, with_evidence
from tests.agents.conftest import text_document
from tests.scripted import ScriptedModel

SALES = ("sales.txt", "Bakery sales by year.\n\nIn 2022 the bakery sold 12,553 loaves.\n\n"
                      "In 2023 the bakery sold 14,020 loaves and opened a second shop.")


def _context(model, language="en", prompt="How many loaves were sold in 2023?"):
    doc = text_document(*SALES)
    return TaskContext(prompt=prompt, language=language, documents={doc.name: doc}, predecessors={}, model=model)


def test_the_figures_of_an_answer_and_those_no_passage_holds():
    assert figures("It sold 14,020 loaves [2] in 2023, 3.5 a minute; step 1.") == ["14,020", "2023", "3.5"]
    assert unsupported("It sold 14.020 loaves in 2023 [1].", ["In 2023: 14,020 loaves."]) == []
    assert unsupported("It sold 12,000 loaves in 2023 [1].", ["In 2023: 14,020 loaves."]) == ["12,000"]


def test_a_citation_goes_to_the_passage_that_holds_the_answers_figures_and_quotes_their_sentence():
    hints = [{"n": 1, "name": "r.txt", "text": "A power cut of 40 minutes stopped all pumps. The budget is 18,500 euros.",
              "quote": "The budget is 18,500 euros."},
             {"n": 2, "name": "r.txt", "text": "Pump 2 ran well. The flow meter must be recalibrated before "
                                               "30 November 2026. No water was lost.", "quote": "Pump 2 ran well."}]
    places = ["r.txt, part 1", "r.txt, part 2"]
    shown = with_evidence("[1] r.txt, part 1: Der Durchflussmesser muss bis 30. November 2026 kalibriert "
                          "werden [1].", hints, places, "de", 1)
    answer, sources = shown.split("**Quellen**")
    assert answer.strip() == "Der Durchflussmesser muss bis 30. November 2026 kalibriert werden [2]."
    assert "> The flow meter must be recalibrated before 30 November 2026." in sources and "[2]" in sources
    assert "power cut" not in sources
    # Without a figure, the model's own citation and the question's quote stand.
    kept = with_evidence("Die Pumpen standen still [1].", hints, places, "de", 1)
    assert "[1]" in kept and "> The budget is 18,500 euros." in kept


async def test_an_answer_about_what_the_documents_never_mention_names_what_was_searched():
    model = ScriptedModel("The bakery's phone number is 2023 [1].")
    result = await Analyst().run(TaskSpec("t1", "analyst", "What is the bakery's phone number?"), _context(model))
    assert result.text.rstrip().endswith("_Not found in sales.txt: «phone»._")  # "number" is a function word


async def test_an_answer_with_a_figure_from_nowhere_shows_the_cited_passage_and_says_what_to_check():
    model = ScriptedModel("The bakery sold 15,000 loaves in 2023 [1].")
    result = await Analyst().run(TaskSpec("t1", "analyst", "How many loaves were sold in 2023?"), _context(model))
    answer, sources = result.text.split("**Sources**")
    assert answer.strip() == "The bakery sold 15,000 loaves in 2023 [1]."
    assert "> In 2023 the bakery sold 14,020 loaves" in sources and "— sales.txt" in sources and "[1]" in sources
    assert sources.rstrip().endswith("_To check: 15,000 appears in none of the passages above._")
    assert result.meta["citations"][0]["quote"].startswith("In 2023 the bakery sold 14,020")


async def test_a_not_found_from_the_model_still_shows_the_passage_that_holds_the_figure():
    model = ScriptedModel("Die Dokumente sagen das nicht.")
    result = await Analyst().run(TaskSpec("t1", "analyst", "Wie viele Brote wurden 2023 verkauft?"),
                                 _context(model, "de", "Wie viele Brote wurden 2023 verkauft?"))
    assert "**Quellen**" in result.text and "> In 2023 the bakery sold 14,020 loaves" in result.text
    assert "Zu prüfen" not in result.text  # no figure of its own to check


@pytest.mark.parametrize("agent, instructions", [
    (Analyst(), "Wie viele Brote wurden 2023 verkauft?"),
    (Writer(), "Schreibe eine kurze Notiz über die Verkäufe."),
    (Summarizer(), "Fasse die Verkäufe zusammen."),
])
async def test_every_agent_is_told_its_language_first_and_last(agent, instructions):
    model = ScriptedModel("Die Bäckerei verkaufte 2023 14.020 Brote [1].")
    await agent.run(TaskSpec("t1", agent.name, instructions, ["sales.txt"]), _context(model, "de", instructions))
    [request] = model.requests
    system, user = request.messages[0]["content"], request.messages[-1]["content"]
    assert system.startswith("Write only in German. ")
    assert user.rstrip().endswith("Write your answer in German.")


async def test_a_translator_is_told_the_target_language_first():
    model = ScriptedModel("Die Bäckerei verkaufte Brote.")
    await Translator().run(TaskSpec("t1", "translator", "Translate it into German.", ["sales.txt"]),
                           _context(model, "en", "Translate it into German."))
    assert model.requests[0].messages[0]["content"].startswith("Write only in German. ")


async def test_a_writer_given_a_long_document_gets_its_numbered_passages_without_a_model_call_to_condense_it():
    filler = " ".join(f"Shop note {n}: the ovens were cleaned and the shelves restocked." for n in range(400))
    doc = text_document("bakery-log.txt", f"{filler}\n\nIn 2023 the bakery sold 14,020 loaves.\n\n{filler}")
    model = ScriptedModel("# Note\n\nThe bakery sold 14,020 loaves in 2023 [1].")
    model.context_tokens = 4096
    instructions = "Write a note on how many loaves the bakery sold in 2023."
    context = TaskContext(prompt=instructions, language="en", documents={doc.name: doc}, predecessors={}, model=model)
    await Writer().run(TaskSpec("t1", "writer", instructions, [doc.name]), context)
    [request] = model.requests  # the one call that writes: nothing was summarised by the model first
    system, user = request.messages[0]["content"], request.messages[-1]["content"]
    assert "like [2]" in system
    assert "\n[1] bakery-log.txt" in user and "In 2023 the bakery sold 14,020 loaves." in user


async def test_the_language_the_instructions_ask_for_is_the_one_told_first():
    model = ScriptedModel("- The bakery sold 14,020 loaves in 2023.")
    await Summarizer().run(TaskSpec("t1", "summarizer", "Fasse es auf Englisch zusammen.", ["sales.txt"]),
                           _context(model, "de", "Fasse es auf Englisch zusammen."))
    [request] = model.requests
    assert request.messages[0]["content"].startswith("Write only in English. ")
    assert request.messages[-1]["content"].endswith("Write your answer in English.")


def test_the_figures_of_a_document_name_the_answer_repeats_are_not_to_check():
    hints = [{"n": 1, "name": "protokoll-2024-09-03.txt", "text": "Next meeting: 17 September.", "quote": "Next meeting."}]
    text = with_evidence("[1]. Protokoll-2024-09-03.txt: next meeting on 17 September.", hints,
                         ["protokoll-2024-09-03.txt"], "en", 1)
    assert "To check" not in text
    text = with_evidence("Next meeting on 18 September [1].", hints, ["protokoll-2024-09-03.txt"], "en", 1)
    assert text.rstrip().endswith("_To check: 18 appears in none of the passages above._")
