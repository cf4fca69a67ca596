"""Table questions the offline analyst compiles or looks up (issue 50), in en/de/fr over documents made
here: a workbook of a sheet a year, a CSV of sales by category, a weather table in a PDF, dated
milestones in DOCX and PDF tables. Each asks a maximum, a minimum, a total over the rows a category or
year names, a cell whose year is only its sheet's name, or the milestone after a named one; the
expected answers were written before the analyst was run on them."""

from __future__ import annotations

import csv
import functools
import io
import re
from collections.abc import Sequence
from dataclasses import dataclass

import docx
import openpyxl
import pytest
from reportlab.lib import colors
from reportlab.lib.pagesizes import A4
from reportlab.lib.styles import getSampleStyleSheet
from reportlab.platypus import Paragraph, SimpleDocTemplate, Spacer, Table, TableStyle

from agents.base import DocumentText, TaskContext, TaskSpec
from agents.builtin.analyst import Analyst
from agents.knowledge.embeddings import available, local_embedder, word_embedder
from agents.knowledge.retrieval import MemoryRetriever
from agents.knowledge.sequence import following
from agents.language import asks_after, detect_language
from agents.offline import OfflineModel
from extractors import extract

SALES = {  # sheet (year) -> product, units, revenue (EUR)
    "2021": [["Croissant", 4200, 6300], ["Baguette", 5100, 5610], ["Cake", 820, 9840], ["Brioche", 1900, 3420],
             ["Tart", 640, 5120]],
    "2022": [["Croissant", 4550, 7280], ["Baguette", 5300, 6360], ["Cake", 900, 11250], ["Brioche", 2100, 3990],
             ["Tart", 700, 5950]],
    "2023": [["Croissant", 4800, 8160], ["Baguette", 5050, 6565], ["Cake", 1010, 13130], ["Brioche", 2300, 4600],
             ["Tart", 760, 6840]],
}
SHOP = [["2022", "Cakes", "Cheesecake", 1200], ["2022", "Cakes", "Carrot cake", 950], ["2022", "Bread", "Sourdough", 1800],
        ["2022", "Bread", "Rye loaf", 1100], ["2022", "Drinks", "Coffee", 2500], ["2023", "Cakes", "Cheesecake", 1350],
        ["2023", "Cakes", "Carrot cake", 1020], ["2023", "Cakes", "Lemon tart", 780], ["2023", "Bread", "Sourdough", 1950],
        ["2023", "Bread", "Rye loaf", 1150], ["2023", "Drinks", "Coffee", 2700]]
WEATHER = [["Janvier", "2,1", "68"], ["Février", "3,4", "55"], ["Mars", "7,0", "72"], ["Avril", "10,8", "91"],
           ["Mai", "14,9", "63"], ["Juin", "18,2", "47"]]
WERKSTATT = [["15.03.2019", "Gründung der Werkstatt in Leipzig"], ["01.06.2020", "Erste Serienfertigung"],
             ["30.09.2021", "Umzug nach Halle 2"], ["10.11.2022", "Zertifizierung nach ISO 9001"],
             ["05.02.2024", "Eröffnung des Onlineshops"]]
BAKERY = [["March 2015", "First shop opened on Mill Street"], ["May 2017", "Second shop opened in the old town"],
          ["October 2019", "Own bakehouse built in Riverside"], ["April 2022", "Delivery service launched"],
          ["January 2024", "Third shop opened at the station"]]
STATION = [["1998", "Création de la station météo"], ["2005", "Installation du pluviomètre automatique"],
           ["2012", "Raccordement au réseau national"], ["2019", "Remplacement de l'abri thermométrique"],
           ["2023", "Mise en ligne des données ouvertes"]]


def _workbook() -> bytes:
    book = openpyxl.Workbook()
    book.remove(book.active)
    for year, rows in SALES.items():
        sheet = book.create_sheet(year)
        sheet.append(["Product", "Units", "Revenue (EUR)"])
        for row in rows:
            sheet.append(row)
    out = io.BytesIO()
    book.save(out)
    return out.getvalue()


def _csv() -> bytes:
    out = io.StringIO()
    writer = csv.writer(out)
    writer.writerow(["Year", "Category", "Item", "Sales (EUR)"])
    writer.writerows(SHOP)
    return out.getvalue().encode()


def _docx(title: str, intro: str, header: Sequence[str], rows: Sequence[Sequence[str]]) -> bytes:
    document = docx.Document()
    document.add_heading(title, 1)
    document.add_paragraph(intro)
    table = document.add_table(rows=1, cols=len(header))
    for cell, text in zip(table.rows[0].cells, header, strict=True):
        cell.text = text
    for row in rows:
        for cell, text in zip(table.add_row().cells, row, strict=True):
            cell.text = text
    out = io.BytesIO()
    document.save(out)
    return out.getvalue()


