"""What the full-text index holds is the cleaned text agents read: quotes read as the answer does."""

from __future__ import annotations

from agents.knowledge.indexed import chunk_rows
from agents.toolkit.cleanup import INDEX_LINE, TOC_LINE
from extractors import build_registry
from tests.corpus import path


def rows_of(name: str) -> list[dict]:
    extraction = build_registry(ocr=False).extract(path(name).read_bytes(), name)
    return chunk_rows(extraction.items)


def test_the_book_is_indexed_without_its_contents_index_or_ligatures():
    rows = rows_of("freeculture.pdf")
    text = "\n".join(row["text"] for row in rows)
    assert "\ufb01" not in text and "office" in text
    assert not [line for line in text.split("\n") if TOC_LINE.search(line) or INDEX_LINE.match(line)]
    assert "com- piler" not in text and "copy- right" not in text


def test_a_word_documents_passages_carry_their_heading_as_section():
    rows = rows_of("testWORD.docx")
    assert {"Heading Level 3", "Sample Word Document Title"} <= {row["section"] for row in rows}
    [bold] = [row for row in rows if "BOLD and ITALIC" in row["text"]]
    assert bold["section"] == "Heading Level 3"
