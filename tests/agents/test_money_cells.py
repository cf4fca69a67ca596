"""Money in a delivered workbook is a number with a currency format, not text ("1 280,00 €"; issue 50),
as English, German, French and Swiss documents write it; other text stays text."""

from __future__ import annotations

import io

import pytest

from agents.toolkit.files import xlsx_bytes
from extractors.tables import Table, money


@pytest.mark.parametrize(("text", "value", "symbol", "decimals"), [
    ("$1,280.50", 1280.5, "$", 2),             # en
    ("1.280,00 €", 1280.0, "€", 2),            # de
    ("1 280,00 €", 1280.0, "€", 2),            # fr
    ("1\u202f280,00\u00a0€", 1280.0, "€", 2),  # fr, as a word processor spaces it
    ("CHF 1'280.50", 1280.5, "CHF", 2),        # Swiss
    ("12,50 EUR", 12.5, "€", 2),
    ("€ 7", 7, "€", 0),
])
def test_an_amount_with_its_currency_is_read_as_money(text, value, symbol, decimals):
    assert money(text) == (value, symbol, decimals)


@pytest.mark.parametrize("text", ["Total HT", "€", "12 apples", "2024", "Zimmer 12 €uro", "1 280,00"])
def test_other_text_is_no_money(text):
    assert money(text) is None


def test_a_workbook_keeps_money_as_numbers_with_a_currency_format():
    from openpyxl import load_workbook

    table = Table("Rechnung", [["Posten", "Betrag"], ["Verdichter", "1.280,00 €"], ["Arbeit", "$95.50"],
                               ["Anfahrt", "CHF 40"], ["Notiz", "bezahlt"]])
    sheet = load_workbook(io.BytesIO(xlsx_bytes([table]))).active
    cells = {sheet.cell(row=r, column=1).value: sheet.cell(row=r, column=2) for r in range(2, 6)}
    assert cells["Verdichter"].value == 1280 and cells["Verdichter"].number_format == '#,##0.00 "€"'
    assert cells["Arbeit"].value == 95.5 and cells["Arbeit"].number_format == '"$"#,##0.00'
    assert cells["Anfahrt"].value == 40 and cells["Anfahrt"].number_format == '#,##0 "CHF"'
    assert cells["Notiz"].value == "bezahlt" and cells["Notiz"].data_type == "s"
