"""A small model's slips in what a planned task is told and reads (`agents.planning.slips`): the catalogue
lines and earlier turns it copies into instructions, and the document the request points at that
its plan does not read. The examples are what Qwen2.5 0.5B planned in the held-out runs."""

from __future__ import annotations

import json

import pytest

from agents.base import OutputSpec, Plan, TaskSpec
from agents.knowledge.memory import catalogue_descriptions, render_catalogue
from agents.language import ANSWER
from agents.model import ModelRequest, ModelResponse
from agents.planning.manager import RoundInput, make_plan
from agents.planning.slips import asked_formats, pointed_inputs, uncopied
from agents.registry import build_registry
from tests.agents.conftest import text_document
from tests.scripted import ScriptedModel

FACTS = [
    {"name": "manual.docx", "ext": "docx", "size": 37_000, "tables": 1, "round": 1, "origin": "uploaded",
     "summary": 'begins "AquaBoil 3000 Electric Kettle - User Manual 1. Safety instructions"; body: 1,367 characters'},
    {"name": "trail.html", "ext": "html", "size": 1_058, "round": 1, "origin": "uploaded",
     "summary": 'begins "Eagle Ridge Loop - a moderate hike of 11.4 km"'},
    {"name": "summary-round-1.md", "ext": "md", "size": 500, "round": 1, "origin": ANSWER,
     "summary": "writer's summary in round 1: I wrote status-summary.docx. The project is amber."},
    {"name": "status-summary.docx", "ext": "docx", "size": 5_000, "round": 1, "origin": "produced",
     "summary": 'begins "Project Atlas"'},
]
PLAN_TURN = ("[round 1] Plan: I have planned 1 step: run the agent writer. Tasks: t1 writer: Summarize the "
             "status report in two sentences. (delivered).")


def _plan(*tasks: TaskSpec) -> Plan:
    return Plan(language="en", answer="On it.", tasks=list(tasks))


def test_a_documents_catalogue_line_copied_into_instructions_is_taken_out():
    copied = ('Find the entry fee in manual.docx (docx, 37 KB, 1 tables, round 1, uploaded): begins "AquaBoil 3000 '
              'Electric Kettle - User Manual 1. Safety instructions".')
    plan, notes = uncopied(_plan(TaskSpec(id="t1", agent="analyst", instructions=copied, inputs=["manual.docx"])),
                           "How much is the entry fee?", catalogue_descriptions(FACTS), [])
    assert plan.tasks[0].instructions == "Find the entry fee in manual.docx."
    assert notes == ["task 't1': what its instructions copied from the documents' catalogue lines was taken out"]
    # The catalogue the planner sees is made of the same descriptions.
    assert render_catalogue(FACTS).splitlines()[0] == "- manual.docx" + catalogue_descriptions(FACTS)["manual.docx"]


def test_instructions_that_only_copy_an_earlier_plan_become_the_request():
    copied = "Plan: I have planned 1 step: run the agent writer. Tasks: t1 writer: Summarize the status report."
    plan, notes = uncopied(_plan(TaskSpec(id="t1", agent="writer", instructions=copied)),
                           "Now translate that to German.", catalogue_descriptions(FACTS), [PLAN_TURN])
    assert plan.tasks[0].instructions == "Now translate that to German."
    assert "it does the user's request instead" in notes[0]


def test_a_task_of_the_round_it_continues_planned_again_word_for_word_is_kept():
    # "continue" after a stop: the history asks for the same tasks with the same instructions, so that
    # what they delivered is reused; the instructions copy an earlier turn and must.
    turn = "[round 1] Plan: On it. Tasks: t1 summarizer: Summarize the document and write a report about it. (delivered)."
    plan = _plan(TaskSpec(id="t1", agent="summarizer", instructions="Summarize the document and write a report about it."))
    assert uncopied(plan, "continue", {}, [turn], ["Summarize the document and write a report about it."]) == (plan, [])
    assert uncopied(plan, "continue", {}, [turn])[0].tasks[0].instructions == "continue"


def test_instructions_of_their_own_that_quote_an_earlier_turn_or_the_request_are_kept():
    own = TaskSpec(id="t1", agent="writer",
                   instructions="Write a short email to the team saying: Summarize the status report in two sentences.")
    asked = TaskSpec(id="t2", agent="analyst", instructions='What does "Eagle Ridge Loop - a moderate hike" mean?',
                     inputs=["trail.html"])
    plan = _plan(own, asked)
    kept, notes = uncopied(plan, 'What does "Eagle Ridge Loop - a moderate hike" mean?',
                           catalogue_descriptions(FACTS), [PLAN_TURN])
    assert kept is plan and notes == []


def test_a_task_that_reads_none_of_what_the_request_points_at_reads_it():
    task = TaskSpec(id="t1", agent="analyst", instructions="Summarise each document in one sentence.",
                    inputs=["manual.docx"])
    plan, notes = pointed_inputs(_plan(task), "Summarise the second one only.", FACTS)
    assert plan.tasks[0].inputs == ["trail.html"]
    assert notes == ["task 't1': the request points at trail.html, which it did not read (manual.docx): it reads them"]
    # A task that reads nothing gets it too; one that reads it (among others) keeps its inputs.
    plan, _ = pointed_inputs(_plan(TaskSpec(id="t1", agent="writer", instructions="x")), "Translate that to German.",
                             FACTS)
    assert plan.tasks[0].inputs == ["summary-round-1.md"]
    both = _plan(TaskSpec(id="t1", agent="analyst", instructions="x", inputs=["manual.docx", "trail.html"]))
    assert pointed_inputs(both, "Compare the second one with the first.", FACTS) == (both, [])


