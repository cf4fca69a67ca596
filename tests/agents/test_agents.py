"""The built-in agents with a scripted model: prompts, budgets, files, failures."""

from __future__ import annotations

import csv
import io

import docx
import pytest

from agents.base import OutputFile, OutputSpec, Plan, TaskResult, TaskSpec
from agents.errors import AgentsError, UnknownAgentError
from agents.model import ModelError, Usage
from agents.registry import Registry, build_registry
from agents.requests import WriteHints
from agents.tasks.calls import input_budget
from agents.tasks.run import run_task, task_context
from agents.toolkit.tokens import count_tokens
from tests.agents.conftest import output_document, text_document
from tests.scripted import ScriptedModel


def context_for(task: TaskSpec, model, *docs, language: str = "en", results=None):
    plan = Plan(language=language, answer="", tasks=[task])
    return task_context(plan, task, prompt="request", uploads=list(docs), results=results or {}, outputs={},
                        model=model)


async def test_the_writer_delivers_the_planned_word_file_only_from_the_model_text():
    model = ScriptedModel("# Memo\n\nThe plant made **12 tons**.")
    task = TaskSpec("t1", "writer", "Write a memo on output", ["r.txt"], [OutputSpec("memo.docx", "docx", "Memo")])
    result = await run_task(build_registry(entry_points=False), task,
                            context_for(task, model, text_document("r.txt", "The plant made 12 tons.")))
    assert [f.name for f in result.files] == ["memo.docx"]  # asked for Word: Word only
    paragraphs = [p.text for p in docx.Document(io.BytesIO(result.files[0].data)).paragraphs]
    assert any("12 tons" in p for p in paragraphs)
    request = model.requests[0]
    assert "The plant made 12 tons." in request.messages[1]["content"]
    # The title its instructions imply, not its file's name alone.
    assert isinstance(request.hints, WriteHints) and request.hints.title == "Memo on output"
    assert result.usage.calls == 1 and result.offline is False


@pytest.mark.parametrize(("language", "instructions", "written"), [
    ("en", "Summarize the report in three sentences.", "The plant made 12 tons. Output rose. Costs fell."),
    ("de", "Fasse den Bericht in drei Sätzen zusammen.", "Das Werk machte 12 Tonnen. Die Menge stieg. Kosten sanken."),
    ("fr", "Résume le rapport en trois phrases.", "L'usine a produit 12 tonnes. La production a augmenté."),
])
async def test_a_writer_asked_for_no_file_answers_in_the_conversation(language, instructions, written):
    # Issue 50: a summary asked for in the chat landed in files named after the request and the chat got
    # none (a real model chose the writer). No file planned: the text is the message, and no file is made.
    model = ScriptedModel(written)
    task = TaskSpec("t1", "writer", instructions, ["r.txt"])
    result = await run_task(build_registry(entry_points=False), task,
                            context_for(task, model, text_document("r.txt", "The plant made 12 tons."), language=language))
    assert result.files == [] and result.text == written and not result.undelivered
    assert "12" in result.text


async def test_the_translator_chunks_a_long_document_within_the_budget():
    paragraphs = [f"Paragraph {i} says that the number {i} follows {i - 1}." for i in range(1, 600)]
    doc = text_document("long.txt", "\n\n".join(paragraphs))
    model = ScriptedModel(*[f"part {i}" for i in range(1, 50)])
    model.context_tokens = 2000  # a small model forces several chunks
    task = TaskSpec("t1", "translator", "Translate into French", ["long.txt"])
    result = await run_task(build_registry(entry_points=False), task, context_for(task, model, doc))
    calls = len(model.requests)
    assert calls >= 4
    assert result.text.endswith("\n\n".join(f"part {i}" for i in range(1, calls + 1)))
    for request in model.requests:
        assert "into French" in request.messages[0]["content"]
        assert request.hints.target_language == "fr"
        assert count_tokens(request.messages[1]["content"]) <= input_budget(model)
    assert [f.name for f in result.files] == ["long.fr.md"]
    assert result.usage.calls == calls


async def test_the_data_extractor_asks_the_model_to_tabulate_prose():
    answer = {"tables": [{"name": "Output", "rows": [["Plant", "Tons"], ["Basel", "12"], ["Bern", "7"]]}]}
    model = ScriptedModel(answer)
    doc = text_document("r.txt", "Basel made 12 tons, Bern made 7 tons.")
    task = TaskSpec("t1", "data_extractor", "Tabulate output per plant", ["r.txt"],
                    outputs=[OutputSpec("r-tables.xlsx"), OutputSpec("r-tables.csv")])
    result = await run_task(build_registry(entry_points=False), task, context_for(task, model, doc))
    assert model.requests[0].schema is not None and model.requests[0].schema_name == "tables"
    files = {f.name: f for f in result.files}
    assert set(files) == {"r-tables.csv", "r-tables.xlsx"}
    rows = list(csv.reader(io.StringIO(files["r-tables.csv"].data.decode("utf-8-sig"))))
    assert rows == [["Plant", "Tons"], ["Basel", "12"], ["Bern", "7"]]
    assert "| Basel | 12 |" in result.text


