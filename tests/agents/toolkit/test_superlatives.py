"""Superlative questions over table rows: the row with the extreme value of the column asked about."""

from __future__ import annotations

import pytest

from agents.language import direction, extreme_first, index_terms, names_nothing, qualified, row_cells, value_of


def terms(words: str) -> set[str]:
    return set(index_terms(words, "en"))


def order(question: str, texts: list[str], scores: list[float] | None = None) -> list[str] | None:
    found = extreme_first(question, texts, scores or [1.0] * len(texts), terms, terms(question))
    return None if found is None else [texts[i] for i in found]


@pytest.mark.parametrize("question, sign", [
    ("Which team has the most Stanley Cups?", 1), ("Which zone had the lowest sales?", -1),
    ("Welche Mannschaft hat die meisten Titel?", 1), ("Welche Zone hatte den niedrigsten Umsatz?", -1),
    ("Quelle équipe a le plus de titres ?", 1), ("Quelle équipe a le moins de titres ?", -1),
    ("Quelle ville est la plus petite ?", -1), ("What does the report say about sales?", 0),
])
def test_a_superlative_is_found_in_three_languages(question, sign):
    assert direction(question) == sign


def test_a_superlative_without_its_measure_names_nothing():
    assert names_nothing("And which zone had the lowest?") and names_nothing("Et laquelle en a le moins ?")
    assert not names_nothing("Which zone had the lowest sales?") and not names_nothing("And of 9?")


def test_the_words_a_superlative_qualifies_end_before_a_preposition():
    assert qualified("Which zone had the highest sales in the first half of 2023?").strip() == "sales"
    assert qualified("Which team has the most Stanley Cups?").strip() == "Stanley Cups"


def test_a_rows_cells_and_values_read_as_the_sheet_shows_them():
    assert row_cells("In CHF, 2023 — Zone NA; Sales (a): 12,553; Margin: (81)") == [
        ("", "Zone NA"), ("Sales (a)", "12,553"), ("Margin", "(81)")]
    assert row_cells("A sentence; another one.") == []  # prose is not a row
    assert [value_of(v) for v in ("12,553", "(81)", "15,50 €", "4.2%", "—", "Zone NA")] == [
        12553.0, -81.0, 15.5, 4.2, None, None]


def test_the_rows_come_in_the_order_of_the_asked_columns_values_not_of_the_table():
    rows = ["Team: Blues; Stanley Cups: 1", "Team: Maple Leafs; Stanley Cups: 13", "Team: Flyers; Stanley Cups: 2"]
    assert order("Which team has the most Stanley Cups?", rows) == [rows[1], rows[2], rows[0]]
    assert order("Which team has the fewest Stanley Cups?", rows) == [rows[0], rows[2], rows[1]]
    assert order("Which team is from Toronto?", rows) is None  # no superlative: the ranking stands


def test_the_kind_of_row_asked_for_and_not_the_total_wins():
    rows = ["2023 — Zone NA; Sales: 12,553; Profit: 2,713", "2023 — Zone EUR; Sales: 9,467; Profit: 1,570",
            "2023 — Unallocated items; Sales: 20,000; Profit: (1,164)", "2023 — Total; Sales: 46,293; Profit: 7,904",
            "2022 — Zone NA; Sales: 99,999; Profit: 2,284", "Zone sales grew in every region."]
    scores = [2.0, 2.0, 1.5, 1.5, 1.0, 1.8]
    # Which zone: not the unallocated items, not the total, not 2022's block (ranked lower).
    assert order("Which zone had the highest sales?", rows, scores)[:2] == [rows[0], rows[1]]
    assert order("Which zone had the lowest profit?", rows, scores)[0] == rows[1]
    # No kind of row asked for: every row of the block but the total.
    assert order("What had the highest sales?", rows, scores)[0] == rows[2]


def test_a_column_of_charges_shown_negative_is_largest_at_its_most_negative():
    rows = ["Zone NA; Impairment: (285)", "Zone EUR; Impairment: (23)", "Zone AOA; Impairment: —"]
    assert order("Which zone had the largest impairment?", rows)[0] == rows[0]


def test_a_total_row_is_left_out_but_a_name_that_starts_like_one_is_not():
    rows = ["Company: Total; Revenue: 900", "Company: TotalEnergies; Revenue: 500", "Company: Shell; Revenue: 400",
            "Company: Zwischensumme; Revenue: 1,800"]
    assert order("Which company had the highest revenue?", rows)[0] == rows[1]
