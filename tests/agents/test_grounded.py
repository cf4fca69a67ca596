"""A real model's answer without a task over documents is the analyst's, drawn from their passages."""

from __future__ import annotations

from agents.base import DocumentText
from agents.language import load_detector
from agents.offline.model import OfflineModel
from agents.planning.manager import RoundInput
from agents.registry import build_registry
from agents.round import Limits, Runner
from tests.agents.conftest import text_document
from tests.scripted import ScriptedModel

REPORT = ("The ferry line carried 412,300 passengers in 2024. Fuel costs rose by 8 percent. "
          "The new harbour office opened in Tromsø in May.")
NO_TASK = {"userLanguage": "en", "objUserResponse": "The ferries carried about 2 million people.",
           "objFinalDocuments": [], "objWorkplan": []}


def runner(model) -> Runner:
    return Runner(model, build_registry(entry_points=False), Limits())


async def test_an_answer_without_a_task_over_a_document_is_the_analysts_from_its_passages():
    model = ScriptedModel(NO_TASK, "The ferry line carried 412,300 passengers in 2024 [1].")
    inp = RoundInput(prompt="How many passengers did the ferries carry?",
                     documents=[text_document("ferries.txt", REPORT)])
    outcome = await runner(model).plan(inp)
    assert [r.purpose for r in model.requests] == ["plan", "task"]
    analyst = model.requests[1]
    assert analyst.agent == "analyst" and "412,300 passengers" in analyst.messages[-1]["content"]
    answer = outcome.plan.answer
    assert answer.startswith("The ferry line carried 412,300 passengers in 2024")
    assert "2 million" not in answer  # the planning call's invented figure is gone
    assert "> " in answer and "ferries.txt" in answer  # the quoted passage it stands on, and where
    assert outcome.plan.tasks == []  # the model's choice of no task stands
    assert outcome.meta["grounded"] == "analyst" and outcome.meta["citations"][0]["name"] == "ferries.txt"
    assert outcome.usage.calls == 2 and any("analyst answered" in r for r in outcome.repairs)


async def test_an_answer_the_passages_do_not_hold_is_marked():
    model = ScriptedModel(NO_TASK, "The ferries carried 2 million people.")
    inp = RoundInput(prompt="How many passengers did the ferries carry?",
                     documents=[text_document("ferries.txt", REPORT)])
    answer = (await runner(model).plan(inp)).plan.answer
    assert "2 million" in answer and "412,300" in answer  # the quote beside it shows what the file says


async def test_without_documents_or_offline_the_plans_answer_stays():
    model = ScriptedModel(NO_TASK)
    outcome = await runner(model).plan(RoundInput(prompt="A good name for a bakery?", documents=[]))
    assert outcome.plan.answer == NO_TASK["objUserResponse"] and "grounded" not in outcome.meta
    unreadable = DocumentText(name="lease.pdf", ext="pdf", mime="application/pdf", size=10, items=[],
                              file_id=3, problem="encrypted")
    model = ScriptedModel(NO_TASK)
    outcome = await runner(model).plan(RoundInput(prompt="What does it say?", documents=[unreadable]))
    assert [r.purpose for r in model.requests] == ["plan"] and "grounded" not in outcome.meta
    offline = await runner(OfflineModel()).plan(RoundInput(prompt="Hello there, who are you?",
                                                           documents=[text_document("ferries.txt", REPORT)]))
    assert "grounded" not in offline.meta


async def test_a_grounded_answer_in_another_language_than_the_users_is_redone_once():
    load_detector()
    plan = dict(NO_TASK, userLanguage="de", objUserResponse="Etwa zwei Millionen Menschen.")
    english = ("The ferry line carried 412,300 passengers in 2024, according to the harbour report, "
               "and fuel costs rose by eight percent over the same year [1].")
    german = ("Die Fährlinie beförderte im Jahr 2024 laut dem Hafenbericht 412,300 Fahrgäste, und die "
              "Treibstoffkosten stiegen im selben Jahr um acht Prozent [1].")
    model = ScriptedModel(plan, english, german)
    inp = RoundInput(prompt="Wie viele Fahrgäste beförderten die Fähren im Jahr 2024?",
                     documents=[text_document("ferries.txt", REPORT)])
    outcome = await runner(model).plan(inp)
    assert [r.purpose for r in model.requests] == ["plan", "task", "task"]
    assert "in German only" in model.requests[2].messages[-1]["content"]
    assert outcome.plan.answer.startswith("Die Fährlinie beförderte")


async def test_an_answer_that_names_nothing_the_documents_hold_stays_the_models_own():
    plan = dict(NO_TASK, objUserResponse="You're welcome! Ask me anything else whenever you like.")
    model = ScriptedModel(plan)
    inp = RoundInput(prompt="Thanks, that is all for today!", documents=[text_document("ferries.txt", REPORT)])
    outcome = await runner(model).plan(inp)
    assert [r.purpose for r in model.requests] == ["plan"] and "grounded" not in outcome.meta
    assert outcome.plan.answer == plan["objUserResponse"]


def _analyst_plan(reply: str) -> dict:
    task = {"id": "t1", "instructions": "How many passengers did the ferries carry? Cite the passage.",
            "agent": "analyst", "inputs": ["ferries.txt"], "outputs": [], "dependsOn": []}
    return dict(NO_TASK, objUserResponse=reply, objWorkplan=[task])


async def test_a_reply_that_tells_what_documents_its_tasks_have_yet_to_read_hold_announces_the_steps():
    inp = RoundInput(prompt="How many passengers did the ferries carry?",
                     documents=[text_document("ferries.txt", REPORT)])
    model = ScriptedModel(_analyst_plan("The ferries carried about 2 million passengers."))
    outcome = await runner(model).plan(inp)
    assert [r.purpose for r in model.requests] == ["plan"]  # no extra call: the analyst runs as planned
    assert "2 million" not in outcome.plan.answer and "analyst" in outcome.plan.answer
    assert [t.agent for t in outcome.plan.tasks] == ["analyst"]
    assert any("before any agent had read them" in r for r in outcome.repairs)
    # A reply that only announces the work, naming the file, stays the model's own.
    model = ScriptedModel(_analyst_plan("I will look for the answer in ferries.txt."))
    assert (await runner(model).plan(inp)).plan.answer == "I will look for the answer in ferries.txt."
