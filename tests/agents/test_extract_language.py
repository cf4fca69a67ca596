"""An offline summary is an extract: its sentences are quoted as written, and when they are in another
language than the reply's, the reply says which and that it does not translate them (issue 50)."""

from __future__ import annotations

import pytest

from agents.offline import work
from agents.requests import DocFacts, SummaryHints

GERMAN = (
    "Die Gemeinde Kleinwald hat im Jahr 2026 insgesamt 1.240 Einwohner. "
    "Der neue Kindergarten am Mühlbach wird im März 2027 eröffnet und bietet 45 Plätze. "
    "Die Sanierung der Hauptstraße kostet 380.000 Euro und dauert bis Ende Juni. "
    "Der Wochenmarkt findet ab April jeden Samstag von 8 bis 12 Uhr auf dem Kirchplatz statt. "
    "Die Bürgerversammlung beschloss, die Straßenbeleuchtung auf LED umzustellen."
)
FRENCH = (
    "La bibliothèque municipale de Vauclair ouvre une nouvelle salle de lecture le 3 février. "
    "Elle compte désormais 18 500 ouvrages et 1 200 abonnés actifs. "
    "Les horaires sont prolongés jusqu'à 20 heures le mercredi et le vendredi. "
    "Un atelier d'écriture pour adolescents commence en mars, animé par Claire Dumas. "
    "Le budget annuel d'acquisition passe de 22 000 à 27 000 euros."
)
ENGLISH = (
    "The harbour authority of Port Ellis handled 2.4 million tonnes of cargo in 2026. "
    "A second crane was installed on the east quay in August at a cost of 3.1 million pounds. "
    "Ferry departures to the islands rose from 12 to 16 a day during the summer season. "
    "Dredging of the inner basin is planned for the spring and will close berth 4 for six weeks. "
    "The authority employs 214 people, 31 of them in the pilot service."
)


def summary(text: str, language: str) -> str:
    return work.summary("task", SummaryHints(language=language, documents=(DocFacts(name="doc.txt", text=text),)))


def quoted(reply: str) -> list[str]:
    return [line[2:] for line in reply.splitlines() if line.startswith("> ")]


@pytest.mark.parametrize(("text", "language", "named"), [
    (GERMAN, "en", "They are in German, the document's language"),
    (FRENCH, "de", "Sie sind auf Französisch, in der Sprache des Dokuments"),
    (ENGLISH, "fr", "Elles sont en anglais, la langue du document"),
])
def test_a_summary_in_another_language_than_the_documents_says_it_quotes_them_untranslated(
        text: str, language: str, named: str) -> None:
    reply = summary(text, language)
    note = reply.split("\n\n")[0]
    assert named in note, reply
    sentences = quoted(reply)
    assert len(sentences) >= 3 and all(s in " ".join(text.split()) for s in sentences), reply


@pytest.mark.parametrize(("text", "language"), [(GERMAN, "de"), (FRENCH, "fr"), (ENGLISH, "en")])
def test_a_summary_in_the_documents_language_quotes_it_and_says_nothing_of_translating(text: str,
                                                                                        language: str) -> None:
    reply = summary(text, language)
    assert "Sprache des Dokuments" not in reply and "langue du document" not in reply
    assert "the document's language" not in reply
    assert len(quoted(reply)) >= 3, reply
    assert not [line for line in reply.splitlines() if line.startswith("- ")]  # quotes, not the writer's points
