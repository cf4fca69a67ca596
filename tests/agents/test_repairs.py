"""Deterministic plan repairs: each slip a small model makes, fixed without a second model call."""

from __future__ import annotations

import json
import logging
from dataclasses import replace
from pathlib import Path

import pytest

from agents.base import OutputSpec, Plan, TaskSpec
from agents.planning.fixes import repair_plan
from agents.planning.manager import RoundInput, make_plan
from agents.planning.plan import validate_plan
from agents.planning.repairs import close_json
from agents.registry import build_registry
from app.llm.client import OpenAIModel
from tests.agents.conftest import text_document
from tests.openai_stub import OpenAIStub, Reply, Truncated, no_remote_network, openai_stub  # noqa: F401

AGENTS = ["analyst", "data_extractor", "summarizer", "translator", "writer"]


def plan_json(*tasks: dict, finals: list[str] | None = None) -> dict:
    return {"userLanguage": "en", "objUserResponse": "On it.", "objWorkplan": list(tasks),
            "objFinalDocuments": [{"name": n, "type": n.rsplit(".", 1)[-1], "purpose": ""} for n in finals or []]}


def task(id: str, agent: str, inputs: list[str] | None = None, deps: list[str] | None = None,
         outputs: list[str] | None = None) -> dict:
    return {"id": id, "instructions": f"{agent} work", "agent": agent, "inputs": inputs or [],
            "outputs": [{"name": o, "type": "", "purpose": ""} for o in outputs or []], "dependsOn": deps or []}


def test_close_json_keeps_the_complete_part_of_a_cut_answer() -> None:
    assert close_json('{"a": [1, 2, {"b": "x') == {"a": [1, 2]}
    assert close_json('Sure: {"a": {"b": [1]}, "c": "unfini') == {"a": {"b": [1]}}
    assert close_json('{"a": "brace } in a string", "b": [3') == {"a": "brace } in a string", "b": []}
    assert close_json("no json here") is None


def test_repair_plan_reports_each_fix_in_a_sentence() -> None:
    plan = Plan(language="en", answer="ok", final_documents=[OutputSpec("report.md")], tasks=[
        TaskSpec("t1", "data_extractor", "x", ["a.xlsx"], [OutputSpec("a.csv")], ["t1"]),
        TaskSpec("t2", "writer", "w", ["a.csv"], [OutputSpec("a.csv"), OutputSpec("memo.docx")])])
    fixed, notes = repair_plan(plan, AGENTS, ["a.xlsx"])
    assert fixed.tasks[0].depends_on == [] and fixed.tasks[1].depends_on == ["t1"]
    assert [o.name for o in fixed.tasks[1].outputs] == ["memo.docx"]
    assert [d.name for d in fixed.final_documents] == ["memo.docx"]
    assert len(notes) == 4, notes


def test_a_task_that_reads_the_file_it_is_to_make_reads_the_upload_instead() -> None:
    # Qwen 0.5B: {"id": "t1", "inputs": ["energy.csv"], "outputs": ["energy.csv"]}: no repair fixed it,
    # and the round failed after the model's own repair repeated it.
    plan = Plan(language="en", answer="ok", tasks=[
        TaskSpec("t1", "data_extractor", "x", ["energy.csv"], [OutputSpec("energy.csv")])])
    fixed, notes = repair_plan(plan, AGENTS, ["pump.txt"])
    assert fixed.tasks[0].inputs == ["pump.txt"] and [o.name for o in fixed.tasks[0].outputs] == ["energy.csv"]
    assert notes == ["task 't1': input 'energy.csv' is its own output; it reads 'pump.txt' instead"]
    assert validate_plan(fixed, AGENTS, ["pump.txt"], 4) == []
    fixed, notes = repair_plan(plan, AGENTS, ["pump.txt", "b.txt"])
    assert fixed.tasks[0].inputs == [] and notes == ["task 't1': dropped input 'energy.csv', which it is to make itself"]


