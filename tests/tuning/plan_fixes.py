"""The requests that motivated the plan fixes (`agents.planning.fixes`) which earned nothing on the other
tuning sets, as tuning cases (issue 43): each fix is measured on them with a real model, all fixes on
against that one off (`bench/heldout.py --set tuning-plan-fixes --fixes-off NAME`). The expected answers
were written before the first run. Each group of ids names the fix and what it was written for:

- `names-`: agent names a small model nearly got right ("Summarizer", "data extractor"), b8a14db.
- `deliverable-`: "the table as Excel" planned as a summarizer's task (issue 29).
- `structure-`: a translation of a Word summary written under the summary's own name; a CSV task that
  reads the file it is to make (Qwen 0.5B over the pump report); "Also give me the table as Excel."
  after "Summarise this table." listed the workbook among the final documents with no task making it
  (issue 29).
- `language-`: "Fasse das Dokument zusammen" answered "I will combine the ... document into one file."
  (ef7bb95): the manager's reply must be in the user's language (`Case.reply_lang`).
- `copied-`: "Now translate that to German." after a summary, whose writer was told the whole earlier
  plan; a question about the summer party whose task copied the catalogue line ("(html, 1 KB, ...,
  uploaded): begins ...") (43c20d5).
- `pointed-`: "Summarise the second one only." read the first document; "translate that" (43c20d5).
- `attached-`: a question about two attached documents planned over one of them (issue 50, item 5).
- `leftout-`: "only summarise the report, skip the ledger" (issue 50, item 9; a steer there, here the
  first request, which the bench can post).

Documents: this folder's (tests/tuning/).
"""

from __future__ import annotations

from tests.judging import Case

R = "pumpwerk-nord-report.txt"
V = "vereinsnachrichten-herbst.md"
Y = "field-trial-yields.csv"
S = "atlas-status-report-q3.docx"
M = "aquaboil-3000-manual.docx"
P = "sommerfest-tv-gruendorf.html"
T = "eagle-ridge-loop.html"
D = "protokoll-teamsitzung-2024-09-03.txt"
F = "conseil-ecole-2024-03-12.md"

PUMP = ("48300", "48 300")
WORKBOOK_ROWS = [("borealis",), ("540",)]

PLAN_FIXES: list[Case] = [
    # agent_names
    Case("names-summary-de", "de", "Fasse den Wartungsbericht zusammen.", [R], [PUMP, ("dichtung", "seal")],
         kind="summary"),
    Case("names-extract-csv", "en", "Extract the yields table as a CSV file.", [Y], [("cordoba",), ("8.1",)], "csv",
         kind="csv"),
    # deliverable
    Case("deliverable-summary-xlsx", "en", "Summarise this table and give me the table as an Excel file.", [Y],
         WORKBOOK_ROWS, "xlsx", kind="xlsx"),
    Case("deliverable-excel-de", "de", "Fasse die Tabelle zusammen und gib sie mir auch als Excel-Datei.", [Y],
         WORKBOOK_ROWS, "xlsx", kind="xlsx"),
    # structure
    Case("structure-translate-docx", "de", "Now translate that to German.", [S], [("68",)],
         before=["Summarise the status report as a Word document."], kind="translation"),
    Case("structure-energy-csv", "en", "Put the station's energy figures in a CSV file.", [R], [PUMP], "csv",
         kind="csv"),
    Case("structure-table-excel", "en", "Also give me the table as Excel.", [Y], WORKBOOK_ROWS, "xlsx",
         before=["Summarise this table."], kind="xlsx"),
    # answer_language
    Case("language-summary-de", "de", "Fasse das Dokument zusammen.", [S], [("68",)], reply_lang=True,
         kind="summary"),
    Case("language-summary-fr", "fr", "Résume le document.", [M],
         [("4 semaines", "quatre semaines", "24 mois", "2200", "2 200", "1,7", "1.7")], reply_lang=True,
         kind="summary"),
    # copied
    Case("copied-translate-de", "de", "Now translate that to German.", [S], [("68",)],
         before=["Summarize the status report in two sentences."], kind="translation"),
    Case("copied-party-fee-de", "de", "Wie viel kostet der Eintritt für Erwachsene beim Sommerfest?", [P],
         [("3 €", "€3", "3 euro", "3€", "eur 3")], kind="fact"),
    # pointed
    Case("pointed-second-one", "en", "Summarise the second one only.", [R, V],
         [("7 december", "december 7", "7. dezember", "60 €", "60€", "lena krämer")], avoid=PUMP, kind="summary"),
    Case("pointed-translate-fr", "fr", "Traduis ça en français.", [R], [PUMP],
         before=["Summarise the report in two sentences."], kind="translation"),
    # attached
    Case("attached-two-part-en", "en", "How much electricity was used in October, and who won the autumn blitz "
         "tournament?", [R, V], [PUMP, ("lena krämer",)], kind="two-part"),
    Case("attached-two-part-fr", "fr", "Combien coûte la sortie au musée par élève, et quelle est la puissance de "
         "la bouilloire ?", [F, M], [("12 €", "12€", "12 euro"), ("2200", "2 200")], kind="two-part"),
    # left_out
    Case("leftout-skip-csv", "en", "Only summarise the report, skip the CSV.", [R, Y], [PUMP],
         avoid=("cordoba", "borealis", "arcadia"), kind="summary"),
    Case("leftout-sans-fr", "fr", "Résume seulement le rapport, sans le fichier CSV.", [R, Y], [PUMP],
         avoid=("cordoba", "borealis", "arcadia"), kind="summary"),
]
