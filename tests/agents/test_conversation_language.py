"""A one-word or ambiguous prompt is answered in the language the conversation has used, not in
whatever the detector guesses for one word ("continue" is French too); a short prompt plainly in
another language is answered in its own."""

from __future__ import annotations

import pytest

from agents.knowledge.memory import PriorRound, continued_request
from agents.offline import OfflineModel
from agents.planning.manager import RoundInput, make_plan, request_language
from agents.registry import build_registry
from tests.agents.conftest import text_document

HISTORY = {
    "en": [("user", "[round 1] How often should I descale the kettle?"), ("assistant", "[round 1] Plan: ...")],
    "de": [("user", "[round 1] Was wurde zum Ticketsystem beschlossen?"), ("assistant", "[round 1] Plan: ...")],
    "fr": [("user", "[round 1] Combien coûte la sortie au musée ?"), ("assistant", "[round 1] Plan: ...")],
}


@pytest.mark.parametrize("language, prompt", [
    ("en", "continue"), ("en", "ok"), ("de", "continue"), ("de", "ok"), ("fr", "ok"), ("fr", "continue"),
    ("en", "Go on"), ("de", "weiter?"), ("de", "Weiter"), ("en", "Merci !"), ("en", "danke"), ("fr", "thanks"),
    ("de", "Merci"), ("fr", "oui"), ("de", "yes"), ("en", "Hallo"),
])
def test_a_word_or_two_of_several_languages_takes_the_conversations_language(language, prompt):
    assert request_language(RoundInput(prompt=prompt, documents=[], history=HISTORY[language])) == language


# A word or two that is plainly another language is answered in it: the conversation's language is the
# prior the prompt's evidence outweighs, not a rule for every short prompt (it answered "Et ensuite ?" in
# German after German requests). With these, the 28 cases CONVERSATION_PRIOR was chosen on (26 right;
# "Warum?" after French requests and "Why?" after German ones keep the conversation's language).
@pytest.mark.parametrize("conversation, prompt, language", [
    ("de", "Et ensuite ?", "fr"), ("en", "Et ensuite ?", "fr"), ("en", "Et après ?", "fr"),
    ("fr", "Und danach?", "de"), ("en", "Und danach?", "de"), ("de", "And then?", "en"), ("fr", "And then?", "en"),
    ("de", "Pourquoi ?", "fr"), ("en", "Y luego?", "es"), ("en", "Weiter", "de"),
])
def test_a_word_or_two_plainly_in_another_language_is_answered_in_it(conversation, prompt, language):
    assert request_language(RoundInput(prompt=prompt, documents=[], history=HISTORY[conversation])) == language


def test_a_real_sentence_is_still_read_in_its_own_language():
    inp = RoundInput(prompt="Fasse das Dokument bitte zusammen.", documents=[], history=HISTORY["en"])
    assert request_language(inp) == "de"


async def test_continue_in_an_english_conversation_is_answered_in_english():
    doc = text_document("kettle.txt", "Descale the kettle every 4 weeks with citric acid.")
    inp = RoundInput(prompt="continue", documents=[doc], history=HISTORY["en"],
                     previous=PriorRound(round=1, request="How often should I descale the kettle?", finished=True))
    outcome = await make_plan(inp, OfflineModel(), build_registry(entry_points=False))
    assert outcome.plan.language == "en"
    assert outcome.plan.answer.startswith("I am working offline")
    assert "without documents" not in outcome.plan.answer  # there is one: the answer names it
    assert "kettle.txt" in outcome.plan.answer


def test_continue_after_a_round_stopped_before_its_plan_is_that_rounds_request():
    stopped = PriorRound(round=1, request="What speedup does the tracing VM achieve?")
    assert continued_request("continue", stopped) == "What speedup does the tracing VM achieve?"
    assert continued_request("weiter", stopped) == "What speedup does the tracing VM achieve?"
    assert continued_request("Summarise it", stopped) == "Summarise it"
    assert continued_request("continue", PriorRound(round=1, request="x", finished=True)) == "continue"


async def test_a_question_about_what_no_document_mentions_says_not_found_and_names_what_was_searched():
    from agents.base import TaskContext, TaskSpec
    from agents.builtin.analyst import Analyst
    from agents.knowledge.coverage import unanswered

    doc = text_document("oven.txt", "The oven heats to 250 degrees. Clean the oven door with a soft cloth. "
                                    "The oven has a timer of 90 minutes and a child lock.")
    best = [doc.text]
    assert unanswered("What is the warranty of the oven?", [doc], best) == ["warranty"]
    assert unanswered("How long is the timer of the oven?", [doc], best) == []  # 'how long' asks a kind of fact
    # What the user asked is what was searched, not the words a planned task adds to it ...
    planned = "What is the timer of the oven in the vendor brochure?"
    assert unanswered(planned, [doc], best) == ["vendor", "brochure"]
    # (a sentence that only instructs, "Cite the passage.", is no part of the question at all)
    assert unanswered("What is the timer of the oven? Cite the passage.", [doc], best) == []
    assert unanswered(planned, [doc], best, asked="What is the timer of the oven?") == []
    # ... unless the request says too little of its own ("continue", "And in 2022?").
    assert unanswered("What is the warranty of the oven?", [doc], best, asked="continue") == ["warranty"]
    question = "What is the price of the oven?"
    result = await Analyst().run(TaskSpec(id="t1", agent="analyst", instructions=question),
                                 TaskContext(prompt=question, language="en", documents={doc.name: doc},
                                             predecessors={}, model=OfflineModel()))
    assert "Not found: oven.txt give no price for this" in result.text


async def test_continue_after_a_finished_answer_goes_on_with_what_the_request_before_it_asked_about():
    from agents.base import TaskContext, TaskSpec
    from agents.builtin.analyst import Analyst
    from tests.scripted import ScriptedModel

    doc = text_document("kettle.txt", "Safety. Do not continue to use a damaged kettle. Keep it away from children.\n\n"
                                      "Descaling. In areas with hard water, descale the kettle every four weeks.\n\n"
                                      "Warranty. The warranty lasts 24 months from the date of purchase.")
    model = ScriptedModel("Descale it every four weeks [1]; use citric acid, never vinegar.")
    history = [("user", "[round 1] How often should I descale the kettle?"),
               ("assistant", "[round 1] Final answer: Every four weeks.")]
    await Analyst().run(TaskSpec(id="answer", agent="analyst", instructions="continue"),
                        TaskContext(prompt="continue", language="en", documents={doc.name: doc}, predecessors={},
                                    model=model, history=history))
    hints = model.requests[0].hints  # "continue" alone finds the safety passage ("Do not continue to use")
    assert hints.question == "continue (How often should I descale the kettle?)"
    # What it leans on was asked in its own round: "continue" and "often" are not reported as never mentioned.
    assert hints.absent == () and "never mention" not in model.requests[0].messages[0]["content"]
    assert "descale the kettle every four weeks" in hints.passages[0].text