@pytest.fixture
def inp() -> RoundInput:
    return RoundInput(prompt="Summarise the report and write a memo.",
                      documents=[text_document("report.txt", "The plant made 12 tons. It rained.")])


def test_a_task_that_copies_a_worked_example_does_the_users_request() -> None:
    from agents.planning.prompt import examples as worked
    from agents.planning.repairs import unexampled

    examples = list(dict.fromkeys(worked(True) + worked(False)))
    copied = Plan(language="en", answer="", tasks=[
        TaskSpec("t1", "analyst", "What is the capital of France? Cite the passage.", ["manual.docx"])])
    fixed, notes = unexampled(copied, "How often should I descale the kettle?", examples)
    assert fixed.tasks[0].instructions == "How often should I descale the kettle?" and len(notes) == 1
    # The user asked it, or the task only shares the example's form ("Cite le passage"): it stands.
    assert unexampled(copied, "What is the capital of France?", examples) == (copied, [])
    own = Plan(language="fr", answer="", tasks=[
        TaskSpec("t1", "analyst", "Quelle est la puissance ? Cite le passage.", ["manual.docx"])])
    assert unexampled(own, "Quelle est la puissance de la bouilloire ?", examples) == (own, [])


def test_a_file_to_make_named_like_one_the_conversation_has_gets_a_name_of_its_own() -> None:
    # Qwen 0.5B, "Now translate that to German." after a summary delivered as status-report-summary.docx:
    # the translator was to read that file and write one of the same name; the round failed planning.
    plan = Plan(language="de", answer="ok", final_documents=[OutputSpec("summary.docx")], tasks=[
        TaskSpec("t1", "translator", "Translate it into German", ["summary.docx"], [OutputSpec("summary.docx")])])
    fixed, notes = repair_plan(plan, AGENTS, ["summary.docx", "report.docx"])
    assert fixed.tasks[0].inputs == ["summary.docx"] and [o.name for o in fixed.tasks[0].outputs] == ["summary-2.docx"]
    assert [d.name for d in fixed.final_documents] == ["summary-2.docx"]
    assert notes == ["task 't1': output 'summary.docx' has the name of an uploaded document; named 'summary-2.docx'"]
    assert validate_plan(fixed, AGENTS, ["summary.docx", "report.docx"], 4) == []


@pytest.mark.parametrize(("answer", "fixed"), [
    (plan_json(task("t1", "summarizer", ["report.txt"], deps=["t1"])), "dropped its dependency on itself"),
    (plan_json(task("t1", "summarizer", ["report.txt"], outputs=["sum.md"]), finals=["report.md"]),
     "taken from the tasks' outputs instead: sum.md"),
    (Truncated(json.dumps(plan_json(task("t1", "summarizer", ["report.txt"]), finals=["a.md"]))[:-30]),
     "the answer was cut at the token limit"),
])
async def test_the_stub_models_slips_are_repaired_without_a_second_call(
        openai_stub: OpenAIStub, no_remote_network: None, inp: RoundInput, answer: object, fixed: str,
        caplog: pytest.LogCaptureFixture) -> None:
    openai_stub.script([answer if isinstance(answer, Truncated) else Reply(answer)])
    caplog.set_level(logging.WARNING, logger="foreman.planner")
    async with OpenAIModel(base_url=openai_stub.base_url, api_key="k", model="stub-model", timeout=10,
                           max_retries=0) as model:
        outcome = await make_plan(inp, model, build_registry(entry_points=False))
    assert len(openai_stub.requests) == 1  # no second model call
    assert [t.agent for t in outcome.plan.tasks] == ["summarizer"]
    assert any(fixed in note for note in outcome.repairs), outcome.repairs
    assert any(fixed in r.getMessage() and r.levelname == "WARNING" for r in caplog.records)


