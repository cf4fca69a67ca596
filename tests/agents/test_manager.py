"""The project manager: planning with one repair, the plan message and the final review."""

from __future__ import annotations

import pytest

from agents.base import OutputFile, OutputSpec, Plan, TaskResult, TaskSpec
from agents.errors import PlanError
from agents.model import ModelOutputError, Usage
from agents.planning.manager import PlanLimits, PlanOutcome, RoundInput, make_plan, render_plan_message
from agents.planning.review import write_final
from agents.registry import build_registry
from tests.agents.conftest import text_document
from tests.scripted import ScriptedModel


def plan_json(*tasks: dict, finals: list[str] | None = None, language: str = "en") -> dict:
    return {"userLanguage": language, "objUserResponse": "On it.",
            "objFinalDocuments": [{"name": n, "type": n.rsplit(".", 1)[-1], "purpose": ""} for n in finals or []],
            "objWorkplan": list(tasks)}


def t(id: str, agent: str, inputs: list[str] | None = None, deps: list[str] | None = None,
      outputs: list[str] | None = None) -> dict:
    return {"id": id, "agent": agent, "instructions": f"{agent} work", "inputs": inputs or [],
            "outputs": [{"name": o, "type": "", "purpose": ""} for o in outputs or []], "dependsOn": deps or []}


@pytest.fixture
def inp():
    return RoundInput(prompt="Summarise the report and write a memo.",
                      documents=[text_document("report.txt", "The plant made 12 tons. It rained.")])


async def test_a_valid_plan_needs_one_call(inp):
    model = ScriptedModel(plan_json(t("t1", "summarizer", ["report.txt"])))
    outcome = await make_plan(inp, model, build_registry(entry_points=False))
    assert [task.agent for task in outcome.plan.tasks] == ["summarizer"]
    assert [r.purpose for r in model.requests] == ["plan"]
    assert model.requests[0].schema is not None
    assert outcome.usage == Usage(prompt_tokens=100, completion_tokens=20, calls=1)
    assert outcome.model == "scripted" and outcome.offline is False


async def test_an_invalid_plan_gets_one_repair_listing_the_errors(inp):
    bad = plan_json(t("t1", "poet", ["report.txt"]), t("t2", "writer", ["ghost.pdf"], deps=["t3"]),
                    t("t3", "summarizer", deps=["t2"]))
    good = plan_json(t("t1", "summarizer", ["report.txt"], outputs=["sum.md"]),
                     t("t2", "writer", ["sum.md"], deps=["t1"], outputs=["memo.docx"]), finals=["memo.docx"])
    model = ScriptedModel(bad, good)
    outcome = await make_plan(inp, model, build_registry(entry_points=False))
    assert [task.id for task in outcome.plan.tasks] == ["t1", "t2"]
    plan_request, repair = model.requests
    assert repair.purpose == "repair"
    complaint = repair.messages[-1]["content"]
    assert "task 't1': unknown agent 'poet'" in complaint
    # The cycle was repaired in place (agents.planning.repairs); the unknown agent is the model's to fix.
    assert "tasks form a cycle: " not in complaint and "which closed a cycle" in " ".join(outcome.repairs)
    assert repair.hints.errors and all(e in complaint for e in repair.hints.errors)
    # The rejected plan is shown back to the model as its own answer.
    assert repair.messages[-2]["role"] == "assistant" and "poet" in repair.messages[-2]["content"]
    assert outcome.usage.calls == 2 and outcome.usage.prompt_tokens == 200


async def test_too_many_tasks_then_still_invalid_raises_plan_error(inp):
    many = plan_json(*[dict(t(f"t{i}", "summarizer"), instructions=f"Summarise part {i}.") for i in range(1, 5)])
    model = ScriptedModel(many, many)
    with pytest.raises(PlanError) as caught:
        await make_plan(inp, model, build_registry(entry_points=False), PlanLimits(max_tasks=3))
    assert "even after one repair" in str(caught.value)
    assert "the plan has 4 tasks; at most 3 are allowed" in str(caught.value)
    assert caught.value.usage.calls == 2
    assert len(model.requests) == 2


async def test_an_answer_that_is_not_json_is_repaired(inp):
    model = ScriptedModel("Sure, I will summarise it!", plan_json(t("t1", "summarizer")))
    outcome = await make_plan(inp, model, build_registry(entry_points=False))
    assert "not valid JSON" in model.requests[1].messages[-1]["content"]
    assert outcome.plan.tasks[0].agent == "summarizer"


