"""Generated CSV, XLSX, DOCX and Markdown files open in the usual readers with the same content."""

import csv
import io

from docx import Document
from openpyxl import load_workbook

from agents.toolkit.files import (
    CSV_MIME,
    DOCX_MIME,
    MARKDOWN_MIME,
    XLSX_MIME,
    csv_bytes,
    docx_bytes,
    markdown_bytes,
    xlsx_bytes,
)
from agents.toolkit.tables import Table, find_tables
from tests import corpus


def test_csv_has_a_bom_and_reads_back_the_same_cells() -> None:
    rows = [["Société", "Umsatz, brutto", 'Note "A"'], ["Müller & Fils", "1,234.50", "two\nlines"]]
    data = csv_bytes(rows)
    assert data.startswith(b"\xef\xbb\xbf")
    assert list(csv.reader(io.StringIO(data.decode("utf-8-sig"), newline=""))) == rows
    assert CSV_MIME.startswith("text/csv")


def test_tsv_document_becomes_a_workbook_with_numbers() -> None:
    tables = find_tables([("sheet Stanley Cups", corpus.text("stanley-cups.tsv"))])
    workbook = load_workbook(io.BytesIO(xlsx_bytes(tables)))
    sheet = workbook["sheet Stanley Cups"]
    values = [list(row) for row in sheet.iter_rows(values_only=True)]
    assert values[1] == ["Team", "Location", "Stanley Cups"]
    assert values[4] == ["Maple Leafs", "TOR", 13]
    assert isinstance(values[2][2], int)


def test_numeric_looking_cells_become_numbers_and_identifiers_stay_text() -> None:
    rows = [["a", "1,234.50"], ["b", "-7"], ["c", "007"], ["d", "=SUM(A1:A2)"], ["e", "3.5e2"]]
    table = Table("Figures", [["Item", "Value"], *rows])
    sheet = load_workbook(io.BytesIO(xlsx_bytes([table])))["Figures"]
    values = [row[1] for row in sheet.iter_rows(min_row=2, values_only=True)]
    assert values == [1234.5, -7, "007", "=SUM(A1:A2)", 350.0]
    assert sheet["B5"].data_type == "s"  # stored as text, never evaluated


def test_sheet_names_are_sanitised_unique_and_short() -> None:
    names = ["page 3 table 1", "page 3 table 1", "a/b:c*d?" + "z" * 40, ""]
    tables = [Table(name, [[cell]]) for name, cell in zip(names, "xyzw")]
    workbook = load_workbook(io.BytesIO(xlsx_bytes(tables)))
    names = workbook.sheetnames
    assert len(names) == 4 and len({name.casefold() for name in names}) == 4
    assert all(0 < len(name) <= 31 and not set(name) & set("[]:*?/\\") for name in names)
    assert names[0] == "page 3 table 1"
    assert workbook[names[1]]["A1"].value == "y"


def test_csv_corpus_table_survives_xlsx_round_trip() -> None:
    tables = find_tables([("sheet Squares", corpus.text("testCSV.csv"))])
    sheet = load_workbook(io.BytesIO(xlsx_bytes(tables)))["sheet Squares"]
    rows = [list(row) for row in sheet.iter_rows(values_only=True)]
    assert [None, "Number", "Square"] in rows
    assert [None, 12, 144] in rows
    assert XLSX_MIME.endswith("spreadsheetml.sheet")


def test_docx_has_headings_lists_bold_and_a_real_table() -> None:
    markdown = (
        "# Quarterly report\n\n_Made offline from the documents._\n\n"
        "Revenue **grew** strongly\nacross regions.\n\n"
        "> The board approved\n> the plan.\n\n---\n\n"
        "## Highlights\n\n- New plant opened\n  - in Lyon\n- Costs flat\n\n"
        "### Steps\n\n1. Review\n2. Approve\n\n"
        "| Region | Revenue |\n|---|---:|\n| North | 1,234 |\n| South | 980 |\n"
    )
    document = Document(io.BytesIO(docx_bytes(markdown, title="Report Q3")))
    styled = [(p.style.name, p.text) for p in document.paragraphs if p.text]
    assert styled[0] == ("Title", "Report Q3")
    assert ("Heading 1", "Quarterly report") in styled
    assert ("Heading 2", "Highlights") in styled
    assert ("Heading 3", "Steps") in styled
    assert ("List Bullet", "New plant opened") in styled
    assert ("List Bullet 2", "in Lyon") in styled
    assert ("List Number", "Approve") in styled
    assert ("Normal", "Revenue grew strongly across regions.") in styled
    paragraph = next(p for p in document.paragraphs if p.text.startswith("Revenue"))
    assert [run.text for run in paragraph.runs if run.bold] == ["grew"]
    once = Document(io.BytesIO(docx_bytes("# Report\n\nText.", title="Report")))
    assert [(p.style.name, p.text) for p in once.paragraphs if p.text] == [("Title", "Report"), ("Normal", "Text.")]
    # A summary opens with its own heading, the file's title: once, as the title.
    summary = Document(io.BytesIO(docx_bytes("## Summary of a.pdf\n\n> A quote.", title="Summary of a.pdf")))
    assert [(p.style.name, p.text) for p in summary.paragraphs if p.text] == [("Title", "Summary of a.pdf"),
                                                                              ("Quote", "A quote.")]
    assert ("Quote", "The board approved the plan.") in styled
    note = next(p for p in document.paragraphs if p.text == "Made offline from the documents.")
    assert all(run.italic for run in note.runs)
    assert not any(set(text) <= set("-*_ ") for _, text in styled)
    cells = [[cell.text for cell in row.cells] for row in document.tables[0].rows]
    assert cells == [["Region", "Revenue"], ["North", "1,234"], ["South", "980"]]
    assert DOCX_MIME.endswith("wordprocessingml.document")


def test_markdown_bytes_are_utf8_with_a_final_newline() -> None:
    assert markdown_bytes("# Résumé") == "# Résumé\n".encode()
    assert markdown_bytes("x\n") == b"x\n"
    assert MARKDOWN_MIME.startswith("text/markdown")


def test_german_semicolon_csv_becomes_numbers_in_xlsx() -> None:
    text = "Firma;Umsatz;Anteil\nAlpha GmbH;1.234,50;0,5\nBeta AG;980,00;12,5\n"
    tables = find_tables([("sheet Umsatz", text)])
    assert tables[0].rows == [
        ["Firma", "Umsatz", "Anteil"],
        ["Alpha GmbH", "1.234,50", "0,5"],
        ["Beta AG", "980,00", "12,5"],
    ]
    sheet = load_workbook(io.BytesIO(xlsx_bytes(tables)))["sheet Umsatz"]
    values = list(sheet.iter_rows(min_row=2, values_only=True))
    assert values == [("Alpha GmbH", 1234.5, 0.5), ("Beta AG", 980.0, 12.5)]
