"""What agents read of a document is cleaned: hyphenation joined, running headers and footers,
tables of contents, indexes and bibliographies kept out; slide tables and notes apart."""

from __future__ import annotations

import re

import pytest

from agents.offline import OfflineModel
from agents.registry import build_registry
from agents.toolkit.cleanup import INDEX_LINE, REFERENCE_LINE, TOC_LINE
from tests.agents.conftest import load_document, play_round

# Lines that must never reach a summary: printer's slugs and running heads (header/footer), dot
# leaders and page-numbered entries (contents, index), numbered references and citation forms.
MARKERS = [
    re.compile(r"\.qxd|PASS PAGES|\bPage [0-9ivx]+\b"),
    TOC_LINE, INDEX_LINE, REFERENCE_LINE,
    re.compile(r"\bIn Proceedings\b|\bpp\. \d|\bIbid\b|\bop\. cit\b|\bvol\. \d", re.IGNORECASE),
]


def marked(line: str) -> bool:
    return any(m.search(line) for m in MARKERS)


@pytest.mark.parametrize("name", ["freeculture.pdf", "tracemonkey.pdf"])
async def test_summaries_of_long_documents_carry_no_back_matter_or_running_heads(name: str) -> None:
    done = await play_round("Summarize this document.", [load_document(name)], OfflineModel(),
                           build_registry(entry_points=False))
    [summary] = done.by_agent("summarizer")
    bullets = [line[2:] for line in summary.text.splitlines() if line.startswith("- ")]
    assert len(bullets) >= 3
    assert not [b for b in bullets if marked(b)]


async def test_the_book_reads_without_slugs_hyphens_index_or_notes() -> None:
    book = load_document("freeculture.pdf")
    text = book.text
    assert ".qxd" not in text and "4TH PASS PAGES" not in text
    assert not re.search(r"^\d{1,2}$", text, re.M)  # margin line numbers
    assert "com- piler" not in text and "copy-\nright" not in text and "copyright" in text
    assert not [line for line in text.splitlines() if INDEX_LINE.match(line)]
    assert "Jefferson Graham" not in text  # an endnote


def test_a_paper_keeps_its_body_and_loses_its_references() -> None:
    paper = load_document("tracemonkey.pdf").text
    assert "Future Work" in paper and "speedups of 2x to 20x" in paper
    assert not [line for line in paper.splitlines() if REFERENCE_LINE.match(line)]


def test_slide_tables_and_notes_stay_apart_from_the_slide_prose() -> None:
    deck = load_document("powerpoint_sample.pptx")
    items = dict(deck.items)
    assert "R1" not in items["slide 1"] and "True" not in items["slide 1"]
    assert items["slide 2 notes"] == "Some notes on the second slide."
    assert "Some notes" not in items["slide 2"]
    assert deck.tables[0].rows[2][:3] == ["R1", "True", "False"]


async def test_the_slide_summary_quotes_prose_not_table_cells() -> None:
    done = await play_round("Summarize the presentation.", [load_document("powerpoint_sample.pptx")],
                           OfflineModel(), build_registry(entry_points=False))
    [summary] = done.by_agent("summarizer")
    assert "True False" not in summary.text and "R1" not in summary.text
