"""Writes the first held-out set's documents, now tuning documents (run once; the files are committed
beside it).

    .venv/bin/python tests/tuning/make_documents.py

Realistic documents, not in the shared corpus: a kettle manual (DOCX), a club's summer party page (German
HTML), a hiking trail page (HTML), a bakery's sales workbook with one sheet per year and a summary
sheet of totals (XLSX), a project status report (DOCX), German team meeting minutes (text) and
French school council minutes (Markdown).
"""

from __future__ import annotations

from pathlib import Path

import docx
import openpyxl

HERE = Path(__file__).resolve().parent

SALES = {  # product: quarterly sales in euros, per year
    "2021": {"Bread": [18200, 17650, 16900, 19400], "Croissants": [9100, 9800, 8700, 10250],
             "Cakes": [12400, 13100, 11800, 21900], "Coffee": [7300, 7900, 8400, 8100]},
    "2022": {"Bread": [19100, 18800, 17300, 20150], "Croissants": [9900, 10400, 9600, 11300],
             "Cakes": [13000, 13600, 12200, 23400], "Coffee": [8800, 9400, 9900, 9700]},
    "2023": {"Bread": [19800, 19200, 18100, 21000], "Croissants": [11800, 12600, 11900, 13700],
             "Cakes": [13400, 14100, 12900, 24800], "Coffee": [10200, 10900, 11300, 11600]},
}


def manual() -> None:
    d = docx.Document()
    d.add_heading("AquaBoil 3000 Electric Kettle - User Manual", 0)
    d.add_heading("1. Safety instructions", 1)
    d.add_paragraph("Only connect the kettle to a grounded socket of 220-240 V. Never immerse the base, "
                    "the cord or the plug in water. Do not fill the kettle above the MAX mark (1.7 litres), "
                    "boiling water may spill out. Keep the kettle out of reach of children under 8 years.")
    d.add_heading("2. Before first use", 1)
    d.add_paragraph("Fill the kettle to the MAX mark, boil the water and pour it away. Repeat this twice "
                    "to remove any manufacturing residue.")
    d.add_heading("3. Descaling", 1)
    d.add_paragraph("In areas with hard water, descale the kettle every 4 weeks. Dissolve 2 tablespoons of "
                    "citric acid in 1 litre of water, boil the solution, leave it for 30 minutes, then rinse "
                    "the kettle three times with clean water. Never use vinegar essence: it damages the seals.")
    d.add_heading("4. Troubleshooting", 1)
    table = d.add_table(rows=1, cols=2)
    table.rows[0].cells[0].text, table.rows[0].cells[1].text = "Problem", "Cause and remedy"
    for problem, remedy in [
        ("The red light blinks three times", "The dry-boil protection has switched the kettle off. "
         "Let it cool down for 10 minutes, then fill it with water."),
        ("The kettle does not switch off", "The lid is not closed. Close the lid until it clicks."),
        ("White flakes in the water", "Limescale. Descale the kettle as described in section 3."),
    ]:
        row = table.add_row()
        row.cells[0].text, row.cells[1].text = problem, remedy
    d.add_heading("5. Technical data", 1)
    d.add_paragraph("Power: 2200 W. Capacity: 1.7 litres. Voltage: 220-240 V, 50/60 Hz. Cord length: 0.75 m. "
                    "Weight: 1.1 kg.")
    d.add_heading("6. Warranty", 1)
    d.add_paragraph("The warranty period is 24 months from the date of purchase. Keep your receipt. "
                    "Damage caused by limescale is not covered by the warranty.")
    d.save(HERE / "aquaboil-3000-manual.docx")


