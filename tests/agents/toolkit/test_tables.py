"""Tables recognised in extracted text keep the document's own cells."""

import csv
import io

from agents.toolkit.tables import Table, find_tables, tables_from_text
from tests import corpus


def test_csv_sheet_round_trips_to_the_same_cells() -> None:
    text = corpus.text("testCSV.csv")
    expected = [[cell.strip() for cell in row] for row in csv.reader(io.StringIO(text)) if row]
    tables = find_tables([("sheet Squares", text)])
    assert tables == [Table("sheet Squares", expected)]
    assert ["", "15", "225"] in tables[0].rows
    # The last cell spans two lines inside quotes.
    assert tables[0].rows[-1][0] == "Written and saved in Apache OpenOffice."


def test_tsv_round_trips_to_the_same_cells() -> None:
    text = corpus.text("stanley-cups.tsv")
    tables = tables_from_text("stanley-cups.tsv", text)
    assert tables == [
        Table(
            "stanley-cups.tsv",
            [
                ["Stanley Cups", "", ""],
                ["Team", "Location", "Stanley Cups"],
                ["Blues", "STL", "1"],
                ["Flyers", "PHI", "2"],
                ["Maple Leafs", "TOR", "13"],
            ],
        )
    ]


def test_markdown_pipe_tables_inside_prose() -> None:
    text = corpus.text("README.md")
    tables = tables_from_text("README.md", text)
    assert [table.name for table in tables] == ["README.md table 1", "README.md table 2"]
    fields = tables[0]
    assert fields.rows[0] == ["field", "meaning"]
    assert ["`file`", "file name in this folder"] in fields.rows
    assert all(len(row) == 2 for row in fields.rows)
    assert not any(set(cell) <= set("-: ") for row in fields.rows for cell in row)


def test_aligned_columns_from_a_pdf_page() -> None:
    pages = corpus.pdf_pages("multicolumn.pdf", mode="layout")
    tables = find_tables([(f"page {n}", page) for n, page in enumerate(pages, 1)])
    assert len(tables) == 1
    table = tables[0]
    assert table.name == "page 3 table 1"
    assert table.rows[0][:3] == ["Country", "Population (millions)", "Area (km2)"]
    assert ["Belgium", "11.5", "30,689", "Brussels", "Dutch, French, German"] in table.rows


def test_numbered_tables_when_an_item_holds_several() -> None:
    text = (
        "Sales by region.\n\n"
        "| Region | Q1 |\n|---|---:|\n| North | 1,234.50 |\n| South | 980 |\n\n"
        "Headcount:\n\n"
        "Team\tPeople\nSales\t12\nSupport\t7\n"
    )
    tables = find_tables([("page 2", text)])
    assert [t.name for t in tables] == ["page 2 table 1", "page 2 table 2"]
    assert tables[0].rows == [["Region", "Q1"], ["North", "1,234.50"], ["South", "980"]]
    assert tables[1].rows == [["Team", "People"], ["Sales", "12"], ["Support", "7"]]


def test_prose_is_not_a_table() -> None:
    items = [
        ("sample-french-1.txt", corpus.text("sample-french-1.txt", "cp1252")),
        ("UDHR", corpus.text("UDHR_first_article_all.txt")),
        ("short", "I like apples, pears\nand more, really"),
    ]
    items += [(f"page {n}", page) for n, page in enumerate(corpus.pdf_pages("tracemonkey.pdf"), 1)]
    korean = corpus.pdf_pages("korean-text-with-tables.pdf")
    items += [(f"korean {n}", page) for n, page in enumerate(korean, 1)]
    assert find_tables(items) == []


def test_tables_keep_document_order_across_items() -> None:
    items = [("sheet A", "x,y\n1,2\n"), ("sheet B", "no table"), ("sheet C", "p\tq\n3\t4\n")]
    assert [t.name for t in find_tables(items)] == ["sheet A", "sheet C"]


def test_tsv_table_after_a_title_line_with_fewer_tabs() -> None:
    text = "Report\t2024\nName\tQ1\tQ2\nNorth\t10\t12\nSouth\t7\t9\n"
    assert tables_from_text("sheet Report", text) == [
        Table("sheet Report table 1", [["Name", "Q1", "Q2"], ["North", "10", "12"], ["South", "7", "9"]])
    ]