async def test_a_cut_answer_with_nothing_to_keep_is_asked_again_with_more_room(
        openai_stub: OpenAIStub, no_remote_network: None, inp: RoundInput) -> None:
    good = plan_json(task("t1", "summarizer", ["report.txt"]))
    openai_stub.script([Truncated('{"userLanguage": "en", "objUserResponse": "I will summ'), Reply(good)])
    async with OpenAIModel(base_url=openai_stub.base_url, api_key="k", model="stub-model", timeout=10,
                           max_retries=0, context_tokens=8000) as model:
        outcome = await make_plan(inp, model, build_registry(entry_points=False))
    first, second = openai_stub.requests
    assert second["max_tokens"] > first["max_tokens"]
    assert outcome.plan.tasks[0].agent == "summarizer"


async def test_the_model_side_repair_shows_the_answer_and_the_exact_errors(
        openai_stub: OpenAIStub, no_remote_network: None, inp: RoundInput) -> None:
    bad = plan_json(task("t1", "poet", ["report.txt"]))
    openai_stub.script([Reply(bad), Reply(plan_json(task("t1", "summarizer", ["report.txt"])))])
    async with OpenAIModel(base_url=openai_stub.base_url, api_key="k", model="stub-model", timeout=10,
                           max_retries=0) as model:
        await make_plan(inp, model, build_registry(entry_points=False))
    repair = openai_stub.requests[1]["messages"]
    assert repair[-2] == {"role": "assistant", "content": json.dumps(bad)}
    assert "task 't1': unknown agent 'poet'" in repair[-1]["content"]
    # The plan request carries the schema with the registered agents as an enum, work plan first.
    schema = openai_stub.requests[0]["response_format"]["json_schema"]
    assert schema["strict"] is True
    assert list(schema["schema"]["properties"])[2:] == ["objWorkplan", "objFinalDocuments"]
    assert schema["schema"]["properties"]["objWorkplan"]["items"]["properties"]["agent"]["enum"] == AGENTS
    assert openai_stub.requests[0]["temperature"] == 0.0


@pytest.mark.parametrize(("instructions", "chosen"), [
    ("Fasse das Dokument in fünf Sätzen zusammen.", "writer"),
    ("Extract the table from sales.xlsx as CSV.", "writer"),
    ("Traduis le document en anglais.", "summarizer"),
    ("Combine the a.docx file into one document.", "writer"),  # the 0.5B model's reading of "Fasse ... zusammen"
    ("Was ist das Quadrat von 12 laut der Tabelle?", "data_extractor"),
])
def test_a_registered_agent_the_model_chose_is_kept_whatever_the_words(instructions: str, chosen: str) -> None:
    """A valid choice is the model's: neither the task's words nor the request overrule it."""
    plan = Plan(language="de", answer="ok", tasks=[TaskSpec("t1", chosen, instructions, ["a.docx"])])
    for request in ("", "Fasse das Dokument zusammen", "Extract the table as CSV"):
        fixed, notes = repair_plan(plan, AGENTS, ["a.docx"], request)
        assert fixed == plan and notes == []


FORMATS = build_registry(entry_points=False).formats()


def test_a_file_its_agent_cannot_make_is_an_error_naming_the_agent_that_makes_it() -> None:
    """Issue 29: the 0.5B model added "the table as Excel" as a summarizer task. A workbook from an agent
    that cannot make one is invalid, and the error the model's repair call reads names the agent that
    makes it (the format is capability data, not the task's words)."""
    plan = Plan(language="en", answer="ok", final_documents=[OutputSpec("table.xlsx")], tasks=[
        TaskSpec("t1", "summarizer", "Summarise the table.", ["a.csv"]),
        TaskSpec("t2", "summarizer", "Give me the table as Excel.", ["a.csv"], [OutputSpec("table.xlsx")])])
    assert validate_plan(plan, AGENTS, ["a.csv"], 8, FORMATS) == [
        "task 't2': agent 'summarizer' cannot deliver 'table.xlsx' (it delivers .docx, .md, .txt, .markdown); "
        ".xlsx is made by data_extractor"]