def _pdf(title: str, intro: str, header: Sequence[str], rows: Sequence[Sequence[str]]) -> bytes:
    out = io.BytesIO()
    styles = getSampleStyleSheet()
    grid = Table([list(header), *[list(r) for r in rows]])
    grid.setStyle(TableStyle([("GRID", (0, 0), (-1, -1), 0.5, colors.black)]))
    SimpleDocTemplate(out, pagesize=A4).build([Paragraph(title, styles["Title"]), Paragraph(intro, styles["Normal"]),
                                               Spacer(1, 12), grid])
    return out.getvalue()


MADE = {
    "cafe-sales.xlsx": _workbook,
    "shop-sales.csv": _csv,
    "station-meteo-2024.pdf": lambda: _pdf(
        "Station météo de Valmont : relevés 2024", "Relevés mensuels du premier semestre 2024.",
        ["Mois", "Température moyenne (°C)", "Précipitations (mm)"], WEATHER),
    "historique-station.pdf": lambda: _pdf(
        "Historique de la station de Valmont", "Les grandes étapes de la station depuis sa création.",
        ["Date", "Événement"], STATION),
    "werkstatt-chronik.docx": lambda: _docx(
        "Chronik der Werkstatt Berger", "Die wichtigsten Meilensteine der Werkstatt seit ihrer Gründung.",
        ["Datum", "Meilenstein"], WERKSTATT),
    "bakery-history.docx": lambda: _docx(
        "Our bakery's history", "The milestones of the Mill Street Bakery since its first shop.",
        ["Date", "Milestone"], BAKERY),
    # Plans whose rows have an owner beside the milestone, the date in the middle.
    "roof-plan.docx": lambda: _docx(
        "Roof renewal: plan", "The stages of the school's roof renewal.", ["Stage", "Date", "Owner"],
        [["Scaffolding put up", "3 March 2025", "Paul Dunmore"], ["Old tiles removed", "17 March 2025", "Aisha Rahman"],
         ["Insulation fitted", "7 April 2025", "Paul Dunmore"], ["New tiles laid", "28 April 2025", "Greta Lindqvist"]]),
    "umzug-plan.docx": lambda: _docx(
        "Umzug der Stadtbücherei", "Die Schritte des Umzugs.", ["Schritt", "Datum", "Verantwortlich"],
        [["Bestand gezählt", "12.05.2025", "Jana Petersen"], ["Regale abgebaut", "02.06.2025", "Malte Kruse"],
         ["Bücher verpackt", "16.06.2025", "Jana Petersen"], ["Neue Räume eröffnet", "07.07.2025", "Ilka Brandt"]]),
    "jardin-plan.pdf": lambda: _pdf(
        "Jardin partagé : calendrier", "Les étapes du jardin partagé.", ["Étape", "Date", "Responsable"],
        [["Terrain défriché", "04/03/2025", "Lucie Marchand"], ["Clôture posée", "25/03/2025", "Hugo Lefebvre"],
         ["Parcelles attribuées", "15/04/2025", "Lucie Marchand"], ["Première récolte", "20/06/2025", "Nadia Benali"]]),
}


VECTORS = pytest.mark.skipif(not available(), reason="the local embedding models are not installed")


@functools.cache
def made(name: str) -> DocumentText:
    """A document of this set as the round engine extracts an upload."""
    data = MADE[name]()
    found = extract(data, name)
    return DocumentText.of(name, name.rsplit(".", 1)[-1], found.mime, len(data), found.items)


@dataclass(frozen=True)
class Case:
    question: str
    document: str
    expected: tuple[str, ...]  # each must be in the answer's statement or first quote (figures without separators)
    wrong: tuple[str, ...] = ()  # none may be there: another year's figure, a later milestone (a whole table quoted)


