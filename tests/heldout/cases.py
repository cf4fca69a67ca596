"""The held-out set, second edition (issue 43): requests over documents of kinds the first set (now
tests/tuning/) did not have (invoices and long reports whose tables have no ruling lines, contracts,
slide decks, scanned pages), written with their expected answers before anything was measured on
them. Measure with it (`bench/heldout.py`); never tune on it, never read its cases while fixing,
never name its documents in `agents/` or `app/` (tests/test_layers.py checks that).

Judged by `tests.judging.judge`: `checks` are the facts a right answer holds (each a tuple of
alternatives), `avoid` what makes it wrong, `file` the document it must deliver, `lang` the language
it must be written in. `kind`: fact (one fact), two-part, superlative (the largest, the smallest, a
comparison over a table), summary, xlsx / docx (an extraction to a file), not-found (the documents
do not say). A case with `before` is a follow-up: the earlier requests are rounds of the same
conversation, and only the last one is judged.
"""

from __future__ import annotations

from pathlib import Path

from tests.judging import NOT_FOUND, Case

HERE = Path(__file__).resolve().parent

INV_EN = "invoice-harbourside-catering-0412.pdf"
INV_DE = "rechnung-tischlerei-berger-2025-117.pdf"
INV_FR = "facture-atelier-velo-rouge-2025-089.pdf"
CON_EN = "maintenance-agreement-brightline.pdf"
CON_DE = "wartungsvertrag-aufzug-lindenhof.docx"
CON_FR = "contrat-location-salle-des-fetes.pdf"
DECK_EN = "q3-sales-review-northgate.pptx"
DECK_DE = "schulung-datenschutz-praxis-albers.pptx"
DECK_FR = "bilan-festival-jazz-en-vignes-2024.pptx"
REP_EN = "coastal-transit-annual-report-2024.pdf"
REP_DE = "geschaeftsbericht-stadtwerke-talheim-2024.pdf"
REP_FR = "bilan-qualite-air-valmont-2024.pdf"
SCAN_EN = "scan-gas-safety-record-elm-grove.pdf"
SCAN_DE = "scan-abfallgebuehrenbescheid-2025.pdf"
SCAN_FR = "scan-convocation-ag-les-glycines.pdf"
DOCUMENTS = (INV_EN, INV_DE, INV_FR, CON_EN, CON_DE, CON_FR, DECK_EN, DECK_DE, DECK_FR, REP_EN, REP_DE, REP_FR,
             SCAN_EN, SCAN_DE, SCAN_FR)

