"""A summary asked for in a number of sentences has that many: "Résume l'essai en trois phrases." gave
five quoted sentences offline (a walk with the corpus essay issue918.pdf). The number is read in en/de/fr,
in words or digits; without one the summary keeps its usual length."""

from __future__ import annotations

import pytest

from agents.base import TaskContext, TaskSpec
from agents.builtin.summarizer import Summarizer
from agents.offline import OfflineModel
from agents.offline.work import SUMMARY_SENTENCES
from tests.agents.conftest import text_document

REPORTS = {
    "en": ("harbour.txt", "The harbour authority rebuilt the north pier in 2023. Work began in March and ended in "
           "November, two months late. The new pier takes ships of up to 200 metres. Storms in October damaged "
           "the old crane, which was replaced. The budget rose from 12 to 14 million euros. Fishing boats moved "
           "to the south basin during the works. Passenger ferries kept their timetable throughout. The authority "
           "plans a second pier for 2026."),
    "de": ("hafen.txt", "Die Hafenbehörde baute 2023 die Nordmole neu. Die Arbeiten begannen im März und endeten im "
           "November, zwei Monate zu spät. Die neue Mole nimmt Schiffe bis 200 Meter auf. Stürme im Oktober "
           "beschädigten den alten Kran, der ersetzt wurde. Das Budget stieg von 12 auf 14 Millionen Euro. Die "
           "Fischerboote zogen während der Arbeiten ins Südbecken. Die Fähren hielten ihren Fahrplan durchgehend. "
           "Die Behörde plant für 2026 eine zweite Mole."),
    "fr": ("port.txt", "L'autorité portuaire a reconstruit la jetée nord en 2023. Les travaux ont commencé en mars et "
           "se sont terminés en novembre, avec deux mois de retard. La nouvelle jetée accueille des navires de 200 "
           "mètres. Des tempêtes en octobre ont endommagé l'ancienne grue, qui a été remplacée. Le budget est passé "
           "de 12 à 14 millions d'euros. Les bateaux de pêche ont rejoint le bassin sud pendant les travaux. Les "
           "ferries ont gardé leur horaire. L'autorité prévoit une seconde jetée pour 2026."),
}
ASKED = {
    "en": ("Summarise the report in three sentences.", 3), "de": ("Fasse den Bericht in 2 Sätzen zusammen.", 2),
    "fr": ("Résume le rapport en une phrase.", 1),
}


async def _quoted(request: str, language: str) -> list[str]:
    name, text = REPORTS[language]
    doc = text_document(name, text)
    result = await Summarizer().run(TaskSpec(id="t1", agent="summarizer", instructions=request),
                                    TaskContext(prompt=request, language=language, documents={doc.name: doc},
                                                predecessors={}, model=OfflineModel()))
    return [line for line in result.text.splitlines() if line.startswith("> ")]


@pytest.mark.parametrize("language", ["en", "de", "fr"])
async def test_a_summary_has_the_number_of_sentences_asked_for(language):
    request, count = ASKED[language]
    assert len(await _quoted(request, language)) == count


async def test_a_summary_without_a_number_keeps_its_length():
    assert len(await _quoted("Summarise the report.", "en")) == SUMMARY_SENTENCES
