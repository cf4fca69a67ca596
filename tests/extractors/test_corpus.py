"""The whole shared corpus: the text a correct extractor must find, and typed results otherwise."""

from __future__ import annotations

import pytest

from extractors.runner import ocr_available

from .conftest import ENTRIES, MANIFEST, corpus_bytes, normalise, ocr_text, plain_text

WITH_TEXT = [e["file"] for e in MANIFEST if e["expect_text"]]
IMAGE_ONLY = [e["file"] for e in MANIFEST if e["expect_no_text"]]
WITH_OCR = [e["file"] for e in MANIFEST if e.get("expect_ocr_text")]
WITH_PASSWORD = [e["file"] for e in MANIFEST if e.get("password")]
needs_tesseract = pytest.mark.skipif(not ocr_available(), reason="tesseract is not installed; OCR cannot run")


@pytest.mark.parametrize("name", WITH_TEXT)
def test_every_expected_snippet_is_found(name, extracted):
    text = plain_text(extracted(name))
    missing = [snippet for snippet in ENTRIES[name]["expect_text"] if normalise(snippet) not in text]
    assert missing == []


@pytest.mark.parametrize("name", IMAGE_ONLY)
def test_image_only_files_invent_no_text(name, extracted):
    assert plain_text(extracted(name)) == ""


@needs_tesseract
@pytest.mark.ocr
@pytest.mark.parametrize("name", WITH_OCR)
def test_ocr_reads_the_phrases_in_images(name, extracted):
    text = ocr_text(extracted(name))
    missing = [phrase for phrase in ENTRIES[name]["expect_ocr_text"] if normalise(phrase) not in text]
    assert missing == []


@pytest.mark.parametrize("name", WITH_PASSWORD)
def test_password_protected_files_are_encrypted_without_the_password(name, registry):
    result = registry.extract(corpus_bytes(name), name)
    assert result.status == "encrypted"
    assert [item.name for item in result.items] == ["encrypted"]
    assert any("password" in warning for warning in result.warnings)
    assert not any(normalise(s) in plain_text(result) for s in ENTRIES[name]["expect_text"])


@pytest.mark.parametrize("name", WITH_PASSWORD)
def test_a_wrong_password_is_reported_as_such(name, registry):
    result = registry.extract(corpus_bytes(name), name, password="not-the-password")
    assert result.status == "encrypted"
    assert any("does not open" in warning for warning in result.warnings)


@pytest.mark.parametrize("name", WITH_PASSWORD)
def test_the_known_password_opens_encrypted_files(name, extracted):
    assert extracted(name).status == "ok"


@pytest.mark.parametrize("name", ["r2-empty-password.pdf", "r6-empty-password.pdf", "copy-protected.pdf"])
def test_empty_password_pdfs_open_without_asking(name, registry):
    result = registry.extract(corpus_bytes(name), name)
    assert result.status == "ok"
    assert ENTRIES[name]["expect_text"][0] in plain_text(result)


@pytest.mark.parametrize("name", ["issue15590.pdf", "testWORD_truncated.docx"])
def test_broken_files_say_they_are_corrupt(name, extracted):
    result = extracted(name)
    assert result.status == "corrupt"
    assert result.items[0].name == "corrupt"
    assert "could not be extracted" in result.items[0].data
    assert result.warnings


def test_an_old_binary_word_file_is_unsupported_and_named(extracted):
    result = extracted("testWORD.doc")
    assert result.status == "unsupported"
    assert [item.is_text for item in result.items] == [False]
    assert any("Word" in warning and "old binary" in warning for warning in result.warnings)


def test_an_old_binary_excel_workbook_is_read_sheet_by_sheet_with_its_numbers(extracted):
    result = extracted("testEXCEL.xls")
    assert result.status == "ok"
    assert [item.metadata["sheet"] for item in result.items] == ["Feuil1", "Feuil2", "Feuil3"]
    sheet = result.items[0]
    # The text the manifest names, and the squares (formulas) as the workbook's cached results.
    assert "Sample Excel Worksheet - Numbers and their Squares" in sheet.data
    assert "\tNumber\tSquare\n" in sheet.data and "\t12\t144\n" in sheet.data  # not 12.0 / 144.0
    # The same workbook saved as .xlsx reads the same: shown text and cells (numbers as numbers).
    as_xlsx = extracted("testEXCEL.xlsx").items[0]
    assert sheet.data == as_xlsx.data
    assert sheet.metadata["tables"] == as_xlsx.metadata["tables"]
    assert [None, 15, 225] in sheet.metadata["tables"][0]["rows"]


def test_the_zip_yields_its_members_text(extracted):
    result = extracted("simple.zip")
    assert result.status == "ok"
    assert "How to Get New Ideas" in plain_text(result)
    assert "Maple Leafs TOR 13" in plain_text(result)
    assert sorted({item.metadata["member"] for item in result.items}) == ["ideas-page.html", "stanley-cups.csv"]


@pytest.mark.parametrize("name", [e["file"] for e in MANIFEST])
def test_every_item_is_numbered_summarised_and_says_how_it_was_made(name, extracted):
    items = extracted(name).items
    assert [item.sequence_nr for item in items] == list(range(1, len(items) + 1))
    for item in items:
        assert item.summary.startswith(item.name)
        assert item.metadata.get("extractor")
