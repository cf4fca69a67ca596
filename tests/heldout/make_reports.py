"""The second held-out set's long reports (PDF, many pages, unruled tables among the prose) and scanned
pages (image-only PDFs). Run by make_documents.py."""

from __future__ import annotations

import random

from PIL import Image, ImageDraw, ImageFilter, ImageFont

from tests.heldout.make_documents import FONT, HERE, filler, pdf

TRANSIT = [
    "The authority worked closely with the city councils along its routes throughout the year.",
    "Passenger feedback was gathered through surveys, the customer panel and the online form.",
    "Timetables were reviewed in spring and again in autumn to match changing travel patterns.",
    "Staff training focused on customer service, accessibility and safe driving in poor weather.",
    "The board reviewed progress against the corporate plan at each of its quarterly meetings.",
    "Roadworks in the city centre disrupted several routes during the summer months.",
    "Contactless payment is now accepted on every vehicle and at every ticket machine.",
    "The authority continued to invest in shelters, real-time displays and step-free access.",
    "Partnership work with the regional rail operator improved connections at interchange stations.",
    "School services were adjusted after consultation with head teachers and parents.",
    "Maintenance schedules were revised to reduce the time vehicles spend out of service.",
    "Community groups were consulted on proposed changes to evening and weekend services.",
]
STADTWERKE = [
    "Die Stadtwerke haben auch in diesem Jahr eng mit der Stadtverwaltung zusammengearbeitet.",
    "Die Modernisierung der Ortsnetzstationen wurde planmäßig fortgesetzt.",
    "Der Kundenservice im Bürgerbüro war an fünf Tagen in der Woche geöffnet.",
    "Die Beschaffung von Strom und Gas erfolgte weiterhin gestaffelt über mehrere Jahre.",
    "Die Auszubildenden haben ein eigenes Projekt zur Energieberatung umgesetzt.",
    "Die Digitalisierung der Verbrauchsabrechnung wurde weiter vorangetrieben.",
    "Der Aufsichtsrat hat sich in vier Sitzungen mit der Entwicklung des Unternehmens befasst.",
    "Baumaßnahmen im Leitungsnetz wurden mit den Straßenbauarbeiten der Stadt abgestimmt.",
    "Die Stadtwerke unterstützen weiterhin Vereine und Veranstaltungen in der Region.",
    "Die Arbeitssicherheit hatte in allen Bereichen des Unternehmens hohe Priorität.",
    "Die Kundinnen und Kunden nutzen zunehmend das Online-Portal für ihre Anliegen.",
]
AIR = [
    "Les mesures sont réalisées en continu par les stations fixes du réseau de surveillance.",
    "Les données font l'objet d'une validation technique avant leur publication.",
    "Les conditions météorologiques influencent fortement les concentrations observées.",
    "L'observatoire informe la population lors des épisodes de pollution.",
    "Le trafic routier reste la principale source d'oxydes d'azote dans l'agglomération.",
    "Le chauffage au bois contribue aux particules fines pendant la saison froide.",
    "Les résultats sont comparés aux valeurs limites réglementaires et aux recommandations sanitaires.",
    "Des campagnes de mesure temporaires complètent le dispositif permanent.",
    "Les collectivités sont associées à l'élaboration des plans d'action.",
    "Les émissions industrielles ont poursuivi leur baisse grâce aux contrôles renforcés.",
    "Le public peut consulter les indices de qualité de l'air chaque jour en ligne.",
]


