"""Writes the second held-out set's documents (run once; the files are committed beside it).

    .venv/bin/python -m tests.heldout.make_documents      # needs reportlab (the bench extra)

Kinds the first set (now tests/tuning/) did not have, in English, German and French: invoices whose
line items are a PDF table without ruling lines, contracts (PDF and DOCX), slide decks (PPTX), long
reports of many pages with unruled tables among their prose (PDF), and scanned pages (PDFs holding
only an image of the page: the OCR path). Every name, place and figure is made up.
"""

from __future__ import annotations

import random
from pathlib import Path

import docx
from pptx import Presentation
from pptx.util import Inches, Pt
from reportlab import rl_config
from reportlab.lib.pagesizes import A4
from reportlab.lib.styles import getSampleStyleSheet
from reportlab.platypus import PageBreak, Paragraph, SimpleDocTemplate, Spacer, Table, TableStyle

rl_config.invariant = 1  # the same bytes on every run: no creation date, no random file id
HERE = Path(__file__).resolve().parent
STYLES = getSampleStyleSheet()
FONT = Path(rl_config.__file__).parent / "fonts" / "Vera.ttf"
PLAIN = TableStyle([("ALIGN", (1, 0), (-1, -1), "RIGHT"), ("FONTNAME", (0, 0), (-1, 0), "Helvetica-Bold"),
                    ("BOTTOMPADDING", (0, 0), (-1, -1), 3)])  # no GRID, no LINEBELOW: an unruled table


def _story(blocks: list[object]) -> list[object]:
    """Strings as paragraphs ('# ' a heading, '## ' a subheading), lists as unruled tables."""
    out: list[object] = []
    for block in blocks:
        if block == "PAGE":
            out.append(PageBreak())
        elif isinstance(block, list):
            out += [Spacer(1, 6), Table(block, hAlign="LEFT", style=PLAIN), Spacer(1, 8)]
        elif isinstance(block, str) and block.startswith("## "):
            out.append(Paragraph(block[3:], STYLES["Heading3"]))
        elif isinstance(block, str) and block.startswith("# "):
            out.append(Paragraph(block[2:], STYLES["Heading2"]))
        elif isinstance(block, str) and block.startswith("! "):
            out.append(Paragraph(block[2:], STYLES["Title"]))
        else:
            out.append(Paragraph(str(block), STYLES["BodyText"]))
    return out


def pdf(name: str, blocks: list[object]) -> None:
    SimpleDocTemplate(str(HERE / name), pagesize=A4, title=name.rsplit(".", 1)[0]).build(_story(blocks))


def filler(seed: int, sentences: list[str], paragraphs: int) -> list[str]:
    """Prose of a long report: the section's own sentences shuffled into paragraphs (no figures)."""
    rng = random.Random(seed)
    return [" ".join(rng.sample(sentences, min(len(sentences), 6))) for _ in range(paragraphs)]


# --- invoices -------------------------------------------------------------------------------------

def invoice_en() -> None:
    pdf("invoice-harbourside-catering-0412.pdf", [
        "! Harbourside Catering Ltd",
        "14 Quay Street, Bristol BS1 4DJ - accounts@harbourside-catering.example",
        "# INVOICE HC-2025-0412",
        "Invoice date: 12 March 2025. Payment due: 11 April 2025 (30 days).",
        "Bill to: Meridian Architects LLP, 2 Temple Back, Bristol. Event: Spring open house, 7 March 2025.",
        [["Description", "Qty", "Unit price (GBP)", "Amount (GBP)"],
         ["Canape platter (24 pieces)", "6", "38.50", "231.00"],
         ["Sandwich selection, per person", "45", "7.20", "324.00"],
         ["Fruit bowl", "4", "22.00", "88.00"],
         ["Coffee and tea service, per person", "45", "3.10", "139.50"],
         ["Waiting staff (2 waiters), hours", "8", "19.75", "158.00"],
         ["Delivery and setup", "1", "65.00", "65.00"],
         ["", "", "Subtotal", "1,005.50"],
         ["", "", "VAT 20%", "201.10"],
         ["", "", "Total due", "1,206.60"]],
        "Please pay by bank transfer to Harbourside Catering Ltd, sort code 20-45-77, account 31926804, "
        "quoting the invoice number. Late payments are charged 2% per month.",
        "Thank you for your custom.",
    ])


