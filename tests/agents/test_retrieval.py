"""Passage retrieval: chunks keep their place, terms are stemmed per language, BM25 finds the passage,
and the analyst cites what it was given, with a model too."""

from __future__ import annotations

from agents.base import DocumentText, Passage, TaskContext, TaskSpec
from agents.builtin.analyst import Analyst
from agents.knowledge.retrieval import chunk_items, rank_documents, without_copies
from agents.language import index_terms, query_terms
from tests.scripted import ScriptedModel


def doc(name: str, *items: tuple[str, str], file_id: int = 1) -> DocumentText:
    return DocumentText(name=name, ext=name.rsplit(".", 1)[-1], mime="", size=10, items=list(items), file_id=file_id)


def test_chunks_keep_their_page_sheet_or_section():
    chunks = chunk_items([("page 3", "One sentence here. " * 80), ("sheet Revenue", "Zone NA\t12553"),
                          ("comments", "John: fine.")])
    assert {c.page for c in chunks if c.page} == {3} and len([c for c in chunks if c.page]) >= 2
    assert [c.sheet for c in chunks if c.sheet] == ["Revenue"]
    assert [c.section for c in chunks if c.section] == ["comments"]
    # A document's one item (an HTML page, a text file's body) names no place in it: "page.html, page" misleads.
    assert [c.section for c in chunk_items([("page", "Hello there."), ("body", "Hi."), ("text", "Yo.")])] == [None] * 3
    assert all(len(c.text.split()) <= 100 for c in chunks)


def test_a_sheets_rows_are_passages_with_their_headings():
    sheet = ("Squares\n\n\tNumber\tSquare\n\t11\t121\n\t12\t144\n\nIn CHF\t\t2023\n\tSales\tMargin\n"
             "Zone NA\t12,553\t(81)\n\nWritten in Excel.")
    texts = [c.text for c in chunk_items([("sheet Feuil1", sheet)])]
    assert texts == ["Number: 11; Square: 121", "Number: 12; Square: 144", "In CHF, 2023 — Zone NA; Sales: 12,553; Margin: (81)",
                     "Squares Written in Excel."]


def test_a_table_of_words_keeps_its_rows_as_passages_under_its_heading():
    # A DOCX status report's milestones: dates and names, no number; its rows vanished from the passages,
    # and "the next milestone after the load tests" found the heading "Next milestones" alone.
    section = ("Next milestones\nMilestone\tDate\tOwner\nLoad tests finished\t25 October 2024\tTom Becker\n"
               "Cut-over\t14 November 2024\tMaria Okafor")
    chunks = chunk_items([("Next milestones", section), ("Roles", "Roles\nName\tRole\nAnna\tChair\nLater text.")])
    assert [(c.text, c.section) for c in chunks] == [
        ("Milestone: Load tests finished; Date: 25 October 2024; Owner: Tom Becker", "Next milestones"),
        ("Milestone: Cut-over; Date: 14 November 2024; Owner: Maria Okafor", "Next milestones"),
        ("Name: Anna; Role: Chair", "Roles"), ("Roles Later text.", "Roles")]
    # One row of two words is a line of text, not a table.
    assert [c.text for c in chunk_items([("sheet A", "Total\tsee below\nAll sold.")])] == ["Total see below All sold."]


def test_a_name_in_capitals_is_a_query_term_even_when_it_is_a_function_word_elsewhere():
    assert "na" in query_terms("What were the sales of Zone NA?", ["en"])
    # "na" was a function word only in the hand-written vocabulary issue 32 removed; "de" is a stop word.
    assert "de" in query_terms("What were the sales of Zone DE?", ["en"])
    assert "de" not in query_terms("What were the sales of zone de?", ["en"])


def test_terms_are_snowball_stems_without_the_languages_stop_words():
    assert index_terms("Die Kündigungsfristen der Verträge", "de") == ["kundigungsfrist", "vertrag"]
    assert index_terms("Les contrats et les résiliations", "fr") == ["contrat", "resili"]
    assert index_terms("The contracts were terminated", "en") == ["contract", "termin"]
    assert "vertrag" in query_terms("Was steht im Vertrag?", ["en"])