def report_en() -> None:
    pdf("coastal-transit-annual-report-2024.pdf", [
        "! Coastal Transit Authority - Annual Report 2024",
        "# 1. Chair's foreword",
        *filler(10, TRANSIT, 4),
        "Ridership returned to 96% of its 2019 level, and for the first time since then every line carried "
        "more passengers than the year before.",
        *filler(11, TRANSIT, 4),
        "PAGE",
        "# 2. Ridership",
        *filler(12, TRANSIT, 3),
        "Total boardings were 48.3 million in 2024, against 44.9 million in 2023. Boardings per line:",
        [["Line", "Route", "Boardings 2023 (million)", "Boardings 2024 (million)"],
         ["Line 1", "Harbour - University", "9.8", "10.6"], ["Line 2", "Airport Express", "4.1", "5.0"],
         ["Line 3", "Old Town Circle", "6.2", "6.4"], ["Line 4", "Northern Suburbs", "11.5", "12.1"],
         ["Line 5", "Coastal Road", "7.9", "8.3"], ["Line 6", "Industrial Park", "5.4", "5.9"]],
        *filler(13, TRANSIT, 5),
        "PAGE",
        "# 3. Punctuality",
        *filler(14, TRANSIT, 3),
        "A bus is on time when it leaves a timing point no more than one minute early or five minutes late. "
        "On-time rates by depot:",
        [["Depot", "Buses", "On-time rate"], ["Westfield", "142", "91.4%"], ["Marsh Lane", "98", "87.9%"],
         ["Hillcrest", "120", "93.2%"], ["Portside", "76", "84.6%"]],
        *filler(15, TRANSIT, 5),
        "PAGE",
        "# 4. Fleet and environment",
        *filler(16, TRANSIT, 3),
        "By the end of 2024 the fleet included 58 electric buses, up from 31 a year earlier. Carbon dioxide "
        "emissions fell by 14%. The authority aims to run an all-electric fleet by 2032.",
        *filler(17, TRANSIT, 5),
        "PAGE",
        "# 5. Finances",
        *filler(18, TRANSIT, 2),
        "Total revenue was GBP 212.4 million: fare income GBP 131.7 million, public subsidy GBP 68.9 million "
        "and other income GBP 11.8 million. Operating costs were GBP 205.1 million, leaving a surplus of "
        "GBP 7.3 million, which is reinvested in the network.",
        *filler(19, TRANSIT, 5),
        "PAGE",
        "# 6. Safety",
        *filler(20, TRANSIT, 3),
        "There were 3 serious injuries to passengers in 2024 (2023: 5). Staff reported 41 assaults, and body "
        "cameras are being issued to all drivers.",
        *filler(21, TRANSIT, 4),
        "# 7. Customers",
        "Customer satisfaction was 78%, below the target of 80%. The most common complaint was crowding on "
        "Line 4 at peak times.",
        *filler(22, TRANSIT, 4),
        "PAGE",
        "# 8. Outlook for 2025",
        *filler(23, TRANSIT, 3),
        "The new Line 7 (Riverside) will open in September 2025. Fares are frozen until March 2026.",
        *filler(24, TRANSIT, 4),
    ])


def report_de() -> None:
    pdf("geschaeftsbericht-stadtwerke-talheim-2024.pdf", [
        "! Stadtwerke Talheim GmbH - Geschäftsbericht 2024",
        "# Vorwort der Geschäftsführung",
        *filler(30, STADTWERKE, 4),
        "Dr. Matthias Renner, Geschäftsführer",
        "PAGE",
        "# Stromversorgung",
        *filler(31, STADTWERKE, 3),
        "Der Stromabsatz stieg auf 412 GWh (2023: 398 GWh). Die Stadtwerke versorgen 61.800 Kundinnen und "
        "Kunden mit Strom. Stromabsatz nach Kundengruppen:",
        [["Kundengruppe", "2023 (GWh)", "2024 (GWh)"], ["Haushalte", "142", "147"], ["Gewerbe", "118", "121"],
         ["Industrie", "121", "125"], ["Öffentliche Einrichtungen", "17", "19"]],
        *filler(32, STADTWERKE, 4),
        "PAGE",
        "# Versorgungssicherheit",
        *filler(33, STADTWERKE, 3),
        "Stromausfälle nach Ortsteilen im Jahr 2024:",
        [["Ortsteil", "Stromausfälle", "Durchschnittliche Dauer (Minuten)"], ["Altstadt", "4", "38"],
         ["Neuberg", "9", "52"], ["Weidach", "6", "71"], ["Sonnenhalde", "2", "25"]],
        *filler(34, STADTWERKE, 4),
        "PAGE",
        "# Wasserversorgung",
        *filler(35, STADTWERKE, 3),
        "Es wurden 5,9 Millionen Kubikmeter Trinkwasser abgegeben. Die Wasserverluste im Netz lagen bei 7,8 %.",
        *filler(36, STADTWERKE, 4),
        "PAGE",
        "# Finanzen",
        *filler(37, STADTWERKE, 2),
        "Die Umsatzerlöse betrugen 186,4 Mio. Euro, der Jahresüberschuss 9,2 Mio. Euro. Investiert wurden "
        "24,7 Mio. Euro, davon 11,3 Mio. Euro in die Netze.",
        *filler(38, STADTWERKE, 4),
        "# Personal",
        "Zum Jahresende beschäftigten die Stadtwerke 389 Mitarbeitende, darunter 21 Auszubildende.",
        *filler(39, STADTWERKE, 3),
        "PAGE",
        "# Ausblick",
        *filler(40, STADTWERKE, 2),
        "Im Frühjahr 2025 beginnt der Ausbau der Fernwärme in Neuberg. Bis 2027 sollen 30.000 intelligente "
        "Stromzähler eingebaut sein.",
        *filler(41, STADTWERKE, 3),
    ])


