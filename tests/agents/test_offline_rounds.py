"""Whole rounds with the offline model over real documents from the shared corpus."""

from __future__ import annotations

import csv
import io
import zipfile

import docx
import openpyxl
import pytest

from agents.model import Usage
from agents.offline import OfflineModel
from agents.planning.manager import render_plan_message
from agents.registry import Registry, build_registry, builtin_agents
from agents.toolkit.tokens import count_tokens
from tests.agents.conftest import RecordingModel, Round, load_document, play_round, squash


async def offline_round(prompt: str, *names: str, context_tokens: int = 8192) -> tuple[Round, RecordingModel]:
    model = RecordingModel(OfflineModel(context_tokens=context_tokens))
    docs = [load_document(n) for n in names]
    return await play_round(prompt, docs, model, build_registry(entry_points=False)), model


def quotes(text: str) -> list[str]:
    return [line[2:] for line in text.splitlines() if line.startswith("> ")]


async def test_a_summary_quotes_sentences_of_the_document():
    done, _ = await offline_round("Summarize this document please.", "sample-french-1.txt")
    assert [t.agent for t in done.plan.plan.tasks] == ["summarizer"]
    [summary] = done.by_agent("summarizer")
    sentences = quotes(summary.text)
    assert 3 <= len(sentences) <= 5
    source = squash(load_document("sample-french-1.txt").text)
    assert all(s in source for s in sentences)
    assert "no language model was used" in summary.text
    assert summary.offline is True


async def test_a_long_document_is_summarised_by_map_reduce_within_the_context():
    done, model = await offline_round("Give me a summary.", "tracemonkey.pdf", context_tokens=3000)
    purposes = [request.purpose for request, _ in model.calls]
    assert purposes.count("map") >= 2 and "reduce" in purposes  # parts of the window, at most SUMMARY_TOKENS
    for request, _ in model.calls:
        assert sum(count_tokens(m["content"]) for m in request.messages) + (request.max_tokens or 0) <= 3000
    [summary] = done.by_agent("summarizer")
    source = squash(load_document("tracemonkey.pdf").text)
    sentences = quotes(summary.text)
    assert sentences and all(s in source for s in sentences)


async def test_a_table_request_on_a_csv_delivers_csv_and_xlsx_with_the_documents_cells():
    done, _ = await offline_round("Extract the table as CSV and Excel.", "testCSV.csv")
    assert [t.agent for t in done.plan.plan.tasks] == ["data_extractor"]
    files = done.files
    assert set(files) == {"testCSV-tables.csv", "testCSV-tables.xlsx"}
    rows = list(csv.reader(io.StringIO(files["testCSV-tables.csv"].data.decode("utf-8-sig"))))
    cells = {c for row in rows for c in row if c}
    assert {"15", "225", "144"} <= cells
    source = load_document("testCSV.csv").text
    assert all(c in source for c in cells)
    sheet = openpyxl.load_workbook(io.BytesIO(files["testCSV-tables.xlsx"].data)).worksheets[0]
    values = {str(v) for row in sheet.iter_rows(values_only=True) for v in row if v is not None}
    assert {"15", "225"} <= values
    assert "**Delivered:** testCSV-tables.xlsx, testCSV-tables.csv" in done.final.text


async def test_tables_of_a_tsv_and_a_workbook_are_extracted():
    done, _ = await offline_round("Pull the tables out of these files into a spreadsheet.",
                                  "stanley-cups.tsv", "2023-half-year-analyses-by-segment.xlsx")
    files = done.files
    assert "tables.xlsx" in files
    book = openpyxl.load_workbook(io.BytesIO(files["tables.xlsx"].data))
    values = {str(v) for ws in book.worksheets for row in ws.iter_rows(values_only=True) for v in row if v}
    assert {"Maple Leafs", "TOR", "13"} <= values
    assert book.sheetnames == ["stanley-cups", "OS-Rev.and results 30 06 2023", "OS-Other information 30 06 2023",
                               "Prod.Rev.and results 30 06 2023", "Prod.-Other inform. 30 06 23",
                               "Reconciliation 30 06 2023"]
    assert not [n for n in files if n.endswith(".csv")]  # CSV only when asked for
    [extract] = done.by_agent("data_extractor")
    assert "6 tables extracted from stanley-cups.tsv, 2023-half-year-analyses-by-segment.xlsx." in extract.text
    # The preview shows the sheet's rows under their headings, without its blank spacer rows and columns.
    preview = [line for line in extract.text.splitlines() if line.startswith("| ")]
    assert "| Zone NA | 12553 | 2713 | 2632 | -81 | -29 | -44 | -337 |" in preview
    assert all(line.strip("| ") for line in preview)  # no row of empty cells


