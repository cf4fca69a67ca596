"""A comparison that names no measure goes on from the question before it: "And which the lowest?"
after "Which depot had the most deliveries?" compares the deliveries again (issue 50: after a question
on a workbook's sales, "Und welche Zone hatte den niedrigsten?" quoted rows that share its words),
en/de/fr, over tables of our own with two numeric columns, whose minima are in different rows."""

from __future__ import annotations

import pytest

from agents.base import TaskContext, TaskSpec
from agents.builtin.analyst import Analyst
from agents.offline import OfflineModel
from tests.agents.test_compiled import table_document

DEPOTS_EN = ("depot,deliveries,on_time_rate_pct\n"
             "Northfield,1240,91.5\nEastgate,980,79.0\nSouthmoor,1510,94.8\nWestbrook,760,88.1\n")
FILIALEN_DE = ("Filiale;Umsatz;Mitarbeiter\n"
               "Kassel;820000;41\nFulda;455000;12\nMarburg;610000;9\nGießen;930000;38\n")
MAGASINS_FR = ("magasin;ventes;employés\n"
               "Lyon;720000;35\nNantes;380000;18\nLille;510000;11\nDijon;640000;27\n")


async def answer(question: str, doc, language: str, history: list[tuple[str, str]]) -> str:
    result = await Analyst().run(TaskSpec(id="t1", agent="analyst", instructions=question),
                                 TaskContext(prompt=question, language=language, documents={doc.name: doc},
                                             predecessors={}, model=OfflineModel(), history=history))
    return result.text


@pytest.mark.parametrize(("name", "table", "language", "first", "then", "lowest", "other_lowest"), [
    ("depots.csv", DEPOTS_EN, "en", "Which depot had the most deliveries?", "And which depot had the fewest?",
     "Westbrook", "Eastgate"),
    ("filialen.csv", FILIALEN_DE, "de", "Welche Filiale hatte den höchsten Umsatz?", "Und welche Filiale hatte den niedrigsten?",
     "Fulda", "Marburg"),
    ("magasins.csv", MAGASINS_FR, "fr", "Quel magasin a les ventes les plus élevées ?",
     "Et quel magasin avait les plus basses ?", "Nantes", "Lille"),
])
async def test_a_comparison_without_a_measure_compares_the_one_asked_before(name, table, language, first, then,
                                                                            lowest, other_lowest):
    doc = table_document(name, table)
    before = await answer(first, doc, language, [])
    history = [("user", f"[round 1] {first}"), ("assistant", f"[round 1] {before}")]
    text = await answer(then, doc, language, history)
    statement = text.split("\n> ", 1)[0]  # what was computed, above the quoted rows
    assert lowest in statement and other_lowest not in statement, text


async def test_a_comparison_that_names_its_measure_is_not_changed_by_the_one_before():
    doc = table_document("depots.csv", DEPOTS_EN)
    history = [("user", "[round 1] Which depot had the most deliveries?"), ("assistant", "[round 1] Southmoor")]
    text = await answer("And which had the lowest on-time rate?", doc, "en", history)
    assert "Eastgate" in text.split("\n> ", 1)[0], text