def report_fr() -> None:
    pdf("bilan-qualite-air-valmont-2024.pdf", [
        "! Observatoire régional de l'air - Bilan 2024 de la qualité de l'air - Agglomération de Valmont",
        "# Synthèse",
        *filler(50, AIR, 4),
        "PAGE",
        "# Le réseau de mesure",
        *filler(51, AIR, 4),
        "# Particules PM10",
        *filler(52, AIR, 2),
        "Moyennes annuelles et jours de dépassement du seuil journalier de 50 µg/m³ par station :",
        [["Station", "Type", "PM10 (µg/m³)", "Jours de dépassement"],
         ["Valmont-Centre", "urbaine", "21", "6"], ["Gare routière", "trafic", "29", "14"],
         ["Parc des Sports", "fond urbain", "17", "2"], ["Zone portuaire", "industrielle", "26", "11"],
         ["Les Vignes", "périurbaine", "14", "0"]],
        *filler(53, AIR, 4),
        "PAGE",
        "# Dioxyde d'azote",
        *filler(54, AIR, 3),
        "La moyenne annuelle de dioxyde d'azote à la station trafic est de 34 µg/m³, sous la valeur limite de "
        "40 µg/m³.",
        *filler(55, AIR, 3),
        "PAGE",
        "# Ozone",
        *filler(56, AIR, 3),
        "Le seuil d'information pour l'ozone a été dépassé pendant 19 jours au cours de l'été. L'épisode le "
        "plus long a duré du 7 au 10 août 2024.",
        *filler(57, AIR, 4),
        "PAGE",
        "# Perspectives",
        *filler(58, AIR, 3),
        "La zone à faibles émissions sera étendue à toute l'agglomération le 1er janvier 2026.",
        *filler(59, AIR, 3),
    ])


def scan(name: str, lines: list[str], seed: int) -> None:
    """A page as a scanner gives it: text drawn into a greyish image, turned a little and blurred,
    saved as a PDF that holds only that image."""
    rng = random.Random(seed)
    page = Image.new("L", (1654, 2339), 246)  # A4 at 200 dpi
    draw = ImageDraw.Draw(page)
    big, font = ImageFont.truetype(str(FONT), 44), ImageFont.truetype(str(FONT), 32)
    y = 170
    for n, line in enumerate(lines):
        draw.text((150, y), line, fill=rng.randint(20, 50), font=big if n == 0 else font)
        y += 80 if n == 0 else 50
    for _ in range(1500):  # dust
        x, yy = rng.randrange(1654), rng.randrange(2339)
        draw.point((x, yy), fill=rng.randint(120, 200))
    page = page.rotate(0.6, fillcolor=246, resample=Image.BICUBIC).filter(ImageFilter.GaussianBlur(0.7))
    page.save(HERE / name, "PDF", resolution=200.0)


def scans() -> None:
    scan("scan-gas-safety-record-elm-grove.pdf", [
        "GAS SAFETY INSPECTION RECORD", "",
        "Property: Flat 3, 27 Elm Grove, Reading RG1 5PT", "Landlord: Mr Daniel Osei",
        "Date of inspection: 9 January 2025", "Engineer: Sarah Whitcombe, Gas Safe ID 604118", "",
        "Appliance: Vaillant ecoTEC plus boiler, kitchen cupboard", "Operating pressure: 20 mbar",
        "Flue flow test: pass", "Carbon monoxide alarm: present and tested", "",
        "Result: SAFE TO USE", "Remedial work: replace the cracked condensate pipe within 28 days", "",
        "Next inspection due by: 8 January 2026",
    ], 1)
    scan("scan-abfallgebuehrenbescheid-2025.pdf", [
        "Stadt Talheim - Fachbereich Umwelt", "",
        "Gebührenbescheid Abfallentsorgung 2025", "Kassenzeichen: 4711-2025-0385",
        "Grundstück: Birkenweg 12, 74388 Talheim", "",
        "Restmülltonne 120 Liter, Leerung alle 14 Tage: 186,00 Euro", "Biotonne 60 Liter: 54,00 Euro",
        "Papiertonne 240 Liter: 0,00 Euro", "Gesamtbetrag: 240,00 Euro", "",
        "Der Betrag ist in zwei Raten fällig:", "120,00 Euro zum 15. Februar 2025",
        "120,00 Euro zum 15. August 2025", "",
        "Gegen diesen Bescheid kann innerhalb eines Monats nach Bekanntgabe",
        "Widerspruch erhoben werden.",
    ], 2)
    scan("scan-convocation-ag-les-glycines.pdf", [
        "Syndic Gestimmo - Résidence Les Glycines", "",
        "CONVOCATION À L'ASSEMBLÉE GÉNÉRALE ORDINAIRE", "8 avenue Foch, 33000 Bordeaux", "",
        "Date : mardi 24 juin 2025 à 18 h 30", "Lieu : salle paroissiale, 3 rue Sainte-Catherine", "",
        "Ordre du jour :", "1. Approbation des comptes 2024 (dépenses : 48 260 euros)",
        "2. Budget prévisionnel 2025 : 51 000 euros",
        "3. Ravalement de la façade : devis de l'entreprise Batipro, 126 400 euros",
        "4. Remplacement de l'interphone", "5. Élection du conseil syndical", "",
        "Vote par correspondance : renvoyer le formulaire avant le 17 juin 2025.",
    ], 3)
