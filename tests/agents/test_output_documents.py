"""Output documents a person can use: each produced file opened with its own format's library and
checked for structure (headings, Word tables, header rows, alignment, sheets), not just existence."""

from __future__ import annotations

import csv
import io

import docx
import openpyxl
import pytest
from docx.enum.text import WD_ALIGN_PARAGRAPH
from docx.oxml.ns import qn

from agents.base import DocumentText
from agents.offline import OfflineModel
from agents.registry import build_registry
from extractors import extract
from tests.agents.conftest import load_document, play_round
from tests.extractors.test_formulas import yearly_workbook


def workbook_document():
    """The yearly workbook (sheets 2022, 2023 and a summary, saved with formulas only) as agents see it."""
    data = yearly_workbook()
    extraction = extract(data, "sales.xlsx")
    return DocumentText.of("sales.xlsx", "xlsx", extraction.mime, len(data), extraction.items)


def headings(document: docx.document.Document) -> list[tuple[str, str]]:
    return [(p.style.name, p.text) for p in document.paragraphs if p.style.name.startswith(("Heading", "Title"))]


async def test_a_word_report_is_a_report_with_word_tables_and_nothing_else():
    done = await play_round("Write a Word report on this workbook.", [workbook_document()], OfflineModel(),
                            build_registry(entry_points=False))
    assert sorted(done.files) == ["report.docx"]  # asked for Word: Word only
    report = docx.Document(io.BytesIO(done.files["report.docx"].data))
    found = headings(report)
    assert found == [("Title", "Report"), ("Heading 2", "sales.xlsx"),  # a heading per source and sheet ...
                     ("Heading 3", "sheet 2022"), ("Heading 3", "sheet 2023"), ("Heading 3", "sheet Summary")]
    text = "\n".join(p.text for p in report.paragraphs)
    assert "Write a Word report" not in text  # ... and no echo of the request
    assert len(report.tables) == 3  # each sheet a real Word table
    first = report.tables[0]
    assert [c.text for c in first.rows[0].cells] == ["Region", "Q1", "Q2", "Total"]
    assert all(run.bold for c in first.rows[0].cells for run in c.paragraphs[0].runs)
    assert first.rows[0]._tr.trPr.find(qn("w:tblHeader")) is not None  # repeated on each page
    assert [c.text for c in first.rows[-1].cells] == ["Total", "90", "108", "198"]  # computed formula values
    assert first.rows[1].cells[1].paragraphs[0].alignment == WD_ALIGN_PARAGRAPH.RIGHT
    assert first.rows[1].cells[0].paragraphs[0].alignment != WD_ALIGN_PARAGRAPH.RIGHT


async def test_without_a_format_asked_the_report_comes_as_markdown_and_word_alike():
    done = await play_round("Write a report on this workbook.", [workbook_document()], OfflineModel(),
                            build_registry(entry_points=False))
    assert sorted(done.files) == ["report.docx", "report.md"]
    markdown = done.files["report.md"].data.decode("utf-8")
    assert "## sales.xlsx" in markdown and "### sheet 2023" in markdown
    assert "| Total | 99 | 117 | 216 |" in markdown
    report = docx.Document(io.BytesIO(done.files["report.docx"].data))
    assert len(report.tables) == 3 and len(report.tables[2].rows) == 3  # Summary: header, 2022, 2023


async def test_a_summary_of_a_workbook_names_the_sheet_of_every_row_it_shows():
    done = await play_round("Summarize this workbook.", [load_document("2023-half-year-analyses-by-segment.xlsx")],
                            OfflineModel(), build_registry(entry_points=False))
    [summary] = done.by_agent("summarizer")
    rows = [line for line in summary.text.splitlines() if line.startswith("> ") and "; " in line]
    assert rows, summary.text
    for row in rows:
        assert row.startswith("> sheet "), row
        assert "2022" in row or "2023" in row, row  # the period its column heading gives


@pytest.mark.parametrize("prompt", ["Extract the tables as Excel and CSV."])
async def test_extracted_tables_open_as_workbooks_and_csv_with_their_sheets(prompt):
    done = await play_round(prompt, [workbook_document()], OfflineModel(), build_registry(entry_points=False))
    [xlsx] = [f for name, f in done.files.items() if name.endswith(".xlsx")]
    book = openpyxl.load_workbook(io.BytesIO(xlsx.data))
    assert book.sheetnames == ["2022", "2023", "Summary"]
    assert [c.value for c in book["2023"][5]] == ["Total", 99, 117, 216]
    assert book["2022"]["A1"].font.bold and book["2022"].freeze_panes == "A2"
    csvs = {name: f for name, f in done.files.items() if name.endswith((".csv", ".zip"))}
    assert csvs
    for name, f in csvs.items():
        if name.endswith(".csv"):
            rows = list(csv.reader(io.StringIO(f.data.decode("utf-8-sig"))))
            # The two years' sheets share their columns: one CSV, each row naming its sheet (`stacked`).
            assert rows[0] == ["Sheet", "Region", "Q1", "Q2", "Total"] or rows[0] == ["Year", "Total"]