def invoice_de() -> None:
    pdf("rechnung-tischlerei-berger-2025-117.pdf", [
        "! Tischlerei Berger GmbH",
        "Mühlgasse 8, 79098 Freiburg im Breisgau - Tel. 0761 4482 90",
        "# Rechnung Nr. 2025-117",
        "Rechnungsdatum: 3. Februar 2025. Leistungszeitraum: 13. bis 24. Januar 2025.",
        "Kunde: Familie Okonkwo, Am Schlossberg 21, 79104 Freiburg.",
        [["Pos.", "Bezeichnung", "Menge", "Einheit", "Einzelpreis", "Gesamt"],
         ["1", "Einbauschrank Eiche, nach Maß", "1", "Stk.", "2.480,00 €", "2.480,00 €"],
         ["2", "Schiebetür mit Softclose", "2", "Stk.", "395,00 €", "790,00 €"],
         ["3", "Montage", "13,5", "Std.", "58,00 €", "783,00 €"],
         ["4", "Anfahrt", "3", "pauschal", "35,00 €", "105,00 €"],
         ["5", "Entsorgung Altmöbel", "1", "pauschal", "120,00 €", "120,00 €"],
         ["", "", "", "", "Nettobetrag", "4.278,00 €"],
         ["", "", "", "", "USt. 19 %", "812,82 €"],
         ["", "", "", "", "Rechnungsbetrag", "5.090,82 €"]],
        "Zahlbar innerhalb von 14 Tagen ohne Abzug. Bei Zahlung innerhalb von 7 Tagen gewähren wir 2 % Skonto.",
        "Bankverbindung: Sparkasse Freiburg, IBAN DE12 6805 0101 0004 1178 22.",
    ])


def invoice_fr() -> None:
    pdf("facture-atelier-velo-rouge-2025-089.pdf", [
        "! Atelier Vélo Rouge",
        "5 rue des Tanneurs, 69001 Lyon - SIRET 812 443 901 00017",
        "# Facture n° F-2025-089",
        "Date : 18 avril 2025. Échéance : à réception.",
        "Cliente : Mme Amélie Rousseau, 40 quai Saint-Vincent, 69001 Lyon.",
        [["Désignation", "Qté", "Prix unitaire HT", "Total HT"],
         ["Révision complète", "1", "89,00 €", "89,00 €"],
         ["Chaîne 11 vitesses", "1", "42,50 €", "42,50 €"],
         ["Plaquettes de frein (paire)", "2", "18,90 €", "37,80 €"],
         ["Pneu 700x28", "2", "34,00 €", "68,00 €"],
         ["Main-d'oeuvre remplacement pneus", "1", "15,00 €", "15,00 €"],
         ["", "", "Total HT", "252,30 €"],
         ["", "", "TVA 20 %", "50,46 €"],
         ["", "", "Total TTC", "302,76 €"]],
        "Les pièces remplacées sont garanties 6 mois. Paiement par carte, en espèces ou par virement.",
    ])


# --- contracts ------------------------------------------------------------------------------------

