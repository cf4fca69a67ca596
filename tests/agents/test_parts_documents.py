"""Each part of a request reads the document it names (issue 50, "answers a person can trust"), en/de/fr,
on documents of the shared corpus, through whole offline rounds:

- a question of two parts naming different documents is answered part by part, each from its own
  document: a PDF's part was searched in the workbook alone and said "not found: «PDF»" there;
- a part names its document by kind ("the spreadsheet", "le Word", "die Excel-Datei", "the slides") or by
  file name, and a kind after a word of making ("as CSV", "en Excel") is a format, not a document;
- "Résume le Word et donne le tableau Excel en CSV": the summary is of the Word document alone and the
  CSV of the workbook's table alone (both read both, and a workbook nobody asked for was made too);
- "Summarise the slides and tell me what the Word document says ...": a summary of the slides, an
  answer from the Word document judged by its own words, and no table file for the question's "table";
- the kind of document a question names says where to look, not what it asks: "What does the PDF say
  about errors?" was "not found: «PDF»" over the PDF that answers it;
- a request whose parts do not name different documents is read as a whole, as before.
"""

from __future__ import annotations

import csv
import io
from typing import Any

import pytest

from agents.language import documents_by_part, named_documents
from tests.agents.conftest import load_document
from tests.agents.test_offline_rounds import offline_round

PDF, SEGMENTS = "google-doc-document.pdf", "2023-half-year-analyses-by-segment.xlsx"
WORD, SQUARES, DECK = "testWORD.docx", "testEXCEL.xlsx", "powerpoint_sample.pptx"


def sections(answer: str) -> list[tuple[str, str]]:
    """An answer of parts as (the part's question, what is written under it)."""
    out: list[tuple[str, str]] = []
    for line in answer.splitlines():
        if line.startswith("**") and line.endswith("**"):
            out.append((line.strip("*"), ""))
        elif out:
            out[-1] = (out[-1][0], f"{out[-1][1]}\n{line}".strip())
    return out


@pytest.mark.parametrize("prompt", [
    "What does the PDF say about Berlin, and what does the spreadsheet give for Zone EUR?",
    f"Was sagt das PDF über Berlin, und was steht in {SEGMENTS} zu Zone EUR?",
    "Que dit le PDF sur Berlin, et que donne le classeur Excel pour Zone EUR ?",
])
async def test_each_part_of_a_question_is_answered_from_the_document_it_names(prompt):
    done, _ = await offline_round(prompt, PDF, SEGMENTS)
    [task] = done.plan.plan.tasks
    assert task.agent == "analyst" and set(task.inputs) == {PDF, SEGMENTS}, task
    [answer] = done.by_agent("analyst")
    [(_, first), (_, second)] = sections(answer.text)
    assert "Berlin" in first and f"— {PDF}, " in first and SEGMENTS not in first, answer.text
    assert "Zone EUR" in second and f"— {SEGMENTS}, " in second and PDF not in second, answer.text
    assert "«PDF»" not in answer.text


@pytest.mark.parametrize("prompt", [
    "Does the spreadsheet mention Berlin, and what does the PDF say about Berlin?",
    "Was steht in der Excel-Datei zu Berlin, und was steht im PDF zu Berlin?",
    "Que dit le classeur sur Berlin, et que dit le PDF sur Berlin ?",
])
async def test_a_part_is_not_answered_from_a_document_it_does_not_name(prompt):
    # Only the PDF writes "Berlin": the workbook's part is not found in the workbook, not quoted from the PDF.
    done, _ = await offline_round(prompt, SEGMENTS, PDF)
    [answer] = done.by_agent("analyst")
    [(_, first), (_, second)] = sections(answer.text)
    assert ">" not in first and SEGMENTS in first and PDF not in first and "Berlin" in first, answer.text
    assert f"— {PDF}, " in second and "Berlin" in second, answer.text


async def test_the_kind_of_document_a_question_names_is_not_what_it_asks_about():
    # "Not found: «PDF» appears nowhere in google-doc-document.pdf" was said above the passage that answers.
    done, _ = await offline_round("What does the PDF say about errors?", PDF)
    [answer] = done.by_agent("analyst")
    assert "Not found" not in answer.text and "> Errors should never pass silently." in answer.text, answer.text


