"""OpenDocument files read like their Office twins.

The ODT, ODS and ODP files in `tests/extractors/odf/` were written by Debian's LibreOffice 7.4
(`libreoffice --headless --convert-to odt|ods|odp`) from the corpus' Word, Excel and PowerPoint
files of the same name, so each has a twin to compare with.
"""

from __future__ import annotations

import io
import zipfile
from pathlib import Path

import pytest

from extractors.detect import detect_mime
from extractors.odf import ODP, ODS, ODT
from extractors.tables import table_from_wire

from .conftest import corpus_bytes, normalise

HERE = Path(__file__).parent / "odf"
TWINS = {
    "testWORD_various.odt": "testWORD_various.docx",
    "docx_comments.odt": "docx_comments.docx",
    "testWORD.odt": "testWORD.docx",
    "testEXCEL.ods": "testEXCEL.xlsx",
    "2023-half-year-analyses-by-segment.ods": "2023-half-year-analyses-by-segment.xlsx",
    "testEXCEL-formats.ods": "testEXCEL-formats.xlsx",
    "powerpoint_sample.odp": "powerpoint_sample.pptx",
}


def odf(name: str) -> bytes:
    return (HERE / name).read_bytes()


@pytest.mark.parametrize("name", sorted(TWINS))
def test_the_type_is_told_from_the_bytes(name):
    expected = {"odt": ODT, "ods": ODS, "odp": ODP}[name.rsplit(".", 1)[1]]
    assert detect_mime(odf(name), "upload.bin") == expected
    # libmagic relies on `mimetype` being the first member; the member itself decides otherwise.
    assert detect_mime(_reordered(odf(name)), "upload.bin") == expected


def _reordered(data: bytes) -> bytes:
    """The same package with its `mimetype` member written last and compressed."""
    out = io.BytesIO()
    with zipfile.ZipFile(io.BytesIO(data)) as source, zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as target:
        names = [n for n in source.namelist() if n != "mimetype"] + ["mimetype"]
        for n in names:
            target.writestr(n, source.read(n))
    return out.getvalue()


@pytest.mark.parametrize("name", [n for n in sorted(TWINS) if n.endswith(".ods")])
def test_a_spreadsheet_gives_the_same_sheets_and_cells_as_its_excel_twin(registry, name):
    ods = registry.extract(odf(name), name)
    xlsx = registry.extract(corpus_bytes(TWINS[name]), TWINS[name])
    assert ods.status == "ok" and ods.mime == ODS
    assert [i.name for i in ods.items] == [i.name for i in xlsx.items]
    for mine, theirs in zip(ods.items, xlsx.items):
        mine_tables = [table_from_wire(t) for t in mine.metadata.get("tables", [])]
        their_tables = [table_from_wire(t) for t in theirs.metadata.get("tables", [])]
        assert len(mine_tables) == len(their_tables)
        for a, b in zip(mine_tables, their_tables):
            assert a.header_row == b.header_row
            assert len(a.rows) == len(b.rows)
            for row_a, row_b in zip(a.rows, b.rows):
                # Excel and Calc round fractions of a second differently: compare to the second.
                assert [_second(c) for c in row_a] == [_second(c) for c in row_b]
        assert mine.metadata["extractor"] == "odf" and mine.metadata["sheet"] == theirs.metadata["sheet"]


def _second(cell):
    return cell.replace(microsecond=0) if hasattr(cell, "microsecond") else cell


def test_a_sheet_shows_values_as_calc_formats_them(registry):
    sheet = registry.extract(odf("2023-half-year-analyses-by-segment.ods"), "x.ods").items[0].data
    assert "Zone NA\t12,553\t2,713\t2,632\t\t(81)" in sheet
    squares = registry.extract(odf("testEXCEL.ods"), "x.ods").items[0].data
    assert "\t10\t100\n\t11\t121\n" in squares  # formula results, as saved


@pytest.mark.parametrize("name", ["testWORD_various.odt", "docx_comments.odt", "testWORD.odt"])
def test_a_text_document_reads_like_its_word_twin(registry, name):
    odt = registry.extract(odf(name), name)
    docx = registry.extract(corpus_bytes(TWINS[name]), TWINS[name])
    assert odt.status == "ok" and odt.mime == ODT
    assert [i.name for i in odt.items] == [i.name for i in docx.items]
    for mine, theirs in zip(odt.items, docx.items):
        words = set(normalise(theirs.data).split())
        found = set(normalise(mine.data).split())
        assert len(words & found) >= 0.9 * len(words), (mine.name, sorted(words - found))


def test_text_tables_stay_tables_and_notes_and_comments_stay_apart(registry):
    various = registry.extract(odf("testWORD_various.odt"), "various.odt")
    body = various.items[0]
    assert "Row 1 Col 1\tRow 1 Col 2\tRow 1 Col 3" in body.data
    [table] = [table_from_wire(t) for t in body.metadata["tables"]][:1]
    assert table.rows[0] == ["Row 1 Col 1", "Row 1 Col 2", "Row 1 Col 3"]
    assert "This is a footnote" not in body.data  # the note is an item of its own, not glued to a word
    assert dict((i.name, i.data) for i in various.items)["footnotes"] == "This is a footnote."
    comments = registry.extract(odf("docx_comments.odt"), "c.odt").items[-1]
    assert comments.name == "comments"
    assert "John Reviewer: This is a sample reviewer comment" in comments.data
    assert "reviewer comment" not in registry.extract(odf("docx_comments.odt"), "c.odt").items[0].data


