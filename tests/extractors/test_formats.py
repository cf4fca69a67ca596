"""What each format's extractor gives a user, beyond the corpus snippets."""

from __future__ import annotations

import base64
import json
import subprocess
import sys
from pathlib import Path

from tests.corpus import CORPUS

from .conftest import normalise, plain_text


def test_pdf_pages_become_items_in_order(extracted):
    items = extracted("multicolumn.pdf").items
    assert [item.name for item in items] == ["page 1", "page 2", "page 3"]
    assert [item.metadata["page"] for item in items] == [1, 2, 3]
    assert "Two-Column Document with Lorem Ipsum" in items[0].data


def test_vertical_japanese_without_a_unicode_map_is_read_through_pdfium(extracted):
    items = extracted("vertical.pdf").items
    assert items[0].metadata["extractor"] == "pdfium"
    assert "あいうえお" in items[0].data


def test_scanned_pdf_pages_are_ocred_and_marked(extracted):
    item = extracted("testOCR.pdf").items[0]
    assert item.metadata["ocr"] is True
    assert item.metadata["extractor"] == "tesseract"


def test_pdf_attachments_are_extracted_too(extracted):
    items = extracted("attachment.pdf").items
    assert [item.metadata.get("attachment") for item in items] == [None, "foo.txt"]


def test_docx_text_boxes_appear_once(extracted):
    text = plain_text(extracted("testWORD_various.docx"))
    assert text.count("Here is a text box") == 1


def test_docx_content_controls_and_nested_tables_are_read(extracted):
    body = extracted("testWORD_embedded_pics.docx").items[0].data
    assert "This is a rich text sdt" in body
    assert "Deeply embedded" in body


def test_docx_headers_footnotes_and_comments_are_separate_items(extracted):
    names = [item.name for item in extracted("testWORD_various.docx").items]
    assert names == ["body", "headers and footers", "footnotes"]
    comments = extracted("docx_comments.docx").items[-1]
    assert comments.name == "comments"
    assert "John Reviewer: This is a sample reviewer comment" in comments.data


def test_docx_tables_keep_their_cells_apart(extracted):
    body = extracted("testWORD_various.docx").items[0].data
    assert "Row 1 Col 1\tRow 1 Col 2\tRow 1 Col 3" in body


def test_pptx_slides_carry_their_speaker_notes(extracted):
    slides = extracted("powerpoint_sample.pptx").items
    assert [slide.name for slide in slides] == ["slide 1", "slide 2", "slide 3"]
    assert "Notes:\nSome notes on the second slide." in slides[1].data
    assert slides[1].metadata["has_notes"] is True


def test_xlsx_values_read_as_the_sheet_shows_them(extracted):
    sheet = extracted("testEXCEL-formats.xlsx").items[0].data
    for shown in ["1,599.99", "-1,599.99", "$1,599.99", "($1,599.99)", "1.98E+08", "2.50%", "2 1/2",
                  "6:15 AM", "6:15 PM", "18:15", "17-May-07", "19 dollars and .99 cents",
                  "At 4:20 AM on Thursday May 17, 2007"]:
        assert shown in sheet, shown


def test_xlsx_formulas_give_their_cached_values(extracted):
    sheet = extracted("testEXCEL.xlsx").items[0].data
    # Squares are formulas (=+B6*B6); the workbook's cached results are what a reader sees.
    assert "\t10\t100\n\t11\t121\n" in sheet


def test_xlsx_accounting_formats_show_negatives_in_brackets(extracted):
    sheet = extracted("2023-half-year-analyses-by-segment.xlsx").items[0].data
    assert "Zone NA\t12,553\t2,713\t2,632\t\t(81)" in sheet


def test_csv_quoted_line_breaks_stay_in_their_cell(extracted):
    item = extracted("testCSV.csv").items[0]
    assert item.data.endswith("\nWritten and saved in Apache OpenOffice.")
    assert "\t15\t225\n" in item.data


def test_text_encodings_are_decoded_right(extracted):
    expectations = {
        "sample-french-1.txt": "cp1252",
        "fake-text-utf-16.txt": "utf-16",
        "shift_jis_ude_2.txt": "cp932",
        "sample-chinese.txt": "big5",
    }
    for name, encoding in expectations.items():
        item = extracted(name).items[0]
        assert item.metadata["encoding"] == encoding, name
        assert "\ufffd" not in item.data, name


def test_html_is_text_without_markup(extracted):
    text = extracted("ideas-page.html").items[0].data
    assert "<" not in text and "href" not in text
    assert "Der Preis betrug 15,50 €." in normalise(extracted("fake-html-cp1252.html").items[0].data)