def contract_en() -> None:
    legal = ["Each party shall act in good faith in performing its obligations under this Agreement.",
             "Notices under this Agreement shall be given in writing to the addresses stated above.",
             "No failure to exercise a right shall operate as a waiver of that right.",
             "This Agreement constitutes the entire agreement between the parties on its subject matter.",
             "Neither party may assign this Agreement without the prior written consent of the other.",
             "If any provision is held invalid, the remaining provisions shall continue in full force.",
             "The Provider shall keep the Client informed of material changes to the services.",
             "The Client shall give the Provider reasonable access to its premises and systems."]
    pdf("maintenance-agreement-brightline.pdf", [
        "! IT Support and Maintenance Agreement",
        "This Agreement is made between Brightline Systems Ltd, 90 Corn Street, Bristol (the Provider), "
        "and Fenwick &amp; Hale Solicitors, 3 Orchard Street, Bath (the Client). It takes effect on 1 May 2025.",
        "# 1. Term",
        "The initial term is 24 months from the effective date. It then renews automatically for successive "
        "periods of 12 months unless either party gives 90 days' written notice before the end of the "
        "current term.",
        *filler(1, legal, 2),
        "# 2. Fees",
        "The Client pays a monthly fee of GBP 1,850 excluding VAT, in advance on the first day of each month. "
        "The Provider may increase the fee once a year by at most 3%. Work outside the scope of this "
        "Agreement is charged at GBP 95 per hour.",
        "# 3. Service levels",
        "The Provider responds to and resolves incidents within the following times, measured during "
        "business hours (08:00 to 18:00, Monday to Friday) except for P1 incidents, which are covered at all times.",
        [["Priority", "Definition", "Response time", "Resolution target"],
         ["P1 Critical", "Whole office cannot work", "1 hour", "4 hours"],
         ["P2 High", "A team or a key system is down", "4 hours", "1 business day"],
         ["P3 Normal", "One user is affected", "1 business day", "3 business days"],
         ["P4 Request", "Changes, new users", "2 business days", "10 business days"]],
        "# 4. Service credits",
        "For each P1 incident whose response time is missed, the Client receives a credit of 5% of the "
        "monthly fee. Credits in any month are capped at 25% of that month's fee.",
        "PAGE",
        "# 5. Liability",
        "Each party's total liability under this Agreement is limited to the total fees paid in the 12 "
        "months before the event giving rise to the claim. Nothing limits liability for death or personal "
        "injury caused by negligence, or for fraud.",
        *filler(2, legal, 2),
        "# 6. Data protection",
        "The Provider processes personal data only on the Client's documented instructions, as processor. "
        "It notifies the Client of any personal data breach within 24 hours of becoming aware of it.",
        "# 7. Termination",
        "Either party may terminate this Agreement by written notice if the other commits a material breach "
        "and fails to remedy it within 30 days of being asked to do so.",
        "# 8. Governing law",
        "This Agreement is governed by the law of England and Wales.",
        *filler(3, legal, 1),
        "Signed for the Provider: Priya Natarajan, Managing Director. "
        "Signed for the Client: Owen Hale, Partner. Date: 22 April 2025.",
    ])


def contract_de() -> None:
    d = docx.Document()
    d.add_heading("Wartungsvertrag für Aufzugsanlagen", 0)
    d.add_paragraph("zwischen der Hausverwaltung Lindenhof GmbH, Kastanienallee 40, 10435 Berlin (Auftraggeber), "
                    "und der Hebetechnik Krause KG, Storkower Straße 118, 10407 Berlin (Auftragnehmer).")
    sections = [
        ("§ 1 Vertragsgegenstand", "Der Auftragnehmer wartet die zwei Personenaufzüge des Auftraggebers in den "
         "Häusern A und B der Wohnanlage Lindenhof. Die Anlagen sind in der folgenden Tabelle beschrieben."),
        ("§ 2 Leistungen", "Die Wartung erfolgt viermal jährlich nach Herstellervorgaben. Der Notruf ist rund "
         "um die Uhr besetzt. Bei eingeschlossenen Personen ist ein Techniker innerhalb von 30 Minuten vor Ort; "
         "bei sonstigen Störungen beginnt die Instandsetzung am nächsten Werktag."),
        ("§ 3 Vergütung", "Für die Leistungen nach § 2 zahlt der Auftraggeber eine Pauschale von 310 Euro netto "
         "pro Monat für beide Anlagen. Ersatzteile werden gesondert nach Aufwand berechnet. Arbeiten außerhalb "
         "der Pauschale werden mit 72 Euro netto je Stunde abgerechnet."),
        ("§ 4 Laufzeit und Kündigung", "Der Vertrag beginnt am 1. Juli 2025 und hat eine Mindestlaufzeit von "
         "36 Monaten. Danach verlängert er sich jeweils um ein Jahr, wenn er nicht mit einer Frist von sechs "
         "Monaten zum Ende der Laufzeit gekündigt wird."),
        ("§ 5 Haftung", "Der Auftragnehmer unterhält eine Betriebshaftpflichtversicherung mit einer "
         "Deckungssumme von 5 Millionen Euro und weist sie auf Verlangen nach."),
        ("§ 6 Schlussbestimmungen", "Änderungen bedürfen der Schriftform. Gerichtsstand ist Berlin."),
    ]
    for n, (title, text) in enumerate(sections):
        d.add_heading(title, 1)
        d.add_paragraph(text)
        if n == 0:
            table = d.add_table(rows=1, cols=4)
            for cell, head in zip(table.rows[0].cells, ["Anlage", "Baujahr", "Haltestellen", "Tragkraft"]):
                cell.text = head
            for values in [("Haus A", "2009", "6", "630 kg"), ("Haus B", "2016", "8", "1000 kg")]:
                for cell, value in zip(table.add_row().cells, values):
                    cell.text = value
    d.add_paragraph("Berlin, den 12. Juni 2025 - für den Auftraggeber: Sabine Lorenz, Geschäftsführerin; "
                    "für den Auftragnehmer: Jörg Krause, Inhaber.")
    d.save(HERE / "wartungsvertrag-aufzug-lindenhof.docx")