def test_headings_are_lines_of_their_own_and_listed(registry):
    body = registry.extract(odf("testWORD.odt"), "w.odt").items[0]
    assert body.metadata["headings"] == ["Heading Level 1", "Heading Level 2", "Heading Level 3"]
    assert "\nHeading Level 2\n" in body.data


def test_slides_carry_their_tables_as_cells_and_their_notes(registry):
    slides = registry.extract(odf("powerpoint_sample.odp"), "deck.odp").items
    twin = registry.extract(corpus_bytes("powerpoint_sample.pptx"), "deck.pptx").items
    assert [s.name for s in slides] == [s.name for s in twin]
    assert "Notes:\nSome notes on the second slide." in slides[1].data
    assert "<number>" not in "".join(s.data for s in slides)  # Impress's page-number placeholder
    mine = table_from_wire(slides[0].metadata["tables"][0])
    theirs = table_from_wire(twin[0].metadata["tables"][0])
    assert mine.rows[:3] == theirs.rows[:3]


def _ods(rows_xml: str) -> bytes:
    """A minimal spreadsheet package around one sheet's rows."""
    content = (
        '<?xml version="1.0" encoding="UTF-8"?>'
        '<office:document-content xmlns:office="urn:oasis:names:tc:opendocument:xmlns:office:1.0" '
        'xmlns:table="urn:oasis:names:tc:opendocument:xmlns:table:1.0" '
        'xmlns:text="urn:oasis:names:tc:opendocument:xmlns:text:1.0" office:version="1.3">'
        '<office:body><office:spreadsheet><table:table table:name="Data">'
        f"{rows_xml}</table:table></office:spreadsheet></office:body></office:document-content>"
    )
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as package:
        package.writestr("mimetype", ODS, compress_type=zipfile.ZIP_STORED)
        package.writestr("content.xml", content, compress_type=zipfile.ZIP_DEFLATED)
    return out.getvalue()


def test_repeated_rows_are_expanded_to_the_last_filled_one_and_capped(registry, monkeypatch):
    from extractors import ods

    filled = '<table:table-cell office:value-type="float" office:value="7"><text:p>7</text:p></table:table-cell>'
    def empty(rows: int) -> str:
        return (f'<table:table-row table:number-rows-repeated="{rows}">'
                '<table:table-cell table:number-columns-repeated="16384"/></table:table-row>')

    data = _ods(f"<table:table-row>{filled}</table:table-row>{empty(500)}"
                f"<table:table-row>{filled}{filled}</table:table-row>{empty(1048000)}")
    sheet = registry.extract(data, "gaps.ods").items[0]
    assert sheet.metadata["rows"] == 502  # the gap is real: the second row sits that far down; the tail is not
    assert sheet.data.startswith("7\n") and sheet.data.endswith("\n7\t7")

    monkeypatch.setattr(ods, "MAX_CELLS", 1000)
    bomb = _ods(f'<table:table-row table:number-rows-repeated="1048576">{filled}{filled}</table:table-row>')
    result = registry.extract(bomb, "bomb.ods")
    assert result.items[0].metadata["rows"] == 500
    assert result.warnings == ["bomb.ods: sheet Data was cut at 1,000 cells."]
    gap = _ods(f"<table:table-row>{filled}</table:table-row>{empty(1048000)}<table:table-row>{filled}</table:table-row>")
    assert registry.extract(gap, "gap.ods").items[0].metadata["rows"] == 1


def test_a_formula_saved_without_its_value_is_named_not_dropped(registry):
    data = _ods(
        '<table:table-row><table:table-cell office:value-type="string"><text:p>net</text:p></table:table-cell>'
        '<table:table-cell table:formula="of:=[.C1]*2"/>'
        '<table:table-cell office:value-type="float" office:value="4"><text:p>4</text:p></table:table-cell>'
        "</table:table-row>"
    )
    sheet = registry.extract(data, "formulas.ods").items[0]
    assert sheet.metadata["formulasWithoutValues"] == [{"cell": "B1", "formula": "=[.C1]*2"}]
    assert "1 formula cell has no saved value (B1)" in sheet.summary


def test_a_damaged_package_is_corrupt_not_a_crash(registry):
    data = odf("testWORD.odt")
    broken = _reordered(data).replace(b"content.xml", b"contentXxml")
    result = registry.extract(broken, "broken.odt", mime=ODT)
    assert result.status == "corrupt"
    assert "broken.odt could not be extracted" in result.items[0].data


def test_an_encrypted_document_opens_with_its_password_and_says_why_not_without(registry):
    # Saved by LibreOffice with the password "geheim" (AES-256-CBC, PBKDF2 over SHA-256).
    data = odf("encrypted-geheim.odt")
    assert detect_mime(data, "lease.odt") == ODT
    missing = registry.extract(data, "lease.odt")
    assert missing.status == "encrypted" and missing.items[0].name == "encrypted"
    assert "needs a password" in missing.items[0].data
    wrong = registry.extract(data, "lease.odt", password="falsch")
    assert wrong.status == "encrypted" and "the password supplied does not open it" in wrong.items[0].data
    opened = registry.extract(data, "lease.odt", password="geheim")
    assert opened.status == "ok" and opened.items[0].metadata["decrypted"] is True
    assert opened.items[0].data.startswith("Sample Word Document Title")
    assert dict((i.name, i.data) for i in opened.items)["headers and footers"].startswith("This is the header")
