"""Formula cells saved without their values: computed, or named; never shown as empty cells."""

from __future__ import annotations

import io

import openpyxl
import pytest

from extractors import recalc
from extractors.tables import table_from_wire


def yearly_workbook(extra: str | None = None) -> bytes:
    """Yearly sheets with totals and a summary sheet, written by openpyxl: formulas, no saved values."""
    book = openpyxl.Workbook()
    for n, year in enumerate(("2022", "2023")):
        sheet = book.active if n == 0 else book.create_sheet()
        sheet.title = year
        sheet.append(["Region", "Q1", "Q2", "Total"])
        for row, region in enumerate(["North", "South", "East"], start=2):
            sheet.append([region, (10 + n) * row, (12 + n) * row, f"=SUM(B{row}:C{row})"])
        sheet.append(["Total", "=SUM(B2:B4)", "=SUM(C2:C4)", "=SUM(D2:D4)"])
    summary = book.create_sheet("Summary")
    summary.append(["Year", "Total"])
    summary.append([2022, "='2022'!D5"])
    summary.append([2023, "='2023'!D5"])
    if extra:
        summary.append(["Other", extra])
    buffer = io.BytesIO()
    book.save(buffer)
    return buffer.getvalue()


def test_the_cells_without_values_are_found_in_the_sheets():
    missing = recalc.uncached(yearly_workbook())
    assert list(missing) == ["2022", "2023", "Summary"]
    assert missing["2022"][-1] == {"cell": "D5", "formula": "=SUM(D2:D4)"}
    assert missing["Summary"] == [{"cell": "B2", "formula": "='2022'!D5"}, {"cell": "B3", "formula": "='2023'!D5"}]


def test_a_workbook_saved_with_formulas_only_reads_with_their_values(registry):
    result = registry.extract(yearly_workbook(), "years.xlsx")
    sheets = {item.name: item for item in result.items}
    assert "Total\t90\t108\t198" in sheets["sheet 2022"].data
    assert "North\t22\t26\t48" in sheets["sheet 2023"].data
    assert sheets["sheet Summary"].data.splitlines()[1:] == ["2022\t198", "2023\t216"]
    table = table_from_wire(sheets["sheet Summary"].metadata["tables"][0])
    assert table.rows[1:] == [[2022, 198], [2023, 216]]  # numbers, for table work
    computed = sheets["sheet 2022"].metadata["formulasComputed"]
    assert computed["by"].startswith("formulas ") and computed["cells"] == ["D2", "D3", "D4", "B5", "C5", "D5"]
    assert "6 formula values computed by formulas" in sheets["sheet 2022"].summary
    assert "formulasWithoutValues" not in sheets["sheet 2022"].metadata


def test_a_formula_the_library_cannot_compute_is_named_in_the_item(registry):
    result = registry.extract(yearly_workbook(extra="=NOSUCHFUNCTION(B2)"), "years.xlsx")
    summary = {item.name: item for item in result.items}["sheet Summary"]
    assert summary.metadata["formulasWithoutValues"] == [{"cell": "B4", "formula": "=NOSUCHFUNCTION(B2)"}]
    assert "1 formula cell has no saved value (B4)" in summary.summary
    assert summary.metadata["formulasComputed"]["cells"] == ["B2", "B3"]


@pytest.mark.parametrize("limit", ["MAX_BYTES", "MAX_CELLS"])
def test_a_workbook_too_large_to_recompute_names_every_such_cell(registry, monkeypatch, limit):
    monkeypatch.setattr(recalc, limit, 0)
    result = registry.extract(yearly_workbook(), "years.xlsx")
    first = result.items[0]
    assert [m["cell"] for m in first.metadata["formulasWithoutValues"]] == ["D2", "D3", "D4", "B5", "C5", "D5"]
    assert "6 formula cells have no saved value (D2, D3, D4, B5, C5, D5); they are shown empty" in first.summary


def test_saved_values_are_read_as_saved_and_nothing_is_recomputed(registry, monkeypatch):
    from .conftest import corpus_bytes

    monkeypatch.setattr(recalc, "compute", lambda *a: pytest.fail("a workbook with saved values was recomputed"))
    result = registry.extract(corpus_bytes("testEXCEL.xlsx"), "testEXCEL.xlsx")
    assert "\t10\t100\n" in result.items[0].data
    assert recalc.uncached(corpus_bytes("testEXCEL.xlsx")) == {}
