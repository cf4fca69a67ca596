"""The tuning sets of requests, judged by `tests.judging.judge` as the held-out set is. Tune on these
and look at their cases one by one; measure on the held-out set (tests/heldout/), never tune on it.

- `REAL_MODEL`: a small set written for rounds with a real model, over three documents written for
  it (here).
- `FIRST_HELDOUT` (first_heldout.py): the first held-out set (issue 31), over its seven documents
  (here, made by make_documents.py); moved here by issue 43 since fixes were made while reading it.
- `PLAN_FIXES` (plan_fixes.py): the requests that motivated the plan fixes, over documents of both;
  for measuring those fixes with a real model, so not in `CASES` (whose totals earlier figures give).

`CASES` is the first two; `bench/heldout.py --set tuning` runs them (`--set tuning-real-model`,
`--set tuning-first-heldout`, `--set tuning-plan-fixes` one list).
"""

from __future__ import annotations

from pathlib import Path

from tests.judging import COMPLETE, NOT_FOUND, Case
from tests.tuning.first_heldout import FIRST_HELDOUT

HERE = Path(__file__).resolve().parent

R = "pumpwerk-nord-report.txt"
V = "vereinsnachrichten-herbst.md"
Y = "field-trial-yields.csv"

REAL_MODEL: list[Case] = [
    Case("pump-seal", "en", "Why was pump 2 taken out of service?", [R, V], [("seal",)]),
    Case("pump-energy", "en", "How much electricity did the station use in October?", [R], [("48300",)]),
    Case("pump-meter-de", "de", "Bis wann muss der Durchflussmesser neu kalibriert werden?", [R],
         [("30 november", "30. november", "november 30")]),
    Case("pump-generator-fr", "fr", "Après combien de secondes le groupe électrogène a-t-il démarré ?", [R],
         [("12",)]),
    Case("pump-oncall-missing", "en", "What is the on-call technician's phone number?", [R], [NOT_FOUND]),
    Case("chess-fee-de", "de", "Wie hoch ist der Jahresbeitrag für Erwachsene ab 2027?", [V, R], [("60",)]),
    Case("chess-meeting-en", "en", "When and where is the annual general meeting?", [V],
         [("7 december", "7. dezember", "december 7"), ("linde",)]),
    Case("chess-winner-fr", "fr", "Qui a gagné le tournoi de blitz d'automne ?", [V], [("lena krämer",)]),
    Case("yield-best-2024", "en", "Which variety had the highest yield in 2024?", [Y], [("cordoba",), ("8.1",)]),
    Case("yield-xlsx-de", "de", "Gib mir die Tabelle als Excel-Datei.", [Y], [("borealis",), ("540",)], "xlsx"),
    Case("chess-summary-en", "en", "Summarise the newsletter in English.", [V],
         [("60",), ("7 december", "december 7", "7. dezember")]),
    Case("pump-summary-fr", "fr", "Résume le rapport en français en trois phrases.", [R], [("48300", "48 300"), ("joint", "seal")]),
    Case("followup-translate-de", "de", "Übersetze das ins Deutsche.", [R], [("48300",)],
         before=["Summarise the report in two sentences."]),
    Case("followup-continue-en", "en", "ok, and?", [R], [(COMPLETE,)], before=["What happened on 9 October?"]),
    Case("chitchat-de", "de", "Wie begrüße ich neue Vereinsmitglieder freundlich?", [], [(COMPLETE,)]),
]
CASES: list[Case] = [*REAL_MODEL, *FIRST_HELDOUT]


def path(name: str) -> Path:
    return HERE / name