C = Case
CASES: list[Case] = [
    # invoices: unruled PDF tables of line items
    C("inv-en-total", "en", "What is the total amount due on the Harbourside invoice?", [INV_EN],
      [("1206.60", "1206,60")], kind="fact"),
    C("inv-en-due-pay", "en", "When is the invoice due, and how can I pay it?", [INV_EN],
      [("11 april", "april 11"), ("bank transfer", "31926804", "20-45-77")], kind="two-part"),
    C("inv-en-dearest-line", "en", "Which line of the invoice cost the most in total?", [INV_EN],
      [("sandwich",), ("324",)], kind="superlative"),
    C("inv-en-vat-de", "de", "Wie hoch ist die Mehrwertsteuer auf der Rechnung von Harbourside Catering?", [INV_EN],
      [("201.10", "201,10", "201.1")], kind="fact"),
    C("inv-en-xlsx", "en", "Put the invoice's line items into an Excel file.", [INV_EN],
      [("sandwich",), ("324",), ("fruit bowl",)], file="xlsx", kind="xlsx"),
    C("inv-en-vat-followup", "en", "And how much of that is VAT?", [INV_EN], [("201.10", "201,10", "201.1")],
      before=["What is the total amount due on the Harbourside invoice?"], kind="fact"),
    C("inv-de-total", "de", "Wie hoch ist der Rechnungsbetrag der Tischlerei Berger?", [INV_DE],
      [("5090,82", "5090.82")], kind="fact"),
    C("inv-de-dearest", "de", "Welche Position der Rechnung ist die teuerste?", [INV_DE],
      [("einbauschrank",), ("2480",)], kind="superlative"),
    C("inv-de-hours-en", "en", "How many hours of assembly were charged on the carpenter's invoice, and at what "
      "hourly rate?", [INV_DE], [("13,5", "13.5"), ("58",)], kind="two-part"),
    C("inv-de-xlsx", "de", "Erstelle aus den Rechnungspositionen eine Excel-Tabelle.", [INV_DE],
      [("schiebet",), ("783",), ("entsorgung",)], file="xlsx", kind="xlsx"),
    C("inv-de-cheapest-followup", "de", "Und welche ist die günstigste?", [INV_DE], [("anfahrt",)],
      before=["Welche Position der Rechnung ist die teuerste?"],
      kind="superlative"),
    C("inv-de-reminder-followup", "de", "Schreib mir daraus eine Zahlungserinnerung als Word-Dokument.", [INV_DE],
      [("5090,82", "5090.82"), ("2025-117",)], file="docx",
      before=["Wie hoch ist der Rechnungsbetrag der Tischlerei Berger?"], kind="docx"),
    C("inv-fr-total", "fr", "Quel est le montant TTC de la facture de l'Atelier Vélo Rouge ?", [INV_FR],
      [("302,76", "302.76")], kind="fact"),
    C("inv-fr-unit-price", "fr", "Quelle ligne de la facture a le prix unitaire le plus élevé ?", [INV_FR],
      [("révision", "revision"), ("89",)], kind="superlative"),
    C("inv-fr-brakes-de", "de", "Was kosten die Bremsbeläge beim Fahrradladen pro Paar und insgesamt?", [INV_FR],
      [("18,90", "18.90", "18,9"), ("37,80", "37.80", "37,8")], kind="two-part"),
    C("inv-fr-ht-followup", "fr", "Et le montant hors taxes ?", [INV_FR], [("252,30", "252.30", "252,3")],
      before=["Quel est le montant TTC de la facture de l'Atelier Vélo Rouge ?"], kind="fact"),
    C("inv-fr-hours-missing", "en", "What are the bike shop's opening hours?", [INV_FR], [NOT_FOUND],
      kind="not-found"),
    C("inv-compare-fr", "fr", "Quelle facture a le montant total le plus élevé : celle de l'atelier vélo ou celle "
      "de la menuiserie Berger ?", [INV_FR, INV_DE], [("berger", "tischlerei"), ("5090,82", "5090.82")],
      kind="superlative"),
    # contracts
    C("con-en-term", "en", "How long is the initial term of the maintenance agreement, and what notice stops it "
      "from renewing?", [CON_EN], [("24 months",), ("90 days",)], kind="two-part"),
    C("con-en-p1", "en", "What is the response time for a critical P1 incident?", [CON_EN],
      [("1 hour", "one hour")], kind="fact"),
    C("con-en-p3-followup", "en", "And for a P3 incident?", [CON_EN], [("1 business day", "one business day")],
      before=["What is the response time for a critical P1 incident?"], kind="fact"),
    C("con-en-fee-fr", "fr", "Quel est le montant de la redevance mensuelle du contrat de maintenance ?", [CON_EN],
      [("1850",)], kind="fact"),
    C("con-en-slowest-de", "de", "Welche Priorität hat im Wartungsvertrag die längste Lösungszeit?", [CON_EN],
      [("p4",), ("10 business days", "10 werktag", "10 arbeitstag", "10 geschäftstag")], kind="superlative"),
    C("con-en-summary", "en", "Summarise the maintenance agreement's key terms in five bullet points.", [CON_EN],
      [("1850",), ("24 months",), ("liab",)], kind="summary"),
    C("con-en-docx", "en", "Write a Word document with the service levels table of the agreement.", [CON_EN],
      [("p2",), ("4 hours",), ("10 business days",)], file="docx", kind="docx"),
    C("con-de-rescue", "de", "Wie schnell muss ein Techniker da sein, wenn jemand im Aufzug eingeschlossen ist?",
      [CON_DE], [("30 minuten", "30 minutes")], kind="fact"),
    C("con-de-other-followup", "de", "Und bei sonstigen Störungen?", [CON_DE],
      [("nächsten werktag", "nächster werktag", "next working day", "next business day")],
      before=["Wie schnell muss ein Techniker da sein, wenn jemand im Aufzug eingeschlossen ist?"], kind="fact"),
    C("con-de-start", "de", "Wann beginnt der Wartungsvertrag und wie lange ist die Mindestlaufzeit?", [CON_DE],
      [("1. juli 2025", "1 july 2025", "july 1, 2025"), ("36 monat", "36 months")], kind="two-part"),
    C("con-de-fee-en", "en", "How much does the lift maintenance cost per month?", [CON_DE], [("310",)],
      kind="fact"),
    C("con-de-load-fr", "fr", "Quel ascenseur a la plus grande charge utile ?", [CON_DE],
      [("haus b", "maison b", "bâtiment b", "house b"), ("1000",)], kind="superlative"),
    C("con-de-penalty-missing", "de", "Wie hoch ist die Vertragsstrafe, wenn die Wartung zu spät erfolgt?", [CON_DE],
      [NOT_FOUND], kind="not-found"),
    C("con-fr-deposit", "fr", "Quel est le montant de la caution pour la salle des fêtes ?", [CON_FR], [("800",)],
      kind="fact"),
    C("con-fr-refund-followup", "fr", "Et sous quel délai est-elle rendue ?", [CON_FR],
      [("15 jours", "15 days", "15 tage", "quinze jours")],
      before=["Quel est le montant de la caution pour la salle des fêtes ?"], kind="fact"),
    C("con-fr-capacity-music", "fr", "Combien de personnes la salle peut-elle accueillir, et jusqu'à quelle heure "
      "la musique amplifiée est-elle permise ?", [CON_FR], [("180",), ("1 h", "1h", "01:00", "1:00")],
      kind="two-part"),
    C("con-fr-cancel-en", "en", "What do we get back if we cancel the hall booking 20 days before?", [CON_FR],
      [("50 %", "50%", "50 percent", "half")], kind="fact"),
    C("con-fr-dearest-de", "de", "Was kostet die teuerste Mietart für Auswärtige?", [CON_FR],
      [("1100",), ("week-end", "wochenende", "weekend")], kind="superlative"),
    C("con-fr-xlsx", "en", "Extract the price table of the hall rental contract to Excel.", [CON_FR],
      [("620",), ("260",), ("1100",)], file="xlsx", kind="xlsx"),
    # slides
    C("deck-en-best-region", "en", "Which region grew the most in Q3 2025?", [DECK_EN],
      [("south",), ("16.6",)], kind="superlative"),
    C("deck-en-least-followup", "en", "And which grew the least?", [DECK_EN], [("midlands",), ("3.1",)],
      before=["Which region grew the most in Q3 2025?"], kind="superlative"),
    C("deck-en-xlsx-followup", "en", "Put that table in an Excel file.", [DECK_EN], [("scotland",), ("643",)],
      file="xlsx", before=["Which region grew the most in Q3 2025?"], kind="xlsx"),
    C("deck-en-revenue", "en", "What was total revenue in Q3 2025 and how much did it grow?", [DECK_EN],
      [("4.62", "4620"), ("11%", "11 %", "11.1")], kind="two-part"),
    C("deck-en-leeds-de", "de", "Wann eröffnet der neue Laden in Leeds?", [DECK_EN],
      [("15. november", "15 november", "november 15")], kind="fact"),
    C("deck-en-recall-fr", "fr", "Combien a coûté le rappel des vestes imperméables ?", [DECK_EN],
      [("85k", "85 k", "85000", "85 000")], kind="fact"),
    C("deck-en-summary", "en", "Summarise the slides in three sentences.", [DECK_EN],
      [("4.62", "4620"), ("11%", "11 %", "11.1")], kind="summary"),
    C("deck-de-password", "de", "Wie viele Zeichen muss ein Passwort laut Schulung mindestens haben?", [DECK_DE],
      [("12 zeichen", "12 characters", "zwölf zeichen")], kind="fact"),
    C("deck-de-longest", "de", "Welche Unterlagen müssen am längsten aufbewahrt werden?", [DECK_DE],
      [("strahlenbehandlung",), ("30",)], kind="superlative"),
    C("deck-de-shortest-followup", "de", "Und welche am kürzesten?", [DECK_DE],
      [("dienstpl",), ("2 jahre", "zwei jahre", "2 years")],
      before=["Welche Unterlagen müssen am längsten aufbewahrt werden?"], kind="superlative"),
    C("deck-de-breach-en", "en", "Who do I tell about a data breach, and within how many hours must the authority "
      "be informed?", [DECK_DE], [("vogt",), ("72",)], kind="two-part"),
    C("deck-fr-best-night", "fr", "Quelle soirée du festival a attiré le plus de public ?", [DECK_FR],
      [("samedi", "saturday", "samstag"), ("4020",)], kind="superlative"),
    C("deck-fr-least-followup", "fr", "Et laquelle en a attiré le moins ?", [DECK_FR],
      [("jeudi", "thursday", "donnerstag"), ("2150",)],
      before=["Quelle soirée du festival a attiré le plus de public ?"], kind="superlative"),
    C("deck-fr-budget", "fr", "Quel a été l'excédent du festival, et quel est le premier poste de dépense ?",
      [DECK_FR], [("14500",), ("cachets", "artist fees", "artists' fees", "künstler")], kind="two-part"),
    C("deck-fr-summary-en", "en", "Summarise the festival review in English in three bullet points.", [DECK_FR],
      [("12400",), ("14500",)], kind="summary"),
    C("deck-fr-target-de", "de", "Wie viele Besucher will das Festival 2025 erreichen?", [DECK_FR],
      [("14000",)], kind="fact"),
    # long reports: many pages, unruled tables among the prose
    C("rep-en-ebuses", "en", "How many electric buses did the authority have at the end of 2024?", [REP_EN],
      [("58",)], kind="fact"),
    C("rep-en-worst-depot", "en", "Which depot had the lowest on-time rate?", [REP_EN],
      [("portside",), ("84.6",)], kind="superlative"),
    C("rep-en-buses-followup", "en", "How many buses are based there?", [REP_EN], [("76",)],
      before=["Which depot had the lowest on-time rate?"], kind="fact"),
    C("rep-en-busiest-line", "en", "Which line carried the most passengers in 2024?", [REP_EN],
      [("line 4", "northern suburbs"), ("12.1",)], kind="superlative"),
    C("rep-en-growth-followup", "en", "And which one grew the fastest compared with 2023?", [REP_EN],
      [("line 2", "airport express")], before=["Which line carried the most passengers in 2024?"],
      kind="superlative"),
    C("rep-en-revenue", "en", "What was the authority's total revenue, and how much of it came from fares?",
      [REP_EN], [("212.4",), ("131.7",)], kind="two-part"),
    C("rep-en-line7-de", "de", "Wann soll die neue Linie 7 eröffnet werden?", [REP_EN],
      [("september 2025",)], kind="fact"),
    C("rep-en-summary", "en", "Give me a one-page summary of the annual report.", [REP_EN],
      [("48.3",), ("58",), ("7.3", "212.4")], kind="summary"),
    C("rep-en-xlsx", "en", "Extract the ridership by line table to an Excel file.", [REP_EN],
      [("airport express",), ("12.1",), ("industrial park",)], file="xlsx", kind="xlsx"),
    C("rep-en-ceo-missing", "en", "How much did the chief executive earn in 2024?", [REP_EN], [NOT_FOUND],
      kind="not-found"),
    C("rep-de-profit", "de", "Wie hoch war der Jahresüberschuss der Stadtwerke 2024?", [REP_DE],
      [("9,2", "9.2")], kind="fact"),
    C("rep-de-invest-followup", "de", "Und wie viel wurde investiert?", [REP_DE], [("24,7", "24.7")],
      before=["Wie hoch war der Jahresüberschuss der Stadtwerke 2024?"], kind="fact"),
    C("rep-de-outages", "de", "In welchem Ortsteil gab es die meisten Stromausfälle?", [REP_DE],
      [("neuberg",)], kind="superlative"),
    C("rep-de-longest-en", "en", "Which district had the longest average power cut?", [REP_DE],
      [("weidach",), ("71",)], kind="superlative"),
    C("rep-de-fewest-followup", "en", "And which one had the fewest outages?", [REP_DE], [("sonnenhalde",)],
      before=["Which district had the longest average power cut?"], kind="superlative"),
    C("rep-de-sales-customers", "de", "Wie viel Strom wurde 2024 abgesetzt und wie viele Kunden gibt es?", [REP_DE],
      [("412",), ("61800",)], kind="two-part"),
    C("rep-de-water-fr", "fr", "Quel était le taux de pertes d'eau dans le réseau ?", [REP_DE],
      [("7,8", "7.8")], kind="fact"),
    C("rep-de-xlsx", "de", "Exportiere die Tabelle zum Stromabsatz nach Kundengruppen als Excel-Datei.", [REP_DE],
      [("haushalte",), ("147",), ("gewerbe",)], file="xlsx", kind="xlsx"),
    C("rep-fr-worst-station", "fr", "Quelle station a la moyenne de PM10 la plus élevée ?", [REP_FR],
      [("gare routière", "gare routiere"), ("29",)], kind="superlative"),
    C("rep-fr-days-followup", "fr", "Et combien de jours de dépassement y a-t-il eu à cette station ?", [REP_FR],
      [("14",)], before=["Quelle station a la moyenne de PM10 la plus élevée ?"], kind="fact"),
    C("rep-fr-clean-de", "de", "Welche Messstation hatte keinen einzigen Überschreitungstag?", [REP_FR],
      [("les vignes",)], kind="superlative"),
    C("rep-fr-dates-en", "en", "When was the longest ozone episode, and when will the low-emission zone be "
      "extended?", [REP_FR], [("august", "août"), ("1 january 2026", "january 1, 2026", "1er janvier 2026",
                                                   "1 janvier 2026", "january 2026")], kind="two-part"),
    C("rep-fr-summary", "fr", "Résume ce bilan en cinq phrases.", [REP_FR], [("pm10", "particules"), ("ozone",)],
      kind="summary"),
    C("rep-fr-docx", "fr", "Fais un document Word avec le tableau des stations de mesure.", [REP_FR],
      [("zone portuaire",), ("26",), ("les vignes",)], file="docx", kind="docx"),
    # scanned pages (image-only PDFs: read by OCR)
    C("scan-en-next", "en", "When is the next gas safety inspection due?", [SCAN_EN],
      [("8 january 2026", "january 8, 2026", "8 jan 2026", "january 8 2026")], kind="fact"),
    C("scan-en-who-followup", "en", "Who carried it out?", [SCAN_EN], [("whitcombe",)],
      before=["When is the next gas safety inspection due?"], kind="fact"),
    C("scan-en-remedial", "en", "What remedial work is needed, and by when?", [SCAN_EN],
      [("condensate",), ("28 days",)], kind="two-part"),
    C("scan-en-translate-followup", "fr", "Traduis ça en français.", [SCAN_EN], [("2026",)],
      before=["Summarise the gas safety record in two sentences."], kind="summary"),
    C("scan-de-total", "de", "Wie hoch ist der Gesamtbetrag des Abfallgebührenbescheids?", [SCAN_DE], [("240",)],
      kind="fact"),
    C("scan-de-rates", "de", "Wann sind die Raten fällig und wie hoch ist jede?", [SCAN_DE],
      [("15. februar", "15 februar", "15 february", "february 15"), ("15. august", "15 august", "august 15"),
       ("120",)], kind="two-part"),
    C("scan-de-bin-en", "en", "Which bin costs the most on the waste fee notice?", [SCAN_DE],
      [("restm", "residual", "general waste"), ("186",)], kind="superlative"),
    C("scan-de-objection-followup", "de", "Bis wann kann ich dagegen Widerspruch einlegen?", [SCAN_DE],
      [("einen monat", "einem monat", "eines monats", "one month", "1 monat")],
      before=["Wie hoch ist der Gesamtbetrag des Abfallgebührenbescheids?"], kind="fact"),
    C("scan-fr-time", "fr", "À quelle heure commence l'assemblée générale ?", [SCAN_FR],
      [("18 h 30", "18h30", "18:30", "6:30")], kind="fact"),
    C("scan-fr-where-followup", "fr", "Et où a-t-elle lieu ?", [SCAN_FR],
      [("paroissiale", "sainte-catherine")], before=["À quelle heure commence l'assemblée générale ?"],
      kind="fact"),
    C("scan-fr-budget", "fr", "Quel est le budget prévisionnel 2025 et combien coûte le ravalement ?", [SCAN_FR],
      [("51000",), ("126400",)], kind="two-part"),
    C("scan-fr-vote-en", "en", "By when must postal votes be sent for the owners' meeting?", [SCAN_FR],
      [("17 june", "17 juin", "june 17")], kind="fact"),
    # two documents in one conversation
    C("two-second-only-followup", "en", "Now summarise only the second one, in more detail.", [CON_EN, CON_FR],
      [("800", "180", "salle", "hall")], before=["Summarise each document in one sentence."],
      avoid=("brightline",), kind="summary"),
]


def path(name: str) -> Path:
    return HERE / name