CASES = [
    # English
    Case("Which product had the highest revenue in 2023?", "cafe-sales.xlsx", ("Cake", "13130")),
    Case("What was the revenue from croissants in 2021?", "cafe-sales.xlsx", ("6300",), ("7280", "8160")),
    Case("What was the total of the 2023 sales of cakes?", "shop-sales.csv", ("3150",)),
    Case("Which month had the most rainfall?", "station-meteo-2024.pdf", ("Avril", "91")),
    Case("What came next after the delivery service was launched?", "bakery-history.docx",
         ("Third shop opened at the station",), ("First shop",)),
    Case("Which product sold the fewest units in 2022, and which the most?", "cafe-sales.xlsx",
         ("Tart", "700", "Baguette", "5300")),
    Case("How many units were sold in total in 2022?", "cafe-sales.xlsx", ("13550",)),
    Case("Which month had the lowest average temperature?", "station-meteo-2024.pdf", ("Janvier", "2.1")),
    # German
    Case("Wie hoch war der Umsatz mit Croissants im Jahr 2021?", "cafe-sales.xlsx", ("6300",), ("7280", "8160")),
    Case("Welches Produkt hatte 2022 den höchsten Umsatz?", "cafe-sales.xlsx", ("Cake", "11250")),
    Case("Welcher Meilenstein kam nach dem Umzug nach Halle 2?", "werkstatt-chronik.docx",
         ("Zertifizierung nach ISO 9001",), ("Onlineshops",)),
    Case("Wie hoch war die Summe der Verkäufe der Kategorie Bread im Jahr 2023?", "shop-sales.csv", ("3100",)),
    Case("Welcher Monat hatte die höchste und welcher die niedrigste Durchschnittstemperatur?",
         "station-meteo-2024.pdf", ("Juin", "18.2", "Janvier", "2.1")),
    Case("Wie viele Einheiten wurden 2023 insgesamt verkauft?", "cafe-sales.xlsx", ("13920",)),
    Case("Was kam nach der ersten Serienfertigung?", "werkstatt-chronik.docx", ("Umzug nach Halle 2",),
         ("ISO 9001",)),
    Case("In welchem Monat gab es den meisten Niederschlag?", "station-meteo-2024.pdf", ("Avril", "91")),
    # French
    Case("Quel a été le chiffre d'affaires des croissants en 2022 ?", "cafe-sales.xlsx", ("7280",), ("6300", "8160")),
    Case("Quel mois a eu les précipitations les plus élevées ?", "station-meteo-2024.pdf", ("Avril", "91")),
    Case("Quel produit a vendu le moins d'unités en 2021 ?", "cafe-sales.xlsx", ("Tart", "640")),
    Case("Qu'est-ce qui a suivi l'installation du pluviomètre automatique ?", "historique-station.pdf",
         ("Raccordement au réseau national",), ("Remplacement",)),
    Case("Quel est le total des ventes de la catégorie Bread en 2022 ?", "shop-sales.csv", ("2900",)),
    Case("Quel mois a eu la température moyenne la plus basse, et lequel la plus haute ?", "station-meteo-2024.pdf",
         ("Janvier", "2.1", "Juin", "18.2")),
    Case("Quel événement est venu après le raccordement au réseau national ?", "historique-station.pdf",
         ("Remplacement de l'abri thermométrique",), ("Mise en ligne",)),
    Case("Quel produit avait le plus grand nombre d'unités vendues en 2023 ?", "cafe-sales.xlsx", ("Baguette", "5050")),
]


class _Retriever(MemoryRetriever):
    """The in-memory ranking with the vectors the service has: hybrid search, and the likeness of a
    question's words and a table's headings by the word model (as `app.store.vectors` computes it)."""

    async def likeness(self, texts: Sequence[str], others: Sequence[str]) -> list[list[float]] | None:
        words = word_embedder(self.embedder) if self.embedder else None
        if words is None or not texts or not others:
            return None
        vectors = words.passages([*texts, *others])
        return [[float(c) for c in row] for row in vectors[:len(texts)] @ vectors[len(texts):].T]


@functools.cache
def retriever() -> MemoryRetriever:
    return _Retriever(local_embedder()) if available() else MemoryRetriever()


async def ask(question: str, docs: list[DocumentText]) -> str:
    """The offline analyst's answer, as a round's task gets it."""
    result = await Analyst().run(TaskSpec(id="t1", agent="analyst", instructions=question),
                                 TaskContext(prompt=question, language=detect_language(question),
                                             documents={d.name: d for d in docs}, predecessors={},
                                             model=OfflineModel(), retriever=retriever()))
    return result.text


def answered(text: str) -> str:
    """What an answer states: its lines up to the end of the first quote, figures without thousands
    separators and with a decimal point ("13,130", "13.130", "13 130" -> 13130; "2,1" -> 2.1)."""
    lines = text.splitlines()
    first = next((n for n, line in enumerate(lines) if line.startswith(">")), len(lines))
    end = next((n for n in range(first, len(lines)) if not lines[n].startswith(">")), len(lines))
    said = "\n".join(lines[:end])
    said = re.sub(r"(?<=\d)[,.\u202f\u00a0 ](?=\d{3}\b)", "", said)
    return re.sub(r"(?<=\d),(?=\d)", ".", said)


