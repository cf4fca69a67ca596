"""Each part of a request reads the document it names (issue 50, "answers a person can trust"), en/de/fr,
on documents of the shared corpus, through whole offline rounds:

- a part names its document by kind ("the spreadsheet", "le Word", "die Excel-Datei", "the slides") or by
  file name, and a kind after a word of making ("as CSV", "en Excel") is a format, not a document;
- "Résume le Word et donne le tableau Excel en CSV": the summary is of the Word document alone and the
  CSV of the workbook's table alone (both read both, and a workbook nobody asked for was made too);
- a request whose parts do not name different documents is read as a whole, as before.
"""

from __future__ import annotations

import csv
import io

import pytest

from agents.language import documents_by_part, named_documents
from tests.agents.conftest import load_document
from tests.agents.test_offline_rounds import offline_round

WORD, SQUARES = "testWORD.docx", "testEXCEL.xlsx"


@pytest.mark.parametrize("prompt", [
    "Summarise the Word document and give me the spreadsheet's table as CSV.",
    "Fasse das Word-Dokument zusammen und gib die Tabelle der Excel-Datei als CSV.",
    "Résume le Word et donne le tableau Excel en CSV",
])
async def test_each_piece_of_work_reads_the_document_it_names(prompt):
    done, _ = await offline_round(prompt, WORD, SQUARES)
    reads = {t.agent: t.inputs for t in done.plan.plan.tasks}
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
    "Summarise the Word document and give me the tables as CSV.",  # the second part names no document
    "Fasse das Word-Dokument und die Excel-Datei zusammen.",  # one piece of work over both
    "Résume les documents et donne les tableaux en CSV.",
])
async def test_a_request_whose_parts_do_not_name_different_documents_reads_them_as_before(prompt):
    done, _ = await offline_round(prompt, WORD, SQUARES)
    assert all(set(t.inputs) == {WORD, SQUARES} for t in done.plan.plan.tasks), done.plan.plan.tasks


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
