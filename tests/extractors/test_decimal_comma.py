"""A table's numbers are read the way the table writes them (issue 50). "72.300" is 72300 in a German or
French report and 72.3 in an English one: where no cell shows which ("4,25" against "4.25"), the document's
language decides. Word had this; CSV, HTML, PDF, PowerPoint and OpenDocument tables typed "72.300" as 72.3,
and a maximum over a German depot table answered "Hafen, 72,3"."""

from __future__ import annotations

import io
import zipfile

import pytest

from extractors import extract
from extractors.tables import comma_language, number, table_from_wire, writes_decimal_comma

# (language, title, sentence, header, rows): revenues in thousands groups only, so no cell decides alone.
REPORTS = {
    "de": ("Umsatz der Depots im dritten Quartal",
           "Die Zahlen stammen aus der Buchhaltung und sind in Euro angegeben, ohne die Steuer.",
           ["Depot", "Stadt", "Umsatz (€)"], [["Hafen", "Hamburg", "72.300"], ["Nord", "Kiel", "46.725"],
                                             ["Süd", "Ulm", "30.600"]]),
    "fr": ("Chiffre d'affaires des dépôts au troisième trimestre",
           "Les chiffres viennent de la comptabilité et sont donnés en euros, hors taxes, pour le trimestre.",
           ["Dépôt", "Ville", "Chiffre d'affaires (€)"], [["Port", "Marseille", "72.300"], ["Nord", "Lille", "46.725"],
                                                         ["Sud", "Nice", "30.600"]]),
    "en": ("Revenue of the depots in the third quarter",
           "The figures come from the accounts and are given in euros, without the tax, for the quarter.",
           ["Depot", "City", "Revenue"], [["Harbour", "Hull", "72.300"], ["North", "York", "46.725"],
                                          ["South", "Bath", "30.600"]]),
}
EXPECTED = {"de": [72300, 46725, 30600], "fr": [72300, 46725, 30600], "en": [72.3, 46.725, 30.6]}


def _csv(title: str, sentence: str, header: list[str], rows: list[list[str]]) -> tuple[bytes, str]:
    sep = "," if title == REPORTS["en"][0] else ";"  # as a spreadsheet in the language exports it
    lines = [sep.join(header), *(sep.join(row) for row in rows), f"{title}{sep}{sep}", f'"{sentence}"{sep}{sep}']
    return "\n".join(lines).encode(), "depots.csv"


def _html(title: str, sentence: str, header: list[str], rows: list[list[str]]) -> tuple[bytes, str]:
    cells = "".join(f"<tr>{''.join(f'<td>{c}</td>' for c in row)}</tr>" for row in [header, *rows])
    return f"<html><head><title>{title}</title></head><body><h1>{title}</h1><p>{sentence}</p>" \
           f"<table>{cells}</table></body></html>".encode(), "depots.html"


def _pdf(title: str, sentence: str, header: list[str], rows: list[list[str]]) -> tuple[bytes, str]:
    from reportlab.lib.pagesizes import A4
    from reportlab.pdfgen import canvas

    buffer = io.BytesIO()
    page = canvas.Canvas(buffer, pagesize=A4)
    page.setFont("Helvetica", 10)
    page.drawString(60, 780, title)
    page.drawString(60, 760, sentence)
    for y, cells in zip(range(720, 0, -18), [header, *rows]):
        page.drawString(60, y, cells[0])
        page.drawString(200, y, cells[1])
        page.drawRightString(420, y, cells[2])
    page.line(55, 732, 425, 732)  # a ruled table: a rule above and below its rows
    page.line(55, 720 - 18 * len(rows) - 6, 425, 720 - 18 * len(rows) - 6)
    page.showPage()
    page.save()
    return buffer.getvalue(), "depots.pdf"