def status_report() -> None:
    d = docx.Document()
    d.add_heading("Project Atlas - Status Report Q3 2024", 0)
    d.add_paragraph("Prepared by Maria Okafor, project manager, on 30 September 2024.")
    d.add_heading("Overall status", 1)
    d.add_paragraph("The overall status is AMBER. The migration of the customer database to the new "
                    "platform is 68% complete. Scope and quality are on track, the schedule is at risk.")
    d.add_heading("Budget", 1)
    d.add_paragraph("Of the approved budget of 600,000 EUR, 412,000 EUR have been spent so far. The forecast "
                    "at completion is 585,000 EUR.")
    d.add_heading("Risks", 1)
    d.add_paragraph("The vendor has delayed the delivery of the database licences by 3 weeks. If the licences "
                    "arrive after 15 October, the cut-over must move to December. Two developers leave the "
                    "team at the end of October; their replacements start on 4 November.")
    d.add_heading("Next milestones", 1)
    table = d.add_table(rows=1, cols=3)
    for cell, text in zip(table.rows[0].cells, ["Milestone", "Date", "Owner"]):
        cell.text = text
    for row_values in [("Load tests finished", "25 October 2024", "Tom Becker"),
                       ("Cut-over to the new platform", "14 November 2024", "Maria Okafor"),
                       ("Old system switched off", "31 January 2025", "Lena Hoffmann")]:
        row = table.add_row()
        for cell, text in zip(row.cells, row_values):
            cell.text = text
    d.add_heading("Decisions needed", 1)
    d.add_paragraph("The steering committee is asked to approve a second test environment (cost: 18,000 EUR) "
                    "by 10 October.")
    d.save(HERE / "atlas-status-report-q3.docx")


def workbook() -> None:
    wb = openpyxl.Workbook()
    wb.remove(wb.active)
    totals = {}
    for year, products in SALES.items():
        ws = wb.create_sheet(year)
        ws.append(["Product", "Q1", "Q2", "Q3", "Q4", "Total"])
        column_totals = [0, 0, 0, 0, 0]
        for product, quarters in products.items():
            total = sum(quarters)
            ws.append([product, *quarters, total])
            column_totals = [a + b for a, b in zip(column_totals, [*quarters, total])]
        ws.append(["Total", *column_totals])
        totals[year] = column_totals[-1]
    ws = wb.create_sheet("Summary")
    ws.append(["Year", "Revenue (EUR)", "Change on previous year"])
    previous = None
    for year, total in totals.items():
        ws.append([int(year), total, "" if previous is None else f"{(total - previous) / previous:+.1%}"])
        previous = total
    wb.save(HERE / "baeckerei-sonnenschein-sales.xlsx")


PARTY = """<!DOCTYPE html>
<html lang="de"><head><meta charset="utf-8"><title>Sommerfest 2024 - TV Gründorf 1908 e.V.</title></head>
<body>
<nav><a href="/">Start</a> | <a href="/abteilungen">Abteilungen</a> | <a href="/kontakt">Kontakt</a></nav>
<h1>Sommerfest 2024 des TV Gründorf</h1>
<p>Liebe Mitglieder, liebe Nachbarn, unser traditionelles Sommerfest findet am <strong>Samstag, 13. Juli 2024</strong>
ab 14 Uhr auf dem Sportplatz am Lindenweg statt. Bei Regen feiern wir in der Mehrzweckhalle.</p>
<h2>Programm</h2>
<table>
<tr><th>Uhrzeit</th><th>Programmpunkt</th></tr>
<tr><td>14:00</td><td>Eröffnung durch den Vorsitzenden Klaus Brenner</td></tr>
<tr><td>14:30</td><td>Kinderturnen und Hüpfburg</td></tr>
<tr><td>16:00</td><td>Elfmeterschießen der Jugendmannschaften</td></tr>
<tr><td>19:00</td><td>Live-Musik mit der Band "Die Dorfspatzen"</td></tr>
</table>
<h2>Eintritt</h2>
<p>Der Eintritt kostet 3 € für Erwachsene, Kinder unter 14 Jahren haben freien Eintritt.</p>
<h2>Kuchenspenden</h2>
<p>Wer einen Kuchen spenden möchte, meldet sich bitte bis zum 5. Juli bei Petra Lindner
(Telefon 07123 45678). Der Erlös geht an die Jugendabteilung.</p>
<h2>Anfahrt</h2>
<p>Parkplätze gibt es am Rathaus, fünf Gehminuten vom Sportplatz entfernt. Bitte nicht am Lindenweg parken.</p>
<footer>© 2024 TV Gründorf 1908 e.V. | Impressum | Datenschutz</footer>
</body></html>
"""

