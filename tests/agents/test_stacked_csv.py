"""Tables with the same columns asked for as CSV come as one file with a column naming each row's
source (a sheet a year: one CSV of all years), in the user's language; a workbook keeps its sheets."""

from __future__ import annotations

import csv
import io

import openpyxl
import pytest

from agents.base import DocumentText
from agents.builtin.data_extractor import stacked
from agents.offline import OfflineModel
from agents.registry import build_registry
from extractors import extract
from extractors.tables import Table
from tests.agents.conftest import play_round


def year(label: str, rows: list[list]) -> Table:
    return Table(f"sheet {label}", [["Region", "Visitors"], *rows], 0, f"sheet {label}", {"sheet": label})


TABLES = [year("2019", [["North", 120], ["South", 80]]), year("2020", [["North", 90], ["South", 60]]),
          Table("sheet Notes", [["Note"], ["closed in April"]], 0, "sheet Notes", {"sheet": "Notes"}),
          year("2021", [["North", 140], ["South", 95]])]
LABELS = ["2019", "2020", "Notes", "2021"]


@pytest.mark.parametrize(("language", "head"), [("en", "Sheet"), ("de", "Blatt"), ("fr", "Feuille")])
def test_same_columns_stack_into_one_table_that_names_each_rows_sheet(language: str, head: str) -> None:
    tables, labels = stacked(TABLES, LABELS, language)
    assert labels == ["2019-2021", "Notes"]
    assert tables[0].rows == [[head, "Region", "Visitors"], ["2019", "North", 120], ["2019", "South", 80],
                              ["2020", "North", 90], ["2020", "South", 60], ["2021", "North", 140], ["2021", "South", 95]]
    assert tables[1] is TABLES[2]


def test_tables_of_different_columns_stay_apart() -> None:
    tables, labels = stacked(TABLES[1:3], LABELS[1:3], "en")
    assert tables == TABLES[1:3] and labels == LABELS[1:3]


def workbook() -> bytes:
    book = openpyxl.Workbook()
    book.remove(book.active)
    for label in ("2019", "2020", "2021"):
        sheet = book.create_sheet(label)
        sheet.append(["Region", "Visitors"])
        for region, base in (("North", 100), ("South", 70)):
            sheet.append([region, base + int(label) % 100])
    out = io.BytesIO()
    book.save(out)
    return out.getvalue()


@pytest.mark.parametrize(("prompt", "head"), [
    ("Give me the visitors of all years as a CSV file.", "Sheet"),
    ("Gib mir die Besucher aller Jahre als CSV-Datei.", "Blatt"),
    ("Donne-moi les visiteurs de toutes les années en fichier CSV.", "Feuille"),
])
async def test_a_workbook_of_a_sheet_a_year_asked_as_csv_gives_one_csv_of_every_year(prompt: str, head: str) -> None:
    data = workbook()
    extraction = extract(data, "visitors.xlsx")
    doc = DocumentText.of("visitors.xlsx", "xlsx", extraction.mime, len(data), extraction.items)
    done = await play_round(prompt, [doc], OfflineModel(), build_registry(entry_points=False))
    csvs = {name: f for name, f in done.files.items() if name.endswith(".csv")}
    assert len(csvs) == 1 and not [n for n in done.files if n.endswith(".zip")], sorted(done.files)
    [file] = csvs.values()
    rows = list(csv.reader(io.StringIO(file.data.decode("utf-8-sig"))))
    assert rows[0] == [head, "Region", "Visitors"]
    assert [r[0] for r in rows[1:]] == ["2019", "2019", "2020", "2020", "2021", "2021"]
    assert ["2021", "South", "91"] in rows
