"""MIME detection judges the bytes; libmagic's known blind spots are corrected."""

from __future__ import annotations

import io
import json
import zipfile

import pytest

from extractors.detect import DOCX, OOXML_ENCRYPTED, detect_mime

from .conftest import MANIFEST, corpus_bytes

# Where libmagic's answer (the manifest's `mime`) is not the type a user means.
CORRECTED = {
    "testWORD.docx": DOCX,
    "testWORD_protected_passtika.docx": OOXML_ENCRYPTED,
    "stanley-cups.tsv": "text/tab-separated-values",
    "example-docs-README.md": "text/markdown",
}
EXPECTED = {entry["file"]: CORRECTED.get(entry["file"], entry["mime"]) for entry in MANIFEST}


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_every_corpus_file_gets_its_type(name):
    assert detect_mime(corpus_bytes(name), name) == EXPECTED[name]


def test_a_docx_is_recognised_by_its_members_even_when_libmagic_says_zip():
    assert detect_mime(corpus_bytes("testWORD.docx")) == DOCX


def test_the_file_name_does_not_override_the_content():
    assert detect_mime(corpus_bytes("minimal-document.pdf"), "report.docx") == "application/pdf"
    assert detect_mime(corpus_bytes("testCSV.csv"), "notes.txt") == "text/csv"


def test_the_file_name_breaks_a_tie_between_text_types():
    # One header line and one row: both a CSV and plain prose are plausible readings.
    data = b"name,city\nAda,London\n"
    assert detect_mime(data, "people.csv") == "text/csv"


def test_utf16_tables_are_recognised_through_their_byte_order_mark():
    data = "Team\tCity\tCups\nLeafs\tToronto\t13\nKings\tLA\t2\n".encode("utf-16")
    assert detect_mime(data, "cups.txt") == "text/tab-separated-values"


def test_json_and_plain_text_are_told_apart():
    assert detect_mime(json.dumps({"a": [1, 2]}).encode(), "data") == "application/json"
    assert detect_mime(b"Just a sentence, with a comma.\nAnd another line.\n", "x") == "text/plain"


def test_a_plain_zip_stays_a_zip():
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        archive.writestr("[Content_Types].xml", "<Types/>")
        archive.writestr("notes/word/draft.txt", "Office-like names, but no word/ folder at the top")
    assert detect_mime(buffer.getvalue(), "notes.zip") == "application/zip"


def test_empty_input_has_a_type():
    assert detect_mime(b"") == "application/x-empty"


def test_prose_with_as_many_commas_on_every_line_is_text_not_a_table():
    """Each sentence has one comma, so every "row" has two fields: still sentences, not cells."""
    prose = ("The committee met on Tuesday, and it agreed to postpone the vote until spring.\n"
             "Most members were present, although two sent their apologies by letter.\n"
             "The treasurer reported a small surplus, which will be carried over to next year.\n"
             "After a long discussion, the chair closed the meeting shortly before nine.\n")
    assert detect_mime(prose.encode(), "minutes.txt") == "text/plain"
    catalogue = ("sku,name,price,description\n"
                 "A1,Kettle,24.90,A steel kettle that boils a litre of water in under three minutes\n"
                 "B2,Toaster,31.00,Two slots and a crumb tray that slides out for cleaning\n"
                 "C3,Mug,6.50,Stoneware\n")
    assert detect_mime(catalogue.encode(), "items.txt") == "text/csv"


def test_a_csv_separated_by_semicolons_is_a_table(registry):
    """European spreadsheets save CSV with semicolons (the comma is their decimal mark): such a file
    was read as plain text, and a German user's "give me the table as Excel" found no table."""
    data = ("Filiale;Monat;Umsatz;Kunden\nBerlin;Januar;12400,50;310\nBerlin;Februar;13150;322\n"
            "Hamburg;Januar;9800;255\nMünchen;Februar;14100;332\n").encode()
    assert detect_mime(data, "umsatz.csv") == "text/csv"
    [table] = registry.extract(data, "umsatz.csv").items
    assert "Berlin\tJanuar\t12400,50\t310" in table.data
    # Prose with a semicolon in each sentence is still prose (the same median-cell rule as for commas).
    sentences = ("Der Ausschuss traf sich am Dienstag im kleinen Saal; er vertagte die Abstimmung bis zum Frühjahr.\n"
                 "Die meisten Mitglieder waren anwesend; zwei hatten sich vorher schriftlich entschuldigt.\n"
                 "Der Kassenwart berichtete von einem kleinen Überschuss; er wird auf das nächste Jahr übertragen.\n"
                 ).encode()
    assert detect_mime(sentences, "notizen.txt") == "text/plain"