def test_bm25_picks_the_document_that_answers_among_distractors():
    docs = [doc("a.txt", ("text", "The weather was mild all year. Nothing else happened."), file_id=1),
            doc("contract.pdf", ("page 1", "This agreement starts in May."),
                ("page 2", "Either party may terminate the contract with three months notice."), file_id=2),
            doc("b.txt", ("text", "A contract of sale was mentioned once."), file_id=3)]
    [best, *_] = rank_documents("How can the contract be terminated?", docs, 3)
    assert (best.name, best.page) == ("contract.pdf", 2)
    german = rank_documents("Wie viele Monate Kündigung (notice) gelten?", docs, 1)
    assert german and german[0].name == "contract.pdf"


async def test_with_a_model_the_analyst_sends_numbered_passages_and_lists_its_sources():
    model = ScriptedModel("Either party may terminate it.")
    docs = {"contract.pdf": doc("contract.pdf", ("page 2", "Either party may terminate the contract with notice."),
                                file_id=9)}
    task = TaskSpec(id="t1", agent="analyst", instructions="How can the contract be terminated?")
    result = await Analyst().run(task, TaskContext(prompt=task.instructions, language="en", documents=docs,
                                                   predecessors={}, model=model))
    [request] = model.requests
    assert "[1] contract.pdf, page 2:" in request.messages[-1]["content"]
    # It cited nothing: the passages it was given are shown under it, each with its quoted sentence.
    assert result.text == ("Either party may terminate it.\n\n**Sources**\n\n"
                           "> Either party may terminate the contract with notice.\n\n— contract.pdf, page 2 [1]")
    assert result.meta["citations"] == [{"fileId": 9, "name": "contract.pdf", "page": 2,
                                         "quote": "Either party may terminate the contract with notice."}]


def test_a_row_the_workflow_copied_is_quoted_from_the_users_table_in_the_copys_place():
    source = doc("sales.xlsx", ("sheet H1", "x"), file_id=1)
    copy = DocumentText(name="sales-tables.csv", ext="csv", mime="", size=1, items=[], file_id=2, origin="produced")
    found = [Passage("sales-tables.csv", "2022 — Total; Sales: 45580; Margin: -999", 9.0, file_id=2),
             Passage("sales.xlsx", "2022 — Zone NA; Sales: 12,138; Margin: (81)", 8.0, file_id=1),
             Passage("sales.xlsx", "2022 — Total; Sales: 45,580; Margin: (999)", 7.0, file_id=1),
             Passage("sales-tables.csv", "2022 — Zone EUR; Sales: 9467", 6.0, file_id=2),
             Passage("sales.xlsx", "2022 — Zone NA; Sales: 12,138; Margin: (81)", 5.0, file_id=1)]
    kept = without_copies(found, [source, copy], 6)
    assert [(p.name, p.text, p.score) for p in kept] == [
        ("sales.xlsx", "2022 — Total; Sales: 45,580; Margin: (999)", 7.0),  # the source, where its copy ranked
        ("sales.xlsx", "2022 — Zone NA; Sales: 12,138; Margin: (81)", 8.0),  # said once
        ("sales-tables.csv", "2022 — Zone EUR; Sales: 9467", 6.0)]  # a copy's row with no source found stays
    # A different number is a different row: 45,580 is not 45,581, nor 3,5 the 35 of a copy.
    assert len(without_copies([Passage("a", "Sales: 45,580", 2.0, file_id=1),
                               Passage("b", "Sales: 45581", 1.0, file_id=2)], [source, copy], 6)) == 2
    assert len(without_copies([Passage("a", "Rate 3,5", 2.0, file_id=1),
                               Passage("b", "Rate 35", 1.0, file_id=2)], [source, copy], 6)) == 2
    assert len(without_copies(found, [source, copy], 2)) == 2
    # The workflow's own documents echo the requests that made them: a user's passage scoring at
    # least half the best goes first, a weaker one does not.
    echo = [Passage("report.md", "Sales by zone, as requested", 9.0, file_id=2),
            Passage("sales.xlsx", "Zone NA; Sales: 12,553", 5.0, file_id=1),
            Passage("sales.xlsx", "Sales were counted in CHF", 4.0, file_id=1)]
    assert [p.score for p in without_copies(echo, [source, copy], 6)] == [5.0, 9.0, 4.0]