async def test_a_model_output_error_is_repaired_and_its_usage_counted(inp):
    failure = ModelOutputError("schema mismatch", usage=Usage(prompt_tokens=7, calls=1))
    model = ScriptedModel(failure, plan_json(t("t1", "summarizer")))
    outcome = await make_plan(inp, model, build_registry(entry_points=False))
    assert "schema mismatch" in model.requests[1].messages[-1]["content"]
    assert outcome.usage.calls == 2 and outcome.usage.prompt_tokens == 107


async def test_the_prompt_carries_summaries_not_whole_documents_and_fits_the_budget():
    body = " ".join(f"Sentence number {i} tells about widget {i}." for i in range(4000))
    doc = text_document("huge.txt", body)
    doc.summary = "A catalogue of widgets."
    history = [("user", "older question " * 400), ("assistant", "older answer " * 400), ("user", "latest turn")]
    inp = RoundInput(prompt="What widgets are there?", documents=[doc], history=history)
    model = ScriptedModel(plan_json(t("t1", "analyst", ["huge.txt"])))
    await make_plan(inp, model, build_registry(entry_points=False), PlanLimits(context_tokens=4000))
    request = model.requests[0]
    user = request.messages[-1]["content"]
    assert "A catalogue of widgets." in user and "widget 3999" not in user
    assert "latest turn" in user  # the newest turn is kept when older ones do not fit
    from agents.toolkit.tokens import count_tokens
    assert sum(count_tokens(m["content"]) for m in request.messages) + request.max_tokens <= 4000
    assert request.hints.documents[0].size == doc.size
    assert request.hints.documents[0].text is None
    assert {a.name for a in request.hints.agents} >= {"analyst", "writer", "data_extractor"}


def test_render_plan_message_shows_answer_and_work_plan_in_the_plan_language():
    plan = Plan(language="de", answer="Ich fasse zusammen.", final_documents=[OutputSpec("memo.docx")],
                tasks=[TaskSpec("t1", "summarizer", "Fasse zusammen", ["a.pdf"]),
                       TaskSpec("t2", "writer", "Schreibe", [], [OutputSpec("memo.docx")], ["t1"])])
    text = render_plan_message(plan)
    assert text.startswith("Ich fasse zusammen.")
    assert "### Arbeitsplan" in text
    assert "1. **summarizer** `t1`: Fasse zusammen (Eingaben: a.pdf)" in text
    assert "2. **writer** `t2`: Schreibe (Ergebnisse: memo.docx; nach: t1)" in text
    assert "**Zu liefernde Dokumente:** memo.docx" in text


def test_a_plan_outcome_carries_the_plans_record_and_message_the_app_writes():
    plan = Plan(language="de", answer="Ich fasse zusammen.", final_documents=[OutputSpec("memo.docx")],
                tasks=[TaskSpec("t1", "summarizer", "Fasse zusammen", ["a.pdf"]),
                       TaskSpec("t2", "writer", "Schreibe", [], [OutputSpec("memo.docx")], ["t1"])])
    outcome = PlanOutcome(plan=plan, usage=Usage(), model="m", offline=True)
    assert outcome.message == render_plan_message(plan)
    assert Plan.from_record(outcome.record, plan.language, plan.answer) == plan
    plan.answer = "Erledigt."  # an answer finished after planning is the one written
    assert outcome.message.startswith("Erledigt.")


async def test_write_final_lists_delivered_failed_skipped_and_never_produced(inp):
    plan = Plan(language="en", answer="ok",
                final_documents=[OutputSpec("sum.md"), OutputSpec("memo.docx"), OutputSpec("t.csv")],
                tasks=[TaskSpec("t1", "summarizer", "s", outputs=[OutputSpec("sum.md")]),
                       TaskSpec("t2", "data_extractor", "x", outputs=[OutputSpec("t.csv")]),
                       TaskSpec("t3", "writer", "w", outputs=[OutputSpec("memo.docx")], depends_on=["t2"])])
    delivered = [OutputFile("sum.md", "text/markdown", b"# s")]
    results = {"t1": TaskResult("summary", files=delivered), "t2": None}
    model = ScriptedModel("Most of the work is done.")
    outcome = await write_final(inp, plan, results, {"t3": "it depends on task 't2'"}, delivered, model)
    assert outcome.text.startswith("Most of the work is done.")
    assert "**Delivered:** sum.md" in outcome.text
    assert "- step t2 (data_extractor) failed" in outcome.text
    assert "- step t3 (writer) was skipped: it needs step t2 (data_extractor), which did not complete" in outcome.text
    assert "- planned document memo.docx was not produced" in outcome.text
    assert "- planned document t.csv was not produced" in outcome.text
    request = model.requests[0]
    assert request.purpose == "final" and request.hints.review.failed == ("t2",)
    assert outcome.usage.calls == 1


