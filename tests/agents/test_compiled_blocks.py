"""Superlatives over sheets laid out for the eye (issue 50): a caption row above the headings ("In
millions ... January–June 2024") is part of each heading; the same headings again further down start
the block of another period, which is its own table (no region counted twice); periods side by side
caption each their own columns. Workbooks written for this test, en and de."""

from __future__ import annotations

import io

import openpyxl

from agents.base import DocumentText
from agents.knowledge.blocks import blocks
from agents.language import MAX, MIN
from extractors import extract
from extractors.tables import Table

REGIONS = {2024: [("North", 812, 95), ("South", 640, 120), ("East", 905, -12), ("West", 388, 41)],
           2023: [("North", 799, 88), ("South", 910, 101), ("East", 702, 7), ("West", 415, "  —")]}


def stacked(headings: list[str], unit: str, period: str) -> bytes:
    """One block per year, newest first: unit and period in a caption row, the headings under it."""
    book = openpyxl.Workbook()
    sheet = book.active
    assert sheet is not None
    sheet.append(["Results by region"])
    sheet.append([])
    for year, rows in REGIONS.items():
        sheet.append([unit, None, None, None, f"{period}\n{year}"])
        sheet.append([None, *headings])
        sheet.append([])
        for region, sales, profit in rows:
            sheet.append([region, sales, profit, None, sales * 2])
        sheet.append(["Total", sum(r[1] for r in rows), None, None, None])
        sheet.append([])
    sheet.append(["(a) Figures are unaudited."])
    out = io.BytesIO()
    book.save(out)
    return out.getvalue()


def document(data: bytes, name: str) -> DocumentText:
    found = extract(data, name)
    return DocumentText.of(name, "xlsx", found.mime, len(data), found.items)


EN = document(stacked(["Sales (a)", "Trading profit", None, "Orders"], "In millions of EUR", "January–June"), "en.xlsx")


def answer(question: str, doc: DocumentText = EN) -> list[tuple[str, str, float, str]]:
    from agents.knowledge.compiled import compile_answer

    return [(c.op, c.label, c.value, c.column) for c in compile_answer(question, [doc])]


def test_each_period_block_is_its_own_table_and_the_caption_is_in_its_headings():
    [table] = EN.tables
    found = blocks(table)
    assert [b.headings[1] for b in found] == ["January–June 2024 Sales (a)", "January–June 2023 Sales (a)"]
    assert found[0].headings[0] == ""  # the unit above the label column captions nothing
    assert [r[0] for r in found[0].rows if r and r[0] in ("North", "Total")] == ["North", "Total"]
    assert all(r[0] != "In millions of EUR" for b in found for r in b.rows if r)


def test_the_period_asked_else_the_latest_and_no_region_twice():
    assert answer("Which region had the highest sales?") == [(MAX, "East", 905.0, "January–June 2024 Sales (a)")]
    assert answer("Which region had the highest sales in 2023?") == [(MAX, "South", 910.0, "January–June 2023 Sales (a)")]
    # A dash for "none" is no value the question names: all regions stay candidates.
    assert answer("Which region had the lowest trading profit in 2023?") == [
        (MIN, "East", 7.0, "January–June 2023 Trading profit")]


def test_a_german_sheet_asked_in_german():
    de = document(stacked(["Umsatz", "Ergebnis", None, "Aufträge"], "In Mio. EUR", "Januar–Juni"), "de.xlsx")
    assert answer("Welche Region hatte 2023 den höchsten Umsatz?", de) == [(MAX, "South", 910.0, "Januar–Juni 2023 Umsatz")]
    assert answer("Welche Region hatte den niedrigsten Umsatz?", de) == [(MIN, "West", 388.0, "Januar–Juni 2024 Umsatz")]


def test_periods_side_by_side_caption_their_own_columns():
    rows: list[list[object]] = [["In EUR k", None, "2024", None, None, "2023"],
                                [None, "Sales", "Profit", None, "Sales", "Profit"],
                                ["North", 812, 95, None, 799, 88], ["South", 640, 120, None, 910, 101],
                                ["East", 905, -12, None, 702, 7]]
    [block] = blocks(Table("side", rows, 0))
    assert block.headings == ["", "2024 Sales", "2024 Profit", "", "2023 Sales", "2023 Profit"]


def test_a_row_of_words_under_the_headings_is_a_row_not_a_caption():
    rows: list[list[object]] = [["Name", "Team", "Score"], ["Alice", "Red", "n/a"], ["Bob", "Blue", 12], ["Cleo", "Red", 30]]
    [block] = blocks(Table("plain", rows, 0))
    assert block.headings == ["Name", "Team", "Score"] and [r[0] for r in block.rows] == ["Alice", "Bob", "Cleo"]


def test_the_heading_that_says_what_was_asked_and_a_label_named_apart_from_it():
    rows: list[list[object]] = [["Segment", "Year", "Underlying trading profit", "Trading profit"],
                                ["Coffee", 2024, 50, 40], ["Water", 2024, 30, 35], ["Pet food", 2024, 45, 20]]
    doc = DocumentText(name="seg.csv", ext="csv", mime="text/csv", size=1, items=[], tables=[Table("seg", rows, 0)])
    # "trading profit" is also in "Underlying trading profit": that column is neither the measure nor the label.
    assert answer("Which segment had the lowest trading profit?", doc) == [(MIN, "Pet food", 20.0, "Trading profit")]


def sheet_per_year() -> bytes:
    """A workbook of our own: a sheet per year, items by quarter and their total (no heading says "sales")."""
    book = openpyxl.Workbook()
    book.remove(book.active)
    figures = {2022: {"Tea": [40, 42, 38, 50], "Juice": [61, 55, 58, 70], "Water": [20, 22, 25, 30]},
               2023: {"Tea": [44, 47, 41, 52], "Juice": [39, 41, 37, 45], "Water": [60, 66, 71, 80]}}
    for year, items in figures.items():
        sheet = book.create_sheet(str(year))
        sheet.append(["Item", "Q1", "Q2", "Q3", "Q4", "Total"])
        for item, quarters in items.items():
            sheet.append([item, *quarters, sum(quarters)])
        sheet.append(["Total", *[sum(q[i] for q in items.values()) for i in range(4)],
                      sum(sum(q) for q in items.values())])
    out = io.BytesIO()
    book.save(out)
    return out.getvalue()


def test_a_row_total_is_the_measure_when_no_heading_is_asked_and_the_sheet_named_by_the_year():
    """"The highest sales in 2023" over sheets of quarters names no column: the column that adds up the
    others in every row is the measure (found by the numbers), and the sheet named "2023" is the period;
    a question across the columns ("which quarter") is no row's maximum and compiles nothing."""
    doc = document(sheet_per_year(), "drinks-sales.xlsx")
    assert answer("Which item had the highest sales in 2023?", doc) == [(MAX, "Water", 277.0, "Total")]
    assert answer("Which item sold the least in 2022?", doc) == [(MIN, "Water", 97.0, "Total")]
    assert answer("Which quarter had the highest sales in 2023?", doc) == []