def contract_fr() -> None:
    pdf("contrat-location-salle-des-fetes.pdf", [
        "! Contrat de location de la salle des fêtes Jean-Moulin",
        "Entre la Commune de Saint-Rémy-sur-Loire, représentée par Mme Hélène Marchand, adjointe au maire "
        "(le bailleur), et l'association Les Amis du Chant, 7 rue des Écoles (le locataire).",
        "# Article 1 - Objet et durée",
        "La commune loue au locataire la salle des fêtes Jean-Moulin, 12 place de l'Église, du samedi "
        "14 juin 2025 à 14 h 00 au dimanche 15 juin 2025 à 10 h 00, pour un concert suivi d'un repas.",
        "# Article 2 - Capacité et sécurité",
        "La capacité maximale de la salle est de 180 personnes. La musique amplifiée est interdite après 1 h 00. "
        "Le locataire fournit une attestation d'assurance responsabilité civile au moins 10 jours avant la location.",
        "# Article 3 - Tarifs",
        "Le tarif appliqué au locataire est celui d'une association de la commune pour un week-end. "
        "Tarifs en vigueur :",
        [["Type de location", "Associations de la commune", "Particuliers de la commune", "Extérieurs"],
         ["Journée (semaine)", "250 €", "380 €", "620 €"],
         ["Week-end", "450 €", "690 €", "1 100 €"],
         ["Vin d'honneur (4 h)", "90 €", "150 €", "260 €"]],
        "# Article 4 - Caution",
        "Une caution de 800 € est versée par chèque à la remise des clés. Elle est restituée dans les 15 jours "
        "suivant l'état des lieux de sortie, déduction faite des éventuels dégâts.",
        "# Article 5 - Ménage",
        "Le ménage est à la charge du locataire. À défaut, un forfait de 150 € est facturé.",
        "# Article 6 - Annulation",
        "En cas d'annulation plus de 30 jours avant la date, le loyer est remboursé en totalité ; entre 30 et "
        "8 jours avant, 50 % du loyer est remboursé ; moins de 8 jours avant, aucun remboursement n'est dû.",
        "Fait à Saint-Rémy-sur-Loire, le 3 mars 2025, en deux exemplaires.",
    ])


# --- slides ---------------------------------------------------------------------------------------

def _deck(name: str, title: str, subtitle: str, slides: list[tuple[str, object, str]]) -> None:
    """slides: (title, bullet lines or a table's rows, speaker notes)."""
    prs = Presentation()
    first = prs.slides.add_slide(prs.slide_layouts[0])
    first.shapes.title.text, first.placeholders[1].text = title, subtitle
    for head, body, notes in slides:
        if body and isinstance(body[0], list):
            slide = prs.slides.add_slide(prs.slide_layouts[5])
            slide.shapes.title.text = head
            rows = body
            shape = slide.shapes.add_table(len(rows), len(rows[0]), Inches(0.5), Inches(1.6), Inches(9),
                                           Inches(0.4 * len(rows)))
            for r, row in enumerate(rows):
                for c, value in enumerate(row):
                    shape.table.cell(r, c).text = value
                    shape.table.cell(r, c).text_frame.paragraphs[0].font.size = Pt(16)
        else:
            slide = prs.slides.add_slide(prs.slide_layouts[1])
            slide.shapes.title.text = head
            frame = slide.placeholders[1].text_frame
            frame.text = body[0]
            for line in body[1:]:
                frame.add_paragraph().text = line
        if notes:
            slide.notes_slide.notes_text_frame.text = notes
    prs.save(str(HERE / name))


