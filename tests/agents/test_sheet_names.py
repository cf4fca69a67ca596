"""A row is in its sheet: a workbook with a sheet per year holds the same row in every sheet, and "And in
2024?" after a question about 2023 asks for the one in the sheet named 2024 (issue 50: a follow-up that
changes the year quoted the same rows). en/de/fr, on workbooks written here.

A question that names the year itself ("croissants in 2021") finds the row of the sheet named 2021: the
sheet's name is an index term of its rows, as a section's name is."""

from __future__ import annotations

import io

import pytest
from openpyxl import Workbook

from agents.base import DocumentText, TaskContext, TaskSpec
from agents.builtin.analyst import Analyst
from agents.knowledge.retrieval import rank_documents
from agents.offline import OfflineModel

ROWS = {  # sheet -> (item, count) rows; the same items in every sheet
    "2022": [("Tulips", 1840), ("Roses", 2310), ("Lilies", 975)],
    "2023": [("Tulips", 2105), ("Roses", 2490), ("Lilies", 1120)],
    "2024": [("Tulips", 2288), ("Roses", 2655), ("Lilies", 1304)],
}
HEADINGS = {"en": ("Flower", "Bunches sold"), "de": ("Blume", "Verkaufte Sträuße"), "fr": ("Fleur", "Bouquets vendus")}


def workbook(language: str, sheets: dict[str, list[tuple[str, int]]] = ROWS) -> bytes:
    book = Workbook()
    book.remove(book.active)
    overview = book.create_sheet("Overview")  # a summary sheet that writes every year
    overview.append(["Year", "Total"])
    for name, rows in sheets.items():
        overview.append([int(name) if name.isdigit() else name, sum(n for _, n in rows)])
        sheet = book.create_sheet(name)
        sheet.append(list(HEADINGS[language]))
        for row in rows:
            sheet.append(list(row))
    out = io.BytesIO()
    book.save(out)
    return out.getvalue()


def document(language: str, sheets: dict[str, list[tuple[str, int]]] = ROWS):
    from extractors import extract

    data = workbook(language, sheets)
    found = extract(data, "flowers.xlsx")
    return DocumentText.of("flowers.xlsx", "xlsx", found.mime, len(data), found.items)


@pytest.mark.parametrize(("language", "first", "then", "wanted", "other_years"), [
    ("en", "How many bunches of lilies were sold in 2023?", "And in 2024?", "1304", ("975", "1120")),
    ("de", "Wie viele Sträuße Lilien wurden 2023 verkauft?", "Und 2024?", "1304", ("975", "1120")),
    ("fr", "Combien de bouquets de lys ont été vendus en 2023 ?", "Et en 2024 ?", "1304", ("975", "1120")),
])
async def test_a_follow_up_naming_a_year_quotes_the_row_of_that_years_sheet_first(language, first, then, wanted,
                                                                                   other_years):
    names = {"de": "Lilien", "fr": "Lys"}
    sheets = {year: [(names.get(language, "Lilies") if item == "Lilies" else item, n) for item, n in rows]
              for year, rows in ROWS.items()}
    doc = document(language, sheets)
    history = [("user", f"[round 1] {first}"), ("assistant", "[round 1] 1120")]
    result = await Analyst().run(TaskSpec(id="t1", agent="analyst", instructions=then),
                                 TaskContext(prompt=then, language=language, documents={doc.name: doc},
                                             predecessors={}, model=OfflineModel(), history=history))
    assert wanted in result.text, result.text
    for other in other_years:
        assert other not in result.text or result.text.index(wanted) < result.text.index(other), result.text


@pytest.mark.parametrize(("language", "question", "wanted"), [
    ("en", "How many bunches of roses were sold in 2023?", "2490"),
    ("de", "Wie viele Sträuße Rosen wurden 2023 verkauft?", "2490"),
    ("fr", "Combien de bouquets de roses ont été vendus en 2023 ?", "2490"),
    ("en", "How many tulips in 2022?", "1840"),
])
def test_the_row_of_the_sheet_named_in_the_question_ranks_first(language, question, wanted):
    [first, *_] = rank_documents(question, [document(language)], 5)
    assert wanted in first.text, (first.sheet, first.text)


def test_a_sheet_without_a_telling_name_changes_nothing():
    sheets = {"Sheet1": ROWS["2023"]}
    [first, *_] = rank_documents("How many bunches of roses were sold?", [document("en", sheets)], 5)
    assert "2490" in first.text