async def test_the_final_review_sees_the_results_not_the_plans_own_answer(inp):
    # The plan's answer was written before any task ran; a small model reviewing the round repeated it
    # ("The station used 712 hours") above the analyst's finding (48,300 kWh).
    plan = Plan(language="en", answer="The station used 712 hours in October.",
                tasks=[TaskSpec("t1", "analyst", "How much energy did the station use?")])
    model = ScriptedModel("The analyst found the energy use.")
    await write_final(inp, plan, {"t1": TaskResult("The station used 48,300 kWh in October.")}, {}, [], model)
    shown = model.requests[0].messages[-1]["content"]
    assert "48,300 kWh" in shown and "How much energy did the station use?" in shown
    assert "712 hours" not in shown


async def test_a_round_that_planned_no_document_does_not_say_it_delivered_none(inp):
    plan = Plan(language="en", answer="", tasks=[TaskSpec("t1", "analyst", "How much energy was used?")])
    outcome = await write_final(inp, plan, {"t1": TaskResult("48,300 kWh [1].")}, {}, [], ScriptedModel("Done."))
    assert "Delivered" not in outcome.text and "**Completed steps:** t1 (analyst)" in outcome.text
    planned = Plan(language="en", answer="", tasks=[TaskSpec("t1", "writer", "Memo.", outputs=[OutputSpec("memo.docx")])])
    outcome = await write_final(inp, planned, {"t1": TaskResult("")}, {}, [], ScriptedModel("Done."))
    assert "**Delivered:** no documents" in outcome.text


async def test_a_planned_document_delivered_in_parts_or_their_archive_is_not_missing(inp):
    plan = Plan(language="en", answer="ok", final_documents=[OutputSpec("t.csv"), OutputSpec("u.csv")],
                tasks=[TaskSpec("t1", "data_extractor", "x", outputs=[OutputSpec("t.csv"), OutputSpec("u.csv")])])
    delivered = [OutputFile(name, "text/csv", b"") for name in ("t-Sheet1.csv", "t-Sheet2.csv", "u.zip")]
    outcome = await write_final(inp, plan, {"t1": TaskResult("tables", files=delivered)}, {}, delivered,
                                ScriptedModel("Done."))
    assert "not produced" not in outcome.text
    other = [OutputFile("tables.csv", "text/csv", b"")]
    outcome = await write_final(inp, plan, {"t1": TaskResult("tables", files=other)}, {}, other, ScriptedModel("Done."))
    assert "- planned document t.csv was not produced" in outcome.text


async def test_a_plan_without_a_usable_language_gets_the_requests_language():
    inp = RoundInput(prompt="Bitte fasse das Dokument zusammen.", documents=[text_document("a.txt", "Ein Satz.")])
    model = ScriptedModel(dict(plan_json(t("t1", "summarizer", ["a.txt"])), userLanguage="the user's language"))
    outcome = await make_plan(inp, model, build_registry(entry_points=False))
    assert outcome.plan.language == "de"


async def test_planning_requests_name_the_project_manager_so_a_client_can_route_them(inp):
    model = ScriptedModel("not json", plan_json(t("t1", "summarizer")), "Done.")
    outcome = await make_plan(inp, model, build_registry(entry_points=False))
    await write_final(inp, outcome.plan, {"t1": TaskResult("ok")}, {}, [], model)
    assert [r.agent for r in model.requests] == ["project_manager"] * 3


async def test_many_documents_still_fit_the_planning_budget():
    docs = [text_document(f"file-{i:03}.txt", f"Document {i} reports that sales rose by {i} percent. " * 40)
            for i in range(60)]
    inp = RoundInput(prompt="Summarise everything.", documents=docs)
    model = ScriptedModel(plan_json(t("t1", "summarizer")))
    await make_plan(inp, model, build_registry(entry_points=False), PlanLimits(context_tokens=8000))
    from agents.toolkit.tokens import count_tokens
    request = model.requests[0]
    assert sum(count_tokens(m["content"]) for m in request.messages) + request.max_tokens <= 8000
    assert "file-059.txt" in request.messages[-1]["content"]


async def test_the_detector_decides_the_language_and_the_model_only_breaks_a_tie():
    german = RoundInput(prompt="Fasse das Dokument zusammen", documents=[text_document("a.txt", "Text.")])
    model = ScriptedModel(plan_json(t("t1", "summarizer", ["a.txt"]), language="fr"))
    assert (await make_plan(german, model, build_registry(entry_points=False))).plan.language == "de"
    # A one-word prompt the detector has no evidence on: the model's userLanguage breaks the tie.
    from agents.language import detect_language

    terse = RoundInput(prompt="Kurzfassung", documents=[text_document("a.txt", "Text.")])
    model = ScriptedModel(plan_json(t("t1", "summarizer", ["a.txt"]), language="fr"))
    outcome = await make_plan(terse, model, build_registry(entry_points=False))
    assert outcome.plan.language == (detect_language("Kurzfassung", default="") or "fr")