def slides_en() -> None:
    _deck("q3-sales-review-northgate.pptx", "Northgate Outdoor - Q3 2025 Sales Review",
          "Commercial team, 6 October 2025", [
              ("Highlights", ["Revenue GBP 4.62m, up 11% on Q3 2024", "Online share of sales rose to 38%",
                              "Gross margin 41.5% (Q2: 43.0%)", "Returns rate fell to 6.2%"],
               "Margin fell because of the discounting in July."),
              ("Revenue by region (GBP thousand)", [
                  ["Region", "Q3 2024", "Q3 2025", "Change"],
                  ["North", "1,120", "1,265", "+12.9%"], ["Midlands", "980", "1,010", "+3.1%"],
                  ["South", "1,460", "1,702", "+16.6%"], ["Scotland", "600", "643", "+7.2%"],
                  ["Total", "4,160", "4,620", "+11.1%"]], ""),
              ("Best sellers", ["Trailhead 40L backpack: 8,900 units", "Summit down jacket: 5,300 units",
                                "Ridge trekking poles: 4,750 units"], ""),
              ("Issues", ["The warehouse move in August delayed 1,200 orders by up to 5 days",
                          "Recall of the Stormline waterproof jacket (batch 2291) cost GBP 85k"], ""),
              ("Next steps for Q4", ["Open the Leeds store on 15 November", "Black Friday budget: GBP 240k",
                                     "Hire 12 seasonal staff for the stores"], ""),
          ])


def slides_de() -> None:
    _deck("schulung-datenschutz-praxis-albers.pptx", "Datenschutz-Schulung 2025",
          "Hausarztpraxis Dr. Albers - alle Mitarbeitenden", [
              ("Warum Datenschutz?", ["Gesundheitsdaten sind besonders geschützt",
                                      "Bußgelder bis 20 Mio. Euro oder 4 % des Jahresumsatzes",
                                      "Vertrauen der Patientinnen und Patienten"], ""),
              ("Regeln im Alltag", ["Bildschirm sperren, wenn Sie den Platz verlassen (Windows-Taste + L)",
                                    "Patientendaten nie über private E-Mail-Konten versenden",
                                    "Passwörter mit mindestens 12 Zeichen",
                                    "Am Empfang leise sprechen, keine Diagnosen nennen"], ""),
              ("Datenpanne - was tun?", ["Sofort die Datenschutzbeauftragte informieren: Kerstin Vogt, Durchwahl 214",
                                         "Die Praxis meldet die Panne innerhalb von 72 Stunden an die Aufsichtsbehörde",
                                         "Nichts löschen, nichts vertuschen"], ""),
              ("Aufbewahrungsfristen", [
                  ["Unterlage", "Frist"], ["Patientenakte", "10 Jahre"], ["Rechnungen", "8 Jahre"],
                  ["Aufzeichnungen über Strahlenbehandlung", "30 Jahre"], ["Betäubungsmittelrezepte (Teil III)", "3 Jahre"],
                  ["Dienstpläne", "2 Jahre"]], ""),
              ("Nächste Schulung", ["Donnerstag, 12. März 2026, 13:00 Uhr im Besprechungsraum",
                                    "Die Teilnahme ist Pflicht"], ""),
          ])


def slides_fr() -> None:
    _deck("bilan-festival-jazz-en-vignes-2024.pptx", "Festival Jazz en Vignes 2024 - Bilan",
          "Conseil d'administration du 9 octobre 2024", [
              ("Chiffres clés", ["12 400 entrées (2023 : 10 900)", "23 concerts sur 4 jours, du 18 au 21 juillet 2024",
                                 "140 bénévoles"], ""),
              ("Fréquentation par soirée", [
                  ["Soirée", "Tête d'affiche", "Entrées"], ["Jeudi 18", "Trio Lumière", "2 150"],
                  ["Vendredi 19", "Nadia Cole Quartet", "3 480"], ["Samedi 20", "Big Band de Mâcon", "4 020"],
                  ["Dimanche 21", "Manu Sarr", "2 750"], ["Total", "", "12 400"]], ""),
              ("Budget", ["Recettes : 286 000 €", "Dépenses : 271 500 €", "Excédent : 14 500 €",
                          "Premier poste de dépense : les cachets des artistes (118 000 €)"], ""),
              ("Points à améliorer", ["Attente au bar jusqu'à 25 minutes le samedi",
                                      "Navettes insuffisantes le samedi soir"], ""),
              ("Édition 2025", ["Du 17 au 20 juillet 2025", "Objectif : 14 000 entrées",
                                "Nouvelle scène au domaine des Tilleuls"], ""),
          ])


def main() -> None:
    from tests.heldout import make_reports

    for write in (invoice_en, invoice_de, invoice_fr, contract_en, contract_de, contract_fr, slides_en, slides_de,
                  slides_fr, make_reports.report_en, make_reports.report_de, make_reports.report_fr, make_reports.scans):
        write()


if __name__ == "__main__":
    main()