def _pptx(title: str, sentence: str, header: list[str], rows: list[list[str]]) -> tuple[bytes, str]:
    import pptx
    from pptx.util import Inches

    deck = pptx.Presentation()
    slide = deck.slides.add_slide(deck.slide_layouts[5])
    slide.shapes.title.text = title
    box = slide.shapes.add_textbox(Inches(0.5), Inches(1.3), Inches(9), Inches(0.8))
    box.text_frame.text = sentence
    grid = slide.shapes.add_table(len(rows) + 1, 3, Inches(0.5), Inches(2.2), Inches(9), Inches(2)).table
    for r, row in enumerate([header, *rows]):
        for c, text in enumerate(row):
            grid.cell(r, c).text = text
    out = io.BytesIO()
    deck.save(out)
    return out.getvalue(), "depots.pptx"


def _odt(title: str, sentence: str, header: list[str], rows: list[list[str]]) -> tuple[bytes, str]:
    cells = "".join("<table:table-row>" + "".join(f"<table:table-cell><text:p>{c}</text:p></table:table-cell>"
                                                  for c in row) + "</table:table-row>" for row in [header, *rows])
    content = ('<?xml version="1.0" encoding="UTF-8"?>'
               '<office:document-content xmlns:office="urn:oasis:names:tc:opendocument:xmlns:office:1.0" '
               'xmlns:table="urn:oasis:names:tc:opendocument:xmlns:table:1.0" '
               'xmlns:text="urn:oasis:names:tc:opendocument:xmlns:text:1.0" office:version="1.3">'
               f"<office:body><office:text><text:h>{title}</text:h><text:p>{sentence}</text:p>"
               f"<table:table table:name='Depots'>{cells}</table:table></office:text></office:body>"
               "</office:document-content>")
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as package:
        package.writestr("mimetype", "application/vnd.oasis.opendocument.text", compress_type=zipfile.ZIP_STORED)
        package.writestr("content.xml", content, compress_type=zipfile.ZIP_DEFLATED)
    return out.getvalue(), "depots.odt"


@pytest.mark.parametrize("make", [_csv, _html, _pdf, _pptx, _odt], ids=["csv", "html", "pdf", "pptx", "odt"])
@pytest.mark.parametrize("lang", sorted(REPORTS))
def test_thousands_dots_are_read_as_the_documents_language_writes_them(make, lang):
    data, name = make(*REPORTS[lang])
    tables = [table_from_wire(t) for item in extract(data, name).items for t in item.metadata.get("tables", [])]
    assert tables, f"no table found in {name}"
    revenues = [row[-1] for row in tables[0].rows if isinstance(row[-1], int | float)]
    assert revenues == EXPECTED[lang]


def test_the_cells_decide_before_the_language():
    german_with_dot_decimals = [["Preis"], ["4.25"], ["72.300"]]
    english_with_comma_decimals = [["Price"], ["1.234,50"], ["72.300"]]
    assert not writes_decimal_comma(german_with_dot_decimals, comma=lambda: True)
    assert writes_decimal_comma(english_with_comma_decimals, comma=lambda: False)
    assert writes_decimal_comma([["72.300"]], comma=lambda: True) and not writes_decimal_comma([["72.300"]], comma=lambda: False)
    assert comma_language("Die Zahlen sind in Euro und ohne die Steuer.")() and not comma_language("The figures are in euros.")()


def test_a_csv_of_bare_figures_separated_by_semicolons_reads_dots_as_thousands():
    """No words to tell the language: a ";" between cells is what spreadsheets that write "4,25" export."""
    data = b"Depot;Umsatz\nHafen;72.300\nNord;46.725\n"
    [table] = [table_from_wire(t) for t in extract(data, "umsatz.csv").items[0].metadata["tables"]]
    assert [row[1] for row in table.rows[1:]] == [72300, 46725]
    english = b"Depot,Revenue\nHarbour,72.3\nNorth,46.725\n"
    [table] = [table_from_wire(t) for t in extract(english, "revenue.csv").items[0].metadata["tables"]]
    assert [row[1] for row in table.rows[1:]] == [72.3, 46.725]
    assert number("12,345", decimal_comma=True) == 12.345 and number("12,345") == 12345
    assert number("72.300", decimal_comma=True) == 72300 and number("72.300") == 72.3
    # Thousands set apart by spaces, as French writes them, in any language; a leading zero stays an identifier.
    assert number("12 480") == 12480 and number("12\u202f480") == 12480 and number("030 123") is None
