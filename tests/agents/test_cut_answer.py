"""An answer cut mid-sentence inside a valid plan is completed (asked for again on its own, as plain
text) and never shown cut: Qwen 0.5B answered "A good name for a bakery could be", twice."""

from __future__ import annotations

from agents.planning.cut_answer import is_cut, to_last_sentence
from agents.planning.manager import RoundInput, make_plan
from agents.registry import build_registry
from tests.scripted import ScriptedModel

CUT = {"userLanguage": "en", "objUserResponse": "A good name for a bakery could be", "objFinalDocuments": [],
       "objWorkplan": []}


async def test_a_cut_answer_is_asked_for_again_on_its_own():
    model = ScriptedModel(CUT, "A good name for a bakery could be “The Golden Crust”.")
    outcome = await make_plan(RoundInput(prompt="What is a good name for a bakery?", documents=[]), model,
                              build_registry(entry_points=False))
    assert outcome.plan.answer == "A good name for a bakery could be “The Golden Crust”."
    assert model.requests[1].purpose == "answer" and model.requests[1].schema is None
    assert any("mid-sentence" in r for r in outcome.repairs)


async def test_cut_twice_it_ends_at_its_last_whole_sentence():
    cut = dict(CUT, objUserResponse="Bakeries often use warm names. A good name for a bakery could be")
    model = ScriptedModel(cut, "Names matter. Something like")
    outcome = await make_plan(RoundInput(prompt="What is a good name for a bakery?", documents=[]), model,
                              build_registry(entry_points=False))
    assert outcome.plan.answer == "Names matter."


def test_what_counts_as_cut():
    assert is_cut("A good name for a bakery could be")
    assert not is_cut("Three names:\n\n- Golden Crust\n- Rise and Shine")
    assert not is_cut("Here is the plan.") and not is_cut("Done")
    assert to_last_sentence("One. Two is") == "One."


def test_a_german_quotation_closed_with_its_own_mark_is_not_cut():
    from agents.planning.cut_answer import is_cut

    assert not is_cut("Fragen Sie zum Beispiel: „Was sagt der Bericht über die Kosten?“")