def test_json_is_kept_verbatim(extracted):
    item = extracted("simple.json").items[0]
    assert json.loads(item.data) == json.loads((CORPUS / "simple.json").read_text(encoding="utf-8"))


def test_images_are_passed_on_as_base64_with_their_text(extracted):
    image, text = extracted("testOCR.png").items
    assert image.is_text is False and image.base64_encoded is True
    assert base64.b64decode(image.data) == (CORPUS / "testOCR.png").read_bytes()
    assert text.metadata["ocr"] is True


def test_summaries_count_characters_and_words_and_name_the_language(extracted):
    summary = extracted("sample-french-1.txt").items[0].summary
    assert "characters" in summary and "words" in summary and "language fr" in summary


def test_without_tesseract_image_pages_are_flagged_not_invented():
    # A child process with an empty PATH cannot find tesseract, as on a server without it.
    script = """
import json, sys
from pathlib import Path
from extractors import extract
corpus = Path(sys.argv[1])
pdf = extract((corpus / "testOCR.pdf").read_bytes(), "testOCR.pdf")
png = extract((corpus / "testOCR.png").read_bytes(), "testOCR.png")
print(json.dumps({"pdf": [pdf.status, pdf.items[0].metadata, pdf.items[0].data, pdf.warnings],
                  "png": [png.status, len(png.items), png.warnings]}))
"""
    repo = Path(__file__).resolve().parents[2]
    done = subprocess.run(
        [sys.executable, "-c", script, str(CORPUS)],
        capture_output=True, text=True, cwd=repo, env={"PATH": "", "PYTHONPATH": str(repo)}, check=True,
    )
    report = json.loads(done.stdout)
    status, metadata, data, warnings = report["pdf"]
    assert status == "partial"
    assert metadata["needs_ocr"] is True and data == ""
    assert "Tesseract is not installed" in warnings[0]
    assert report["png"][0] == "ok" and report["png"][1] == 1
    assert "Tesseract is not installed" in report["png"][2][0]


def _docx_with_merged_and_controlled_cells() -> bytes:
    """A table whose first column is merged over two rows and whose last cell sits in a content control."""
    import io

    import docx
    from docx.oxml.ns import qn
    from lxml import etree

    document = docx.Document()
    table = document.add_table(rows=2, cols=2)
    table.cell(0, 0).text = "merged once"
    table.cell(0, 1).text = "top right"
    table.cell(0, 0).merge(table.cell(1, 0))
    cell = table.cell(1, 1)._tc
    cell.xpath("./w:p")[0].append(etree.fromstring(
        f'<w:r xmlns:w="{cell.nsmap["w"]}"><w:t>in a content control</w:t></w:r>'
    ))
    control = etree.SubElement(cell.getparent(), qn("w:sdt"))
    content = etree.SubElement(control, qn("w:sdtContent"))
    content.append(cell)  # moves the cell into the control
    buffer = io.BytesIO()
    document.save(buffer)
    return buffer.getvalue()


def test_docx_merged_cells_are_read_once_and_controlled_cells_are_read(registry):
    result = registry.extract(_docx_with_merged_and_controlled_cells(), "table.docx")
    body = result.items[0].data
    assert body.count("merged once") == 1
    assert "in a content control" in body
    assert body.splitlines() == ["merged once\ttop right", "\tin a content control"]


def test_a_pdf_listing_or_prose_in_columns_is_not_a_table(extracted):
    from extractors.pdf_tables import _table_like

    # tracemonkey.pdf page 3 lays out machine code beside its comments in a ruled box; page 8 is a table.
    paper = extracted("tracemonkey.pdf").items
    assert "tables" not in paper[2].metadata
    assert [t["name"] for t in paper[7].metadata["tables"]] == ["page 8 table 1"]
    code = [["mov edx, ebx(748)", "// load primes from the trace activation record"],
            ["mov edi(0), edx", "// (*) store primes to interpreter stack"], ["x = f(y);", "return x;"]]
    prose = [["The committee met on Monday and agreed the budget.", "Its members asked for a second review."],
             ["The chair closed the meeting after an hour of talks.", "Minutes follow by the end of the week."]]
    figures = [["Country", "Population"], ["Austria", "8.9"], ["Belgium", "11.5"]]
    assert not _table_like(code) and not _table_like(prose) and _table_like(figures)


def test_a_long_texts_summary_counts_its_words_by_whitespace():
    from extractors.base import ContentItem
    from extractors.summary import describe

    text = "Der Preis betrug 15,50 €. " * 60_000  # 1.5 MB: past the exact count
    item = ContentItem(sequence_nr=1, name="text", ext="txt", content_type="text/plain", data=text)
    assert describe(item) == f"text: {len(text):,} characters, {len(text.split()):,} words, language de"