async def test_a_csv_of_several_tables_comes_in_one_archive_and_the_review_counts_it_delivered():
    done, _ = await offline_round("Extract the tables from this spreadsheet into a CSV file.",
                                  "2023-half-year-analyses-by-segment.xlsx")
    with zipfile.ZipFile(io.BytesIO(done.files["2023-half-year-analyses-by-segment-tables.zip"].data)) as archive:
        assert len(archive.namelist()) == 5
        rows = list(csv.reader(io.StringIO(archive.read("OS-Rev.csv").decode("utf-8-sig"))))
    assert [c for c in rows[rows.index(next(r for r in rows if r[:1] == ["Total"]))] if c] == \
        ["Total", "46293", "7904", "7351", "-553", "-110", "-262", "-1722"]
    assert "not produced" not in done.final.text and "**Missing:**" not in done.final.text, done.final.text


async def test_a_german_request_gets_german_answers():
    done, _ = await offline_round("Fasse das Dokument bitte zusammen.", "testWORD.docx")
    plan = done.plan.plan
    assert plan.language == "de"
    assert plan.answer.startswith("Ich arbeite offline, ohne Sprachmodell")
    assert "### Arbeitsplan" in render_plan_message(plan)
    [summary] = done.by_agent("summarizer")
    assert "## Zusammenfassung von testWORD.docx" in summary.text
    assert "Diese Runde lief offline" in done.final.text
    assert "**Erledigte Schritte:** t1 (summarizer)" in done.final.text


async def test_a_french_request_gets_french_answers():
    done, _ = await offline_round("Résume ce document, s'il te plaît.", "sample-french-1.txt")
    plan = done.plan.plan
    assert plan.language == "fr"
    assert plan.answer.startswith("Je travaille hors ligne")
    assert "## Résumé de sample-french-1.txt" in done.by_agent("summarizer")[0].text
    assert done.final.text.startswith("Ce tour s'est déroulé hors ligne")


async def test_a_question_is_answered_with_quoted_passages():
    done, _ = await offline_round("What is a trace tree?", "tracemonkey.pdf")
    [answer] = done.by_agent("analyst")
    quoted = quotes(answer.text)
    source = squash(load_document("tracemonkey.pdf").text)
    assert quoted and all(q in source for q in quoted)
    assert any("trace tree" in q.lower() for q in quoted)
    assert "Offline answer" in answer.text


async def test_a_question_about_a_table_in_an_old_xls_is_answered_by_the_analyst_with_the_row():
    done, _ = await offline_round("Was ist das Quadrat von 12 laut der Tabelle?", "testEXCEL.xls")
    # "Tabelle" in a question names where the answer is; it does not ask for the table.
    assert [t.agent for t in done.plan.plan.tasks] == ["analyst"]
    [answer] = done.by_agent("analyst")
    assert answer.text.startswith("_Offline-Antwort")
    # The row with its headings, numbers as the sheet shows them; not the whole flattened sheet.
    assert quotes(answer.text) == ["Number: 12; Square: 144"]


@pytest.mark.parametrize("number, row", [(9, "Number: 9; Square: 81"), (3, "Number: 3; Square: 9")])
async def test_the_row_a_number_labels_is_quoted_before_a_row_that_only_holds_it_as_a_value(number, row):
    # "Number: 3; Square: 9" holds 9 too; the square of 9 is in the row labelled 9.
    done, _ = await offline_round(f"What is the square of {number}?", "testEXCEL.xlsx")
    [answer] = done.by_agent("analyst")
    assert quotes(answer.text)[0] == row


async def test_a_question_about_a_workbook_quotes_the_matching_row_with_its_headings():
    done, _ = await offline_round("What were the sales of Zone NA in the first half of 2023?",
                                  "2023-half-year-analyses-by-segment.xlsx")
    [answer] = done.by_agent("analyst")
    [best, *_] = quotes(answer.text)
    assert best.startswith("In millions of CHF, January–June 2023 — Zone NA; Sales (a): 12,553; "
                           "Underlying Trading operating profit (b): 2,713;")
    assert "Zone EUR" not in best and "12,138" not in best  # one row: not the other zones, not 2022
    assert "sheet OS-Rev.and results 30 06 2023 [1]" in answer.text
    assert answer.meta["citations"][0]["quote"] == best


async def test_a_request_for_a_table_and_an_indirect_question_gets_both():
    done, _ = await offline_round("Gib mir die Tabelle als Excel-Datei und sag mir, was das Quadrat von 12 ist.",
                                  "testEXCEL.xls")
    assert [t.agent for t in done.plan.plan.tasks] == ["data_extractor", "analyst"]
    assert "testEXCEL-tables.xlsx" in done.files
    [answer] = done.by_agent("analyst")
    assert quotes(answer.text) == ["Number: 12; Square: 144"]