@pytest.mark.parametrize("prompt", [
    "Summarise the Word document and give me the spreadsheet's table as CSV.",
    "Fasse das Word-Dokument zusammen und gib die Tabelle der Excel-Datei als CSV.",
    "Résume le Word et donne le tableau Excel en CSV",
])
async def test_each_piece_of_work_reads_the_document_it_names(prompt):
    done, _ = await offline_round(prompt, WORD, SQUARES)
    reads = reads_of(done)
    assert reads == {"data_extractor": [SQUARES], "summarizer": [WORD]}, reads
    [summary] = done.by_agent("summarizer")
    assert WORD in summary.text and SQUARES not in summary.text and "Squares" not in summary.text
    # A CSV was asked for: "Excel" names the document it comes from, not a workbook to make.
    assert set(done.files) == {"testEXCEL-tables.csv"}
    rows = list(csv.reader(io.StringIO(done.files["testEXCEL-tables.csv"].data.decode("utf-8-sig"))))
    cells = {c for row in rows for c in row if c.strip()}
    source = load_document(SQUARES).text
    assert {"12", "144", "Square"} <= cells and all(c.strip() in source for c in cells)


@pytest.mark.parametrize("prompt", [
    "Summarise the slides and tell me what the Word document says about its nested table.",
    "Fasse die Folien zusammen und sag mir, was das Word-Dokument über die verschachtelte Tabelle sagt.",
    "Résume les diapositives et dis-moi ce que le Word dit du tableau imbriqué.",
])
async def test_a_summary_of_one_document_and_a_question_about_another(prompt):
    done, _ = await offline_round(prompt, DECK, WORD)
    reads = reads_of(done)
    # The question about a table asks for no table file (one was made of the slides' table).
    assert reads == {"summarizer": [DECK], "analyst": [WORD]}, reads
    [summary] = done.by_agent("summarizer")
    assert DECK in summary.text and WORD not in summary.text
    [answer] = done.by_agent("analyst")
    # Judged by its own words: "Not found in testWORD.docx: «Summarise», «slides»" was said under it.
    assert f"— {WORD}, " in answer.text and "«" not in answer.text, answer.text


@pytest.mark.parametrize("prompt", [
    "Summarise the Word document and give me the tables as CSV.",  # the second part names no document
    "Fasse das Word-Dokument und die Excel-Datei zusammen.",  # one piece of work over both
    "Résume les documents et donne les tableaux en CSV.",
])
async def test_a_request_whose_parts_do_not_name_different_documents_reads_them_as_before(prompt):
    done, _ = await offline_round(prompt, WORD, SQUARES)
    assert all(set(t.inputs) == {WORD, SQUARES} for t in done.plan.plan.tasks), done.plan.plan.tasks


def reads_of(done: Any) -> dict[str, list[str]]:
    """What each agent of the round's plan reads."""
    return {t.agent: t.inputs for t in done.plan.plan.tasks}


def _facts(*names: str) -> list[dict[str, object]]:
    return [{"name": n, "ext": n.rsplit(".", 1)[-1], "origin": "uploaded", "round": 1, "new": True} for n in names]


def test_a_part_names_its_document_by_kind_or_by_file_name_and_a_format_is_no_document():
    facts = _facts("deck.pptx", "budget.xlsx", "notes.docx", "scan.pdf")
    for prompt, expected in [
        ("Summarise the slides and extract the spreadsheet's tables as CSV.",
         [("summary", ("deck.pptx",)), ("extract", ("budget.xlsx",))]),
        ("Fasse die Folien zusammen; gib die Tabellen von budget.xlsx als CSV.",
         [("summary", ("deck.pptx",)), ("extract", ("budget.xlsx",))]),
        ("Résume le PDF et le Word, puis donne le tableau du classeur en CSV.",
         [("summary", ("scan.pdf", "notes.docx")), ("extract", ("budget.xlsx",))]),
    ]:
        parts = documents_by_part(prompt, facts)
        assert [(p.intents[0], p.documents) for p in parts] == expected, prompt
    # "as Excel", "en Word": formats to deliver, not documents to read; one part naming one is no split.
    assert named_documents("extract the tables of the PDF as Excel", facts) == ["scan.pdf"]
    assert named_documents("mets le tableau en Word", facts) == []
    assert documents_by_part("Summarize the PDF and the Excel.", facts) == []
    assert documents_by_part("Write a 500-word summary of the PDF and give the tables as CSV.", facts) == []