def right(case: Case, text: str) -> bool:
    said = answered(text)
    return all(e in said for e in case.expected) and not any(w in said for w in case.wrong)


# Not answered yet: a cell whose year is only its sheet's name (1, 8; 16 is since the sheet's name is an
# index term of its rows) and a total over the rows a category and a year name (11, 13, 20). A total's
# column named by meaning across languages lowered the held-out set by two cases: not adopted
# (docs/benchmarks.md).
GAPS = {1: "a year that only the sheet's name writes", 8: "a year that only the sheet's name writes",
        11: "a total over the rows a category and a year name", 13: "a total's column named in another language",
        20: "a total over the rows a category and a year name"}


@pytest.mark.parametrize("case", [pytest.param(c, marks=pytest.mark.xfail(reason=GAPS[n], strict=True)) if n in GAPS
                                  else c for n, c in enumerate(CASES)],
                         ids=[f"{detect_language(c.question)}-{n}" for n, c in enumerate(CASES)])
async def test_a_table_question_is_answered_by_the_rows_it_means(case: Case) -> None:
    text = await ask(case.question, [made(case.document)])
    assert right(case, text), text


@pytest.mark.parametrize(("question", "after"), [
    ("What came next after the delivery service was launched?", True),
    ("Which milestone followed the move?", True),
    ("When is the next council meeting?", False),  # no row named to go on from
    ("Was kam nach der ersten Serienfertigung?", True),
    ("Wohin zog die Werkstatt nach Halle?", False),  # "nach" a place, not a time
    ("Qu'est-ce qui a suivi l'installation du pluviomètre ?", True),
    ("Quel événement est venu après le raccordement ?", True),
    ("Quelle est la prochaine réunion ?", False),
])
def test_a_question_asks_what_came_after_a_row_it_names(question: str, after: bool) -> None:
    assert asks_after(question) is after


def _chronicle(rows: Sequence[Sequence[str]]) -> DocumentText:
    data = _docx("Chronik", "Meilensteine.", ["Jahr", "Meilenstein"], rows)
    found = extract(data, "chronik.docx")
    return DocumentText.of("chronik.docx", "docx", found.mime, len(data), found.items)


def test_the_row_after_is_read_in_time_order_and_only_for_one_row_clearly_named() -> None:
    newest_first = _chronicle([["2024", "Onlineshop eröffnet"], ["2021", "Umzug nach Halle 2"], ["2019", "Gründung"]])
    after = following("Was kam nach dem Umzug nach Halle 2?", [newest_first])
    assert after is not None and after.next_label == "2024, Onlineshop eröffnet", after
    assert "Onlineshop eröffnet" in after.after and "Umzug nach Halle 2" in after.named
    # The last row has nothing after it (said so: `after` empty); two rows named alike are no one row.
    last = following("What came after the opening of the online shop?", [
        _chronicle([["2019", "Founding"], ["2024", "Online shop opened"]])])
    assert last is not None and (last.after, last.label, last.date) == ("", "Online shop opened", "2024"), last
    assert following("Qu'est-ce qui a suivi l'ouverture ?", [
        _chronicle([["2019", "Ouverture à Lyon"], ["2020", "Ouverture à Nice"], ["2021", "Fusion"]])]) is None
    # A table that dates no row is not ordered.
    assert following("What came after the brioche?", [made("cafe-sales.xlsx")]) is None


async def _asked_in_turn(questions: Sequence[str], docs: list[DocumentText]) -> str:
    """The offline analyst's answer to the last question, each before it asked in its own round first and
    in the task's history as the service gives it (the request, then the round's final message)."""
    history: list[tuple[str, str]] = []
    for n, question in enumerate(questions, 1):
        result = await Analyst().run(TaskSpec(id="t1", agent="analyst", instructions=question),
                                     TaskContext(prompt=question, language=detect_language(question),
                                                 documents={d.name: d for d in docs}, predecessors={},
                                                 model=OfflineModel(), retriever=retriever(), history=list(history)))
        history += [("user", f"[round {n}] {question}"),
                    ("assistant", f"[round {n}] Final answer: The planned step is done. Completed steps: t1 (analyst)")]
    return result.text