async def test_a_table_request_that_also_says_tell_me_the_gets_its_answer_too():
    done, _ = await offline_round("Extract the tables into a CSV file and tell me the total sales of January–June 2023.",
                                  "2023-half-year-analyses-by-segment.xlsx")
    assert [t.agent for t in done.plan.plan.tasks] == ["data_extractor", "analyst"]
    [answer] = done.by_agent("analyst")
    assert quotes(answer.text)[0].startswith("In millions of CHF, January–June 2023 — Total; Sales: 46,293;")


async def test_the_writer_delivers_markdown_and_docx_that_open():
    done, _ = await offline_round("Summarize the document and write a report about it.", "testWORD.docx")
    assert [t.agent for t in done.plan.plan.tasks] == ["summarizer", "writer"]
    assert done.order == ["t1", "t2"]
    files = done.files
    assert set(files) == {"report.md", "report.docx"}
    markdown = files["report.md"].data.decode("utf-8")
    assert markdown.startswith("# Report") and "without a language model" in markdown
    document = docx.Document(io.BytesIO(files["report.docx"].data))
    text = "\n".join(p.text for p in document.paragraphs)
    assert "Report" in text and "without a language model" in text
    # The summary of step t1 is the writer's material.
    assert quotes(done.results["t1"].text)[0] in markdown


async def test_the_offline_translator_delivers_no_file_and_says_so_in_one_sentence():
    done, _ = await offline_round("Translate this document into German.", "sample-french-1.txt")
    [result] = done.by_agent("translator")
    assert result.text == ("Offline, without a language model, I cannot translate sample-french-1.txt into "
                           "German, so I deliver no translation; configure a model (OPENAI_BASE_URL) to get one.")
    assert result.files == [] and done.files == {}
    assert "not produced" not in done.final.text


async def test_a_request_without_documents_plans_nothing_and_says_why():
    done, model = await offline_round("What is the capital of France?")
    assert done.plan.plan.tasks == []
    assert "cannot answer this from my own knowledge" in done.plan.plan.answer and "Upload a document" in done.plan.plan.answer
    assert "No steps were planned" in done.final.text
    assert [r.purpose for r, _ in model.calls] == ["plan", "final"]


@pytest.mark.parametrize("prompt, names", [
    ("Summarize the document and extract its tables, then write a report.", ["testEXCEL.xlsx", "testWORD.docx"]),
    ("What is a trace tree?", ["tracemonkey.pdf"]),
])
async def test_usage_adds_up_and_every_answer_is_marked_offline(prompt, names):
    done, model = await offline_round(prompt, *names)
    reported = done.plan.usage + done.final.usage
    for result in done.results.values():
        assert result is not None
        reported = reported + result.usage
    assert reported == model.total()
    assert reported.calls == len(model.calls) and reported.bytes_sent == 0
    for request, response in model.calls:
        assert response.offline and response.model == "offline"
        prompt_text = "\n".join(m["content"] for m in request.messages)
        assert response.usage == Usage(prompt_tokens=count_tokens(prompt_text),
                                       completion_tokens=count_tokens(response.text), calls=1)
    assert done.plan.offline and done.final.offline


async def test_a_long_translation_offline_asks_no_model_and_delivers_no_file():
    done, model = await offline_round("Translate this into English.", "UDHR_first_article_all.txt")
    [result] = done.by_agent("translator")
    assert not [r for r, _ in model.calls if r.agent == "translator"]
    assert result.text.startswith("Offline, without a language model, I cannot translate UDHR_first_article_all.txt")
    assert done.files == {}


async def test_a_failed_task_skips_its_dependents_and_the_final_message_says_so_in_german():
    class BrokenSummarizer:
        name = "summarizer"
        description = "Fails every time."

        async def run(self, task, context):
            raise RuntimeError("disk full")

    registry = Registry()
    registry.add(BrokenSummarizer(), source="test")
    for agent in builtin_agents():
        if agent.name != "summarizer":
            registry.add(agent)
    doc = load_document("testWORD.docx")
    done = await play_round("Fasse das Dokument zusammen und schreibe einen Bericht.", [doc], OfflineModel(), registry)
    assert [(t.id, t.agent) for t in done.plan.plan.tasks] == [("t1", "summarizer"), ("t2", "writer")]
    assert str(done.errors["t1"]) == "disk full"
    assert done.skipped == {"t2": "it depends on task 't1' (summarizer), which failed"}
    text = done.final.text
    assert "0 von 2 geplanten Schritten sind erledigt" in text
    assert "- Schritt t1 (summarizer) ist fehlgeschlagen" in text
    assert "- Schritt t2 (writer) wurde übersprungen: er braucht Schritt t1 (summarizer)" in text
    assert "- das geplante Dokument bericht.docx wurde nicht erstellt" in text
