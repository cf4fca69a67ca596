"""A follow-up that changes the year changes the answer ("And in 2024?" after a 2023 question quoted
the 2023 passages first; issue 50), en/de/fr, on documents written for this test, in prose and in a
table."""

from __future__ import annotations

import pytest

from agents.base import TaskContext, TaskSpec
from agents.builtin.analyst import Analyst
from agents.offline import OfflineModel
from tests.agents.conftest import text_document
from tests.agents.test_compiled import RECOLTE_FR, table_document

LIBRARY_EN = text_document("library.txt", (
    "Annual figures of the town library.\n\n"
    "In 2023 the library lent 48,200 books and registered 1,310 new readers. "
    "The reading room was open on 250 days in 2023.\n\n"
    "In 2024 the library lent 51,900 books and registered 1,475 new readers. "
    "The reading room was open on 262 days in 2024.\n\n"
    "In 2025 the library moved to the old post office."))
VEREIN_DE = text_document("verein.txt", (
    "Jahresbericht des Turnvereins.\n\n"
    "Im Jahr 2023 hatte der Verein 412 Mitglieder, und die Halle war an 180 Abenden belegt.\n\n"
    "Im Jahr 2024 hatte der Verein 455 Mitglieder, und die Halle war an 196 Abenden belegt.\n\n"
    "Für 2025 ist ein neuer Hallenboden geplant."))


@pytest.mark.parametrize(("doc", "first", "then", "language", "wanted", "not_first"), [
    (LIBRARY_EN, "How many books did the library lend in 2023?", "And in 2024?", "en", "51,900", "48,200"),
    (VEREIN_DE, "Wie viele Mitglieder hatte der Verein 2023?", "Und 2024?", "de", "455 Mitglieder", "412 Mitglieder"),
    (table_document("recolte.csv", RECOLTE_FR), "Quel était le rendement de l'orge en 2023 ?", "Et en 2024 ?", "fr",
     "année: 2024; rendement_q_ha: 69", "rendement_q_ha: 64"),
])
async def test_a_follow_up_that_changes_the_year_quotes_that_year_first(doc, first, then, language, wanted, not_first):
    history = [("user", f"[round 1] {first}"), ("assistant", f"[round 1] {not_first}")]
    result = await Analyst().run(TaskSpec(id="t1", agent="analyst", instructions=then),
                                 TaskContext(prompt=then, language=language, documents={doc.name: doc},
                                             predecessors={}, model=OfflineModel(), history=history))
    assert wanted in result.text, result.text
    assert not_first not in result.text or result.text.index(wanted) < result.text.index(not_first), result.text


def test_the_passages_that_write_the_asked_year_come_first():
    from agents.base import Passage
    from agents.knowledge.follow_ups import numbers_first

    found = [Passage("r.txt", "In 2023 the library lent 48,200 books; books, books and more books.", 2.0),
             Passage("r.txt", "In 2024 it lent 51,900.", 1.0)]
    assert [p.text for p in numbers_first("And in 2024?", found)] == [found[1].text, found[0].text]
    assert numbers_first("And the books?", found) == found