async def test_a_model_failure_propagates_with_the_tasks_usage():
    model = ScriptedModel("partial", ModelError("provider down", usage=Usage(prompt_tokens=5, calls=1)))
    model.context_tokens = 1200
    doc = text_document("long.txt", "\n\n".join(f"Fact {i} is true." for i in range(600)))
    task = TaskSpec("t1", "summarizer", "Summarise", ["long.txt"])
    with pytest.raises(ModelError, match="provider down") as caught:
        await run_task(build_registry(entry_points=False), task, context_for(task, model, doc))
    # The engine books what the task spent before it failed.
    assert caught.value.usage.calls == 2


async def test_run_task_needs_a_known_agent_and_a_task_result():
    task = TaskSpec("t1", "poet", "rhyme")
    with pytest.raises(UnknownAgentError):
        await run_task(build_registry(entry_points=False), task, context_for(task, ScriptedModel()))

    class Sloppy:
        name = "sloppy"
        description = "Returns a string instead of a TaskResult."

        async def run(self, task, context):
            return "done"

    registry = Registry()
    registry.add(Sloppy())
    task = TaskSpec("t1", "sloppy", "x")
    with pytest.raises(AgentsError, match="returned str, not a TaskResult"):
        await run_task(registry, task, context_for(task, ScriptedModel()))


def test_a_task_sees_the_uploads_and_only_its_dependencies_outputs_and_results():
    t1 = TaskSpec("t1", "summarizer", "s", outputs=[OutputSpec("sum.md")])
    t2 = TaskSpec("t2", "analyst", "a", outputs=[OutputSpec("notes.md")])
    t3 = TaskSpec("t3", "writer", "w", inputs=["sum.md"], depends_on=["t1"])
    plan = Plan("en", "", tasks=[t1, t2, t3])
    results = {"t1": TaskResult("summary"), "t2": TaskResult("answer")}
    outputs = {"t1": [text_document("sum.md", "- fact")], "t2": [text_document("notes.md", "- other")]}
    context = task_context(plan, t3, prompt="p", uploads=[text_document("a.txt", "A."), text_document("sum.md", "old")],
                           results=results, outputs=outputs, model=ScriptedModel())
    assert set(context.documents) == {"a.txt", "sum.md"}
    assert context.documents["sum.md"].text == "- fact"  # the dependency's output, not the older upload
    assert list(context.predecessors) == ["t1"]


def test_an_output_docx_is_readable_by_later_tasks():
    from agents.toolkit.files import DOCX_MIME, docx_bytes

    doc = output_document(OutputFile("r.docx", DOCX_MIME, docx_bytes("# Title\n\nThe plant made 12 tons.")))
    assert doc is not None and "The plant made 12 tons." in doc.text
    assert output_document(OutputFile("x.bin", "application/octet-stream", b"\x00\x01")) is None


async def test_control_characters_from_pdf_text_do_not_break_docx_or_xlsx():
    answer = {"tables": [{"name": "odd\x01name", "rows": [["a\x00b", "c"]]}]}
    doc = text_document("odd.txt", "Text with a \x0b vertical tab and \x01 control.")
    registry = build_registry(entry_points=False)
    answer["tables"][0]["rows"].append(["d", "e\x02"])
    extract = TaskSpec("t1", "data_extractor", "Tabulate", ["odd.txt"])
    tables = await run_task(registry, extract, context_for(extract, ScriptedModel(answer), doc))
    assert {f.name for f in tables.files} == {"odd-tables.xlsx"}
    write = TaskSpec("t2", "writer", "Write", ["odd.txt"], [OutputSpec("t.docx", "docx", "T")])
    written = await run_task(registry, write, context_for(write, ScriptedModel("# T\n\nbad \x01 char"), doc))
    docx_file = next(f for f in written.files if f.name.endswith(".docx"))
    assert "bad  char" in "\n".join(p.text for p in docx.Document(io.BytesIO(docx_file.data)).paragraphs)


async def test_a_document_without_text_is_reported_not_sent_to_the_model():
    empty = text_document("scan.pdf", "")
    registry = build_registry(entry_points=False)
    for agent in ("summarizer", "translator"):
        task = TaskSpec("t1", agent, "Work on it", ["scan.pdf"])
        result = await run_task(registry, task, context_for(task, ScriptedModel(), empty, language="fr"))
        assert "scan.pdf ne contient aucun texte lisible." in result.text


async def test_the_data_extractor_names_each_workbook_sheet_once_in_the_user_s_language():
    from tests.agents.conftest import load_document

    doc = load_document("2023-half-year-analyses-by-segment.xlsx")
    task = TaskSpec("t1", "data_extractor", "Die Tabellen als Excel-Datei", [doc.name])
    result = await run_task(build_registry(entry_points=False), task,
                            context_for(task, ScriptedModel(), doc, language="de"))
    line = next(x for x in result.text.splitlines() if x.startswith("- Blatt „OS-Rev.and results 30 06 2023“"))
    assert line == "- Blatt „OS-Rev.and results 30 06 2023“: 2023-half-year-analyses-by-segment.xlsx, 39 Zeilen × 10 Spalten"


def test_a_writers_unplanned_file_is_named_after_its_title_cut_at_a_word():
    from agents.builtin.writer import _formats

    assert _formats([], "Fasse diesen Text auf Deutsch in drei Sätzen zusammen.") == [
        "fasse-diesen-text-auf-deutsch-in-drei.md", "fasse-diesen-text-auf-deutsch-in-drei.docx"]
    assert _formats([], "Short title") == ["short-title.md", "short-title.docx"]
    assert _formats(["memo.docx"], "Anything at all") == ["memo.docx"]