TRAIL = """<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>Eagle Ridge Loop - Pine Valley State Park</title></head>
<body>
<header><a href="/">Pine Valley State Park</a> &gt; Trails</header>
<main>
<h1>Eagle Ridge Loop</h1>
<ul>
<li>Length: 11.4 km (7.1 miles)</li>
<li>Elevation gain: 620 m</li>
<li>Typical time: 4 hours</li>
<li>Difficulty: strenuous</li>
</ul>
<h2>Route</h2>
<p>The loop starts at the North Gate parking area and climbs through old pine forest to the Eagle Ridge
viewpoint, from where you can see three lakes on a clear day. The descent follows Cedar Creek past a
small waterfall.</p>
<h2>Rules</h2>
<p>Dogs are welcome but must be kept on a leash at all times. Camping and fires are not allowed on the
ridge. The parking fee is $5 per car per day, payable at the machine by card only.</p>
<h2>Seasonal closures</h2>
<p>The upper section above the viewpoint is closed from 1 December to 31 March because of ice.</p>
</main>
<footer>Pine Valley State Park, 1200 Ridge Road. Ranger station: (555) 013-2270.</footer>
</body></html>
"""

MINUTES_DE = """Protokoll der Teamsitzung IT-Service
Datum: 3. September 2024, 10:00 - 11:15 Uhr
Ort: Besprechungsraum 2.14
Teilnehmer: Jonas Weber, Aylin Demir, Frank Schulte, Sabine Krüger (Protokoll)
Entschuldigt: Markus Reinhardt

TOP 1: Neues Ticketsystem
Das bisherige Ticketsystem wird abgelöst. Das Team hat drei Angebote verglichen und entscheidet sich für
das Angebot von HelpFlow. Beschluss: Das neue Ticketsystem geht am 1. Oktober 2024 in Betrieb. Das Budget
beträgt 8.500 € für das erste Jahr. Verantwortlich für die Einführung ist Jonas Weber.

TOP 2: Urlaubsplanung Herbst
In den Herbstferien sind höchstens zwei Kolleginnen oder Kollegen gleichzeitig im Urlaub. Aylin Demir
stellt den Plan bis zum 13. September im Teamkalender ein.

TOP 3: Schulung
Frank Schulte organisiert eine Schulung zum neuen Ticketsystem am 25. September, 9 - 12 Uhr.

Offene Punkte
- Die Druckerwartung im 3. Stock ist weiter offen (Frank Schulte).
- Die Zugänge für die neuen Auszubildenden fehlen noch (Sabine Krüger).

Nächste Sitzung: 17. September 2024, 10:00 Uhr.
"""

MINUTES_FR = """# Compte rendu du conseil d'école

**École élémentaire Jules Ferry, Villeneuve** — séance du 12 mars 2024, 18 h 00

Présents : Mme Claire Dubois (directrice), M. Karim Benali (représentant de la mairie), six enseignants,
quatre représentants des parents d'élèves.

## 1. Effectifs

L'école compte 214 élèves répartis en neuf classes. Une fermeture de classe est envisagée à la rentrée
si les effectifs passent sous 200 élèves.

## 2. Sorties scolaires

La sortie au musée des Beaux-Arts aura lieu le 24 mai pour les classes de CM1 et CM2. Le coût est de
12 € par élève ; la coopérative scolaire prend en charge la moitié pour les familles qui le demandent.

## 3. Travaux

La mairie réalisera les travaux de la cantine pendant les vacances de printemps. La cour sera repeinte
en juillet.

## 4. Sécurité

Un exercice d'évacuation incendie a eu lieu le 8 février ; l'école a été évacuée en 2 minutes 40.

Le prochain conseil d'école aura lieu le 18 juin 2024.
"""


def texts() -> None:
    (HERE / "sommerfest-tv-gruendorf.html").write_text(PARTY, encoding="utf-8")
    (HERE / "eagle-ridge-loop.html").write_text(TRAIL, encoding="utf-8")
    (HERE / "protokoll-teamsitzung-2024-09-03.txt").write_text(MINUTES_DE, encoding="utf-8")
    (HERE / "conseil-ecole-2024-03-12.md").write_text(MINUTES_FR, encoding="utf-8")


if __name__ == "__main__":
    manual()
    status_report()
    workbook()
    texts()
