"""Superlatives over the corpus's own tables (issue 50, item 2), asked in en/de/fr: the column the
question names next to its word of comparing, the rows of the kind it asks about ("which zone"), the
table its title says it asks about, each row its own where no column labels the rows, and an honest
word when no heading is named (the one numeric column compared, said so; of several, none guessed and
the heading lines of the sheet not quoted as if they answered)."""

from __future__ import annotations

from agents.base import DocumentText, TaskContext, TaskSpec
from agents.builtin.analyst import Analyst
from agents.knowledge.compiled import compile_answer, statement
from agents.language import MAX, MIN, detect_language
from agents.offline import OfflineModel
from tests.agents.conftest import load_document

SEGMENTS = "2023-half-year-analyses-by-segment.xlsx"


def answer(question: str, name: str, meant: dict[str, str] | None = None) -> list[tuple[str, str, float, str]]:
    """(operation, label, value, column) of each result; `meant`: the headings a phrase of the question
    means, as the retriever's vectors find them in the service (their cosine made up)."""
    extra = {"near": {heading: 0.7 for heading in meant}, "meant": meant} if meant else {}
    return [(c.op, c.label, c.value, c.column) for c in compile_answer(question, [load_document(name)], **extra)]


def test_the_zones_of_a_zone_question_not_the_unallocated_items():
    expected = [(MIN, "Zone GC", 418.0, "January–June 2023 Trading operating profit")]
    assert answer("Which zone had the lowest trading operating profit?", SEGMENTS) == expected
    assert answer("Welche Zone hatte das niedrigste operative Ergebnis?", SEGMENTS,
                  {"Trading operating profit": "operative Ergebnis"}) == expected
    assert answer("Quelle zone a le résultat opérationnel le plus faible ?", SEGMENTS,
                  {"Trading operating profit": "résultat opérationnel"}) == expected


def test_the_sheet_whose_title_names_the_rows_asked_about():
    # "3.2 Products" above the products' table, headed "Sales" like the segments' one on the sheet before it.
    assert answer("Which product had the highest sales?", SEGMENTS) == [
        (MAX, "Powdered and Liquid Beverages", 12339.0, "January–June 2023 Sales")]
    assert answer("Which segment had the highest sales?", SEGMENTS) == [
        (MAX, "Zone NA", 12553.0, "January–June 2023 Sales (a)")]


def test_of_two_named_columns_the_one_next_to_the_superlative_is_measured():
    expected = [(MAX, "Number: 15", 225.0, "Square")]
    assert answer("Which number has the largest square?", "testCSV.csv") == expected
    assert answer("Welche Zahl hat das größte Quadrat?", "testCSV.csv", {"Number": "Zahl", "Square": "Quadrat"}) == expected
    assert answer("Quel nombre a le carré le plus grand ?", "testCSV.csv", {"Number": "nombre", "Square": "carré"}) == expected
    assert answer("Which number has the largest square?", "testEXCEL.xlsx") == expected


def test_with_no_column_of_labels_each_row_is_its_own():
    # The CSV's first column is empty: no label, and no sum of all rows under an empty one.
    assert answer("What is the biggest number?", "testCSV.csv") == [(MAX, "Square: 225", 15.0, "Number")]
    assert answer("Quel est le plus petit carré ?", "testEXCEL.xlsx", {"Square": "carré"}) == [
        (MIN, "Number: 1", 1.0, "Square")]


def test_the_one_numeric_column_compared_says_the_question_did_not_name_it():
    doc = load_document("stanley-cups.tsv")
    for question, language, said in [
        ("Which team won the most titles?", "en", "its one numeric column is «Stanley Cups»"),
        ("Welche Mannschaft hat die meisten Titel?", "de", "ihre einzige Zahlenspalte ist «Stanley Cups»"),
        ("Quelle équipe a gagné le plus de titres ?", "fr", "sa seule colonne de nombres est « Stanley Cups »"),
    ]:
        [found] = compile_answer(question, [doc])
        assert (found.op, found.label, found.value, found.named) == (MAX, "Maple Leafs", 13.0, False), question
        assert said in statement(found, language, "[1]"), question
    [named] = compile_answer("Which team has the fewest Stanley Cups?", [doc])
    assert (named.label, named.named) == ("Blues", True)
    assert "names no column" not in statement(named, "en", "[1]")


async def test_no_heading_named_of_several_nothing_guessed_and_no_heading_line_quoted():
    doc = load_document(SEGMENTS)
    for question, said in [
        ("Which segment had the highest value?", "The question names none of the numeric columns"),
        ("Welches Segment hatte den höchsten Wert?", "Die Frage nennt keine der Zahlenspalten"),
        ("Quel segment a la valeur la plus élevée ?", "La question ne nomme aucune des colonnes de nombres"),
    ]:
        text = await _ask(question, doc)
        assert said in text and "«Sales»" in text and "«Trading operating profit»" in text, (question, text)
        assert "3. Analyses by segment" not in text and "Zone NA" not in text, (question, text)
    # A superlative that names nothing of the workbook is still no table question.
    assert compile_answer("What is the most important finding?", [doc]) == []


async def test_the_offline_answer_over_the_workbook_quotes_the_row_of_the_minimum():
    text = await _ask("Which zone had the lowest trading operating profit?", load_document(SEGMENTS))
    assert "Lowest January–June 2023 Trading operating profit: Zone GC, 418 [1]" in text, text
    assert "> Zone GC;" in text and "Unallocated" not in text, text


async def _ask(question: str, doc: DocumentText) -> str:
    result = await Analyst().run(TaskSpec(id="t1", agent="analyst", instructions=question),
                                 TaskContext(prompt=question, language=detect_language(question),
                                             documents={doc.name: doc}, predecessors={}, model=OfflineModel()))
    return result.text