def test_the_file_an_earlier_answer_went_to_is_that_answer_and_unpointed_requests_are_left_alone():
    file = _plan(TaskSpec(id="t1", agent="translator", instructions="x", inputs=["status-summary.docx"]))
    assert pointed_inputs(file, "Now translate that to German.", FACTS) == (file, [])
    later = _plan(TaskSpec(id="t1", agent="analyst", instructions="x", inputs=["manual.docx"]),
                  TaskSpec(id="t2", agent="writer", instructions="y", depends_on=["t1"]))
    assert pointed_inputs(later, "What is the warranty?", FACTS) == (later, [])
    # A word of a name or a kind of file is a guess, not a pointer: the model's choice stands.
    assert pointed_inputs(later, "Make an Excel file of the kettle's data.", FACTS) == (later, [])
    named = pointed_inputs(later, "What does trail.html say about dogs?", FACTS)[0]
    assert named.tasks[0].inputs == ["trail.html"] and named.tasks[1].depends_on == ["t1"]


class _Copier(ScriptedModel):
    """Plans one analyst task whose instructions copy the request's first catalogue line, as Qwen did."""

    async def complete(self, request: ModelRequest) -> ModelResponse:
        if request.purpose != "plan":
            return await super().complete(request)
        self.requests.append(request)
        line = request.messages[-1]["content"].split("Documents:\n- ", 1)[1].splitlines()[0]
        plan = {"userLanguage": "en", "objUserResponse": "On it.", "objFinalDocuments": [], "objWorkplan": [
            {"id": "t1", "agent": "analyst", "instructions": f"Find the opening hours in {line}",
             "inputs": ["museum.txt"], "outputs": [], "dependsOn": []}]}
        return ModelResponse(text=json.dumps(plan), data=plan, usage=self.usage, model=self.name)


async def test_a_plan_whose_task_copies_a_catalogue_line_is_told_only_its_instruction():
    doc = text_document("museum.txt", "The museum opens at 9 am. Entry is free on Sundays. " * 3)
    inp = RoundInput(prompt="When does the museum open?", documents=[doc])
    outcome = await make_plan(inp, _Copier(), build_registry(entry_points=False))
    assert outcome.plan.tasks[0].instructions == "Find the opening hours in museum.txt"
    assert any("catalogue lines was taken out" in r for r in outcome.repairs)


def test_a_file_type_the_request_names_and_no_task_delivers_is_delivered_by_the_last_task():
    formats = build_registry(entry_points=False).formats()
    workbook = [{"name": "sales.xlsx", "ext": "xlsx", "origin": "uploaded", "round": 1}]
    writer = _plan(TaskSpec(id="t1", agent="writer", instructions="Jahressummen", inputs=["sales.xlsx"]))
    plan, notes = asked_formats(writer, "Gib mir die Jahressummen aller Jahre als CSV-Datei.", formats, workbook)
    [task] = plan.tasks
    assert (task.agent, [o.name for o in task.outputs]) == ("data_extractor", ["gib-mir-die-jahressummen-aller-jahre-als.csv"])
    assert "asks for .csv" in notes[0] and "goes to 'data_extractor'" in notes[1]
    # Asked for Word, a Word file named like the task's own output; a type the request only reads is none to make.
    summary = _plan(TaskSpec(id="t1", agent="summarizer", instructions="x", inputs=["sales.xlsx"],
                             outputs=[OutputSpec(name="summary.md", type="md")]))
    plan, _ = asked_formats(summary, "Summarise the Excel file as a Word document.", formats, workbook)
    assert [o.name for o in plan.tasks[0].outputs] == ["summary.md", "summary.docx"]
    assert asked_formats(writer, "What does the Excel file say about 2022?", formats, workbook) == (writer, [])
    assert asked_formats(_plan(), "Make me a CSV of it.", formats, workbook) == (_plan(), [])


@pytest.mark.parametrize(("language", "request_text", "name"), [
    ("en", "Summarise this document in English and give it to me as a Word file.", "summary-of-jahresbericht-2025.docx"),
    ("de", "Fasse dieses Dokument in drei Sätzen zusammen, als Word-Datei.", "zusammenfassung-von-jahresbericht-2025.docx"),
    ("fr", "Résume ce document et donne-le-moi en fichier Word.", "résumé-de-jahresbericht-2025.docx"),
])
def test_a_summary_asked_for_as_a_file_is_named_for_what_it_summarises(language, request_text, name):
    # Issue 50: "Fasse dieses Dokument in drei Sätzen zusammen" became fasse-dieses-dokument-in-drei-sätzen.docx.
    formats = build_registry(entry_points=False).formats()
    summary = Plan(language=language, answer="-", tasks=[TaskSpec(id="t1", agent="summarizer", instructions="x",
                                                                  inputs=["Jahresbericht 2025.pdf"])])
    plan, _ = asked_formats(summary, request_text, formats, [])
    assert [o.name for o in plan.tasks[0].outputs] == [name]