def test_a_final_document_no_task_makes_gets_a_task_of_the_one_agent_that_makes_its_format() -> None:
    """Issue 29: revising "Summarise this table." with "Also give me the table as Excel.", the 0.5B model
    listed testCSV.xlsx among the final documents and planned no task making it."""
    plan = Plan(language="en", answer="ok", final_documents=[OutputSpec("testCSV.xlsx", "xlsx", "Excel")],
                tasks=[TaskSpec("t1", "summarizer", "Summarise the table.", ["testCSV.csv"])])
    fixed, notes = repair_plan(plan, AGENTS, ["testCSV.csv", "old.pdf"], formats=FORMATS)
    assert [(t.id, t.agent, t.inputs, [o.name for o in t.outputs]) for t in fixed.tasks] == [
        ("t1", "summarizer", ["testCSV.csv"], []), ("t2", "data_extractor", ["testCSV.csv"], ["testCSV.xlsx"])]
    assert [d.name for d in fixed.final_documents] == ["testCSV.xlsx"]
    assert notes == ["final document testCSV.xlsx is produced by no task; task 't2' (data_extractor, which "
                     "makes .xlsx) delivers it from testCSV.csv"]
    assert validate_plan(fixed, AGENTS, ["testCSV.csv", "old.pdf"], 8, FORMATS) == []
    # A format several agents make names no agent: the document is dropped, as before.
    word = replace(plan, final_documents=[OutputSpec("report.docx")])
    fixed, notes = repair_plan(word, AGENTS, ["testCSV.csv"], formats=FORMATS)
    assert fixed.tasks == word.tasks and fixed.final_documents == []


def test_an_agent_that_declares_no_formats_may_be_planned_with_any_file() -> None:
    plan = Plan(language="en", answer="ok", tasks=[TaskSpec("t1", "echo", "Echo.", [], [OutputSpec("x.pptx")])])
    assert validate_plan(plan, [*AGENTS, "echo"], [], 8, FORMATS) == []
    assert repair_plan(plan, [*AGENTS, "echo"], [], formats=FORMATS) == (plan, [])


def test_repairs_do_not_read_the_offline_planners_intent_patterns() -> None:
    import agents.planning.repairs as repairs

    assert not [name for name in vars(repairs) if "intent" in name.lower()]
    assert "agents.offline" not in Path(repairs.__file__).read_text(encoding="utf-8")


def test_a_dependency_cycle_is_broken_at_the_dependency_on_a_later_task() -> None:
    plan = Plan(language="en", answer="ok", tasks=[
        TaskSpec("t1", "data_extractor", "Extract.", ["a.xlsx"], [OutputSpec("a.csv")], ["t3"]),
        TaskSpec("t2", "analyst", "Analyse.", ["a.csv"], [], ["t1"]),
        TaskSpec("t3", "writer", "Write.", [], [OutputSpec("memo.md")], ["t2", "t9"])],
        final_documents=[OutputSpec("memo.md")])
    fixed, notes = repair_plan(plan, AGENTS, ["a.xlsx"])
    assert [t.depends_on for t in fixed.tasks] == [[], ["t1"], ["t2"]]
    assert notes == ["task 't3': dropped its dependency on 't9', which is not in the plan",
                     "task 't1': dropped its dependency on 't3', which closed a cycle (t1 -> t3 -> t2 -> t1)"]
    assert validate_plan(fixed, AGENTS, ["a.xlsx"], 10) == []


def test_a_task_repeated_word_for_word_is_dropped() -> None:
    plan = Plan(language="en", answer="ok", tasks=[
        TaskSpec("t1", "summarizer", "Summarise it.", ["a.docx"]),
        TaskSpec("t2", "summarizer", "Summarise  it.", ["a.docx"]),
        TaskSpec("t3", "writer", "Write a memo.", [], [OutputSpec("memo.md")], ["t2"])])
    fixed, notes = repair_plan(plan, AGENTS, ["a.docx"])
    assert [t.id for t in fixed.tasks] == ["t1", "t3"] and fixed.tasks[1].depends_on == ["t1"]
    assert "task 't2': dropped, it repeats task 't1'" in notes