async def test_a_request_without_documents_is_not_shown_the_example_that_works_on_one(inp):
    model = ScriptedModel(plan_json(), plan_json(t("t1", "summarizer", ["report.txt"])))
    registry = build_registry(entry_points=False)
    await make_plan(RoundInput(prompt="What is a good name for a bakery?", documents=[]), model, registry)
    await make_plan(inp, model, registry)
    bare, with_docs = model.requests
    from agents.toolkit.tokens import count_tokens

    def size(request):
        return sum(count_tokens(m["content"]) for m in request.messages)

    # Every worked example is an earlier turn; the summary of a document is one of them.
    assert not any("bericht.pdf" in m["content"] for m in bare.messages)
    assert any("bericht.pdf" in m["content"] for m in with_docs.messages)
    # ... and without documents the one task shown is a text to write.
    assert any('"agent":"writer","inputs":[]' in m["content"] for m in bare.messages)
    assert not any('"inputs":[]' in m["content"] for m in with_docs.messages[:-1])
    assert bare.messages[-1]["content"].endswith("Documents: none")
    # Qwen's tokenizer counts about as many (520 where this one counts 510); under 600 is the aim.
    assert size(bare) < 570


class Slides:
    """A plug-in agent that declares the files it makes."""

    name = "slides"
    description = "Makes slide decks."
    formats = ("pptx",)

    async def run(self, task, context):
        return TaskResult(text="")


async def test_the_planner_is_told_which_agents_make_which_files_and_names_a_tasks_files_before_its_agent(inp):
    """The capability data a small model chooses an agent by: each agent's formats, as a format-to-agents
    table, and the schema's task asks for its files before its agent (a model writes keys in order)."""
    registry = build_registry(entry_points=False)
    registry.add(Slides(), source="test")
    model = ScriptedModel(plan_json(t("t1", "slides", ["report.txt"], outputs=["deck.pptx"]), finals=["deck.pptx"]))
    outcome = await make_plan(inp, model, registry)
    system = model.requests[0].messages[0]["content"]
    assert ("Files they make: .docx, .md: analyst, summarizer, writer, translator; .xlsx, .csv: data_extractor; "
            ".pptx: slides.") in system
    task = model.requests[0].schema["properties"]["objWorkplan"]["items"]["properties"]
    assert list(task).index("outputs") < list(task).index("agent")
    # The worked examples show their keys in that order too.
    assert all(m["content"].find('"outputs"') < m["content"].find('"agent"')
               for m in model.requests[0].messages if m["role"] == "assistant" and '"agent"' in m["content"])
    assert [o.name for o in outcome.plan.tasks[0].outputs] == ["deck.pptx"]


async def test_the_final_review_says_which_step_is_still_in_another_language_than_asked(inp):
    # Qwen 0.5B, asked for a German summary of a French text, copied the French twice: the review said
    # "Ich habe ... verfasst" and listed it as done.
    plan = Plan(language="de", answer="ok", tasks=[TaskSpec("t1", "writer", "Fasse den Text auf Deutsch zusammen.")])
    results = {"t1": TaskResult("Molière ...", meta={"languageRedone": True, "languageMismatch": "de",
                                                     "languageWritten": "fr"})}
    outcome = await write_final(inp, plan, results, {}, [], ScriptedModel("Ich habe den Text verfasst."))
    assert "- Schritt t1 (writer) ist auf Französisch geschrieben, nicht wie gewünscht auf Deutsch" in outcome.text


def test_a_documents_beginning_is_split_once_however_many_rounds_list_it(monkeypatch: pytest.MonkeyPatch) -> None:
    # Every round of a conversation lists the same documents (its uploads, the earlier rounds' answers).
    from agents.planning import prompt

    split, calls = prompt.split_sentences, []
    monkeypatch.setattr(prompt, "split_sentences", lambda text: calls.append(text) or split(text))
    prompt._beginning.cache_clear()
    text = "The ideas page lists essays. It names three of them here. Then it goes on."
    first, again = text_document("ideas.md", text), text_document("ideas.md", text)
    assert prompt.beginning(first) == "The ideas page lists essays. It names three of them here."
    assert prompt.beginning(again) == prompt.beginning(first)
    assert len(calls) == 1
