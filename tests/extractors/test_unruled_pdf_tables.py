"""Tables set without rules in a PDF are read as tables, their numbers as numbers (issue 50: price
tables, statistics and expenditure reports were not found), in en/de/fr PDFs made here with
reportlab; prose with a figure here and there gives no table."""

from __future__ import annotations

import io

import pytest

from extractors import extract

TABLES = {
    "en": ("Farm gate prices, autumn report",
           "Prices paid to producers in the region, per unit, without tax.",
           ["Product", "Unit", "Price 2024", "Price 2025"],
           [["Wheat", "t", "212.50", "198.00"], ["Barley", "t", "187.25", "179.40"],
            ["Milk", "100 kg", "41.80", "44.10"], ["Potatoes", "dt", "18.60", "21.30"]]),
    "de": ("Erzeugerpreise, Herbstbericht",
           "Den Erzeugern der Region gezahlte Preise je Einheit, ohne Steuer.",
           ["Erzeugnis", "Einheit", "Preis 2024", "Preis 2025"],
           [["Weizen", "t", "212,50", "198,00"], ["Gerste", "t", "187,25", "179,40"],
            ["Milch", "100 kg", "41,80", "44,10"], ["Kartoffeln", "dt", "18,60", "21,30"]]),
    "fr": ("Prix à la production, rapport d'automne",
           "Prix payés aux producteurs de la région, par unité, hors taxes.",
           ["Produit", "Unité", "Prix 2024", "Prix 2025"],
           [["Blé", "t", "212,50", "198,00"], ["Orge", "t", "187,25", "179,40"],
            ["Lait", "100 kg", "41,80", "44,10"], ["Pommes de terre", "dt", "18,60", "21,30"]]),
}


def _pdf(title: str, intro: str, header: list[str], rows: list[list[str]]) -> bytes:
    from reportlab.lib.pagesizes import A4
    from reportlab.pdfgen import canvas

    buffer = io.BytesIO()
    page = canvas.Canvas(buffer, pagesize=A4)
    page.setFont("Helvetica-Bold", 14)
    page.drawString(60, 780, title)
    page.setFont("Helvetica", 10)
    page.drawString(60, 755, intro)
    for y, cells in zip(range(720, 0, -18), [header, *rows]):
        page.drawString(60, y, cells[0])
        page.drawString(220, y, cells[1])
        page.drawRightString(380, y, cells[2])  # figures set right-aligned, as reports do
        page.drawRightString(480, y, cells[3])
    page.drawString(60, 600, "The figures come from the regional market survey of 2025 and cover 14 markets.")
    page.showPage()
    page.save()
    return buffer.getvalue()


@pytest.mark.parametrize("language", ["en", "de", "fr"])
def test_a_table_without_rules_is_found_with_numbers_as_numbers(language):
    title, intro, header, rows = TABLES[language]
    found = extract(_pdf(title, intro, header, rows), "prices.pdf")
    [table] = [t for item in found.items for t in item.metadata.get("tables", [])]
    cells = table["rows"] if isinstance(table, dict) else table.rows
    assert [str(c) for c in cells[0]] == header
    assert [c for c in cells[1]] == [rows[0][0], "t", 212.5, 198]
    assert cells[4][0] == rows[3][0] and cells[4][2] == 18.6 and len(cells) == 5


def test_prose_with_a_figure_here_and_there_gives_no_table():
    from reportlab.lib.pagesizes import A4
    from reportlab.pdfgen import canvas

    buffer = io.BytesIO()
    page = canvas.Canvas(buffer, pagesize=A4)
    for y, line in zip(range(760, 0, -16), [
            "In 2024 the cooperative sold 412 tonnes of apples to four buyers.",
            "Prices fell by 6 percent, and the harvest ended on 18 October.",
            "The board met 5 times; 58 farms are members now.",
            "The cold rooms were repaired in July for 9,800 euros."]):
        page.drawString(60, y, line)
    page.showPage()
    page.save()
    found = extract(buffer.getvalue(), "report.pdf")
    assert not [t for item in found.items for t in item.metadata.get("tables", [])]


# Thousands set apart by a space (French, Swiss, ISO style; a PDF's text keeps it as a plain space): each
# group alone reads as a small whole number, and a row of them did not read as a row (a walk through the
# service with a library's half-year report of our own: its table of monthly loans came out as prose).
SPACED = {
    "fr": (["Mois", "Prêts", "Nouveaux inscrits", "Animations"],
           [["Janvier", "4 120", "38", "6"], ["Février", "3 870", "29", "5"], ["Mars", "12 560", "51", "9"],
            ["Avril", "3 940", "33", "7"], ["Mai", "3 210", "22", "4"], ["Juin", "4 980", "64", "11"]]),
    "en": (["Month", "Loans", "New members", "Events"],
           [["January", "4 120", "38", "6"], ["February", "3 870", "29", "5"], ["March", "12 560", "51", "9"],
            ["April", "3 940", "33", "7"], ["May", "3 210", "22", "4"], ["June", "4 980", "64", "11"]]),
    "de": (["Monat", "Ausleihen", "Neuanmeldungen", "Veranstaltungen"],
           [["Januar", "4 120", "38", "6"], ["Februar", "3 870", "29", "5"], ["März", "12 560", "51", "9"],
            ["April", "3 940", "33", "7"], ["Mai", "3 210", "22", "4"], ["Juni", "4 980", "64", "11"]]),
}


@pytest.mark.parametrize("language", ["en", "de", "fr"])
def test_a_table_whose_thousands_are_set_apart_by_a_space_is_found_with_numbers_as_numbers(language):
    header, rows = SPACED[language]
    found = extract(_pdf("Bibliothèque", "Activité mensuelle", header, rows), "loans.pdf")
    [table] = [t for item in found.items for t in item.metadata.get("tables", [])]
    cells = table["rows"] if isinstance(table, dict) else table.rows
    assert [str(c) for c in cells[0]] == header
    assert cells[1] == [rows[0][0], 4120, 38, 6] and cells[3][1] == 12560 and len(cells) == 7