@pytest.mark.parametrize(("questions", "document", "expected"), [
    (["What came after the second shop opened in the old town?", "And what came after that?"], "bakery-history.docx",
     "Delivery service launched"),
    (["Was kam nach der ersten Serienfertigung?", "Und was kam danach?"], "werkstatt-chronik.docx",
     "Zertifizierung nach ISO 9001"),
    (["Qu'est-ce qui a suivi l'installation du pluviomètre ?", "Et après ?"], "historique-station.pdf",
     "Remplacement de l'abri"),
    (["Was kam nach der Gründung der Werkstatt in Leipzig?", "Und was kam danach?", "Und danach?"],
     "werkstatt-chronik.docx", "Zertifizierung nach ISO 9001"),
    (["When was the delivery service launched?", "And what came after that?"], "bakery-history.docx",
     "Third shop opened at the station"),
    # The row named in another language than the table's, by meaning (the vectors' likeness).
    pytest.param(["What came after the move to the second hall?", "And after that?"], "werkstatt-chronik.docx",
                 "Eröffnung des Onlineshops", marks=VECTORS),
    pytest.param(["Was kam nach der Eröffnung des zweiten Ladens in der Altstadt?", "Und danach?"],
                 "bakery-history.docx", "Delivery service launched", marks=VECTORS),
])
async def test_a_follow_up_goes_on_from_the_row_the_conversation_reached(
        questions: list[str], document: str, expected: str) -> None:
    """"And what came after that?" names no row: it goes on from the row the answer before it gave (the
    row after the one an "after" question named, or the row a question named), each such follow-up one on."""
    statement, quoted = answered(await _asked_in_turn(questions, [made(document)])).split("\n>", 1)
    assert expected in statement and expected in quoted, statement


@pytest.mark.parametrize(("questions", "document", "expected"), [
    (["Was kam nach der Zertifizierung nach ISO 9001?", "Und was kam danach?"], "werkstatt-chronik.docx",
     "«Eröffnung des Onlineshops» (05.02.2024) ist der letzte Eintrag"),
    (["What came after the third shop opened at the station?"], "bakery-history.docx",
     "«Third shop opened at the station» (January 2024) is the last entry"),
    (["Quand les données ouvertes ont-elles été mises en ligne ?", "Et ensuite ?"], "historique-station.pdf",
     "« Mise en ligne des données ouvertes » (2023) est la dernière entrée"),
])
async def test_after_the_last_row_the_answer_says_nothing_follows_in_the_documents(
        questions: list[str], document: str, expected: str) -> None:
    statement, quoted = answered(await _asked_in_turn(questions, [made(document)])).split("\n>", 1)
    assert expected in statement, statement


@VECTORS
@pytest.mark.parametrize(("question", "document", "expected"), [
    ("What came after the move to the second hall?", "werkstatt-chronik.docx", "Zertifizierung nach ISO 9001"),
    ("Qu'est-ce qui a suivi la première production en série ?", "werkstatt-chronik.docx", "Umzug nach Halle 2"),
    ("Was kam nach der Eröffnung des zweiten Ladens in der Altstadt?", "bakery-history.docx",
     "Own bakehouse built in Riverside"),
    ("What came after the connection to the national network?", "historique-station.pdf",
     "Remplacement de l'abri"),
])
async def test_a_row_named_in_another_language_is_found_by_meaning(question: str, document: str, expected: str) -> None:
    """A question that shares no word with the table's rows names the row its words mean (the vectors'
    likeness), and is answered with the row after it, stated and quoted."""
    statement, quoted = answered(await ask(question, [made(document)])).split("\n>", 1)
    assert expected in statement and expected in quoted, statement


@VECTORS
@pytest.mark.parametrize(("question", "document", "expected"), [
    ("Was kam nach dem Entfernen der alten Ziegel?", "roof-plan.docx", "Insulation fitted"),
    ("Qu'est-ce qui a suivi la pose de l'isolation ?", "roof-plan.docx", "New tiles laid"),
    ("What came after the shelves were taken down?", "umzug-plan.docx", "Bücher verpackt"),
    ("What came after the fence was put up?", "jardin-plan.pdf", "Parcelles attribuées"),
])
async def test_a_row_is_named_by_meaning_by_its_name_cell_not_its_owner(question: str, document: str,
                                                                      expected: str) -> None:
    """In a plan whose rows have an owner beside the stage, a question in another language names the row
    by the stage's meaning; the owner's name in the row does not blur the likeness (issue 50: a German
    question after the load tests of an English plan found no row)."""
    statement, quoted = answered(await ask(question, [made(document)])).split("\n>", 1)
    assert expected in statement and expected in quoted, statement


async def test_a_row_no_label_means_is_not_named() -> None:
    text = await ask("What came after the brioche?", [made("bakery-history.docx")])
    assert "came:" not in text.splitlines()[0] and "Delivery service" not in text.splitlines()[0], text
