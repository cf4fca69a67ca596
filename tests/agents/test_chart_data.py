"""A deck or a Word report whose numbers are a chart is answered from them: the slide read only the
chart's title and the Word file nothing of it, so "Which quarter had the highest revenue?" found nothing to
quote or compute. The chart's data is read as the table it draws (`extractors.charts`), and the offline
answer compiles it like a table (decks and reports of our own, en/de/fr; a chart of one series too)."""

from __future__ import annotations

import io

import docx
import pytest
from docx.opc.constants import RELATIONSHIP_TYPE
from docx.opc.packuri import PackURI
from docx.opc.part import Part
from docx.oxml import parse_xml
from pptx import Presentation
from pptx.chart.data import CategoryChartData
from pptx.chart.xmlwriter import ChartXmlWriter
from pptx.enum.chart import XL_CHART_TYPE
from pptx.util import Inches

from agents.base import DocumentText
from extractors import extract
from tests.agents.conftest import offline_answer

DECKS = {
    "en": ("Revenue 2024", "Revenue and costs by quarter", ("Revenue (k$)", "Costs (k$)"),
           "Which quarter had the highest revenue?", "What were the costs in Q2?"),
    "de": ("Umsatz 2024", "Umsatz und Kosten je Quartal", ("Umsatz (T€)", "Kosten (T€)"),
           "In welchem Quartal war der Umsatz am höchsten?", "Wie hoch waren die Kosten in Q2?"),
    "fr": ("Chiffre d'affaires 2024", "Chiffre d'affaires et coûts par trimestre", ("Chiffre d'affaires (k€)", "Coûts (k€)"),
           "Quel trimestre a eu le chiffre d'affaires le plus élevé ?", "Quels étaient les coûts au Q2 ?"),
}


def _deck(language: str) -> DocumentText:
    title, chart_title, (revenue, costs), _, _ = DECKS[language]
    deck = Presentation()
    slide = deck.slides.add_slide(deck.slide_layouts[5])
    slide.shapes.title.text = title
    data = CategoryChartData()
    data.categories = ["Q1", "Q2", "Q3", "Q4"]
    data.add_series(revenue, (120.5, 98, 143, 110))
    data.add_series(costs, (80, 85, 90, 70))
    frame = slide.shapes.add_chart(XL_CHART_TYPE.COLUMN_CLUSTERED, Inches(1), Inches(1.5), Inches(6), Inches(4), data)
    frame.chart.has_title = True
    frame.chart.chart_title.text_frame.text = chart_title
    out = io.BytesIO()
    deck.save(out)
    name = f"deck-{language}.pptx"
    extraction = extract(out.getvalue(), name)
    return DocumentText.of(name, "pptx", extraction.mime, len(out.getvalue()), extraction.items)


def test_a_chart_is_read_as_the_table_it_draws():
    doc = _deck("en")
    assert "Revenue and costs by quarter" in doc.text
    (table,) = doc.tables
    assert [row[:2] for row in table.rows] == [[None, "Revenue (k$)"], ["Q1", 120.5], ["Q2", 98], ["Q3", 143],
                                               ["Q4", 110]]


async def _answer(question: str, doc: DocumentText, language: str) -> str:
    return await offline_answer(question, [doc], language)


@pytest.mark.parametrize("language", ["en", "de", "fr"])
async def test_the_highest_and_a_cell_of_a_chart_are_answered(language):
    doc = _deck(language)
    _, _, _, highest, cell = DECKS[language]
    best = await _answer(highest, doc, language)
    assert "Q3" in best and "143" in best, best
    costs = await _answer(cell, doc, language)
    assert "85" in costs, costs


_INLINE = ('<w:drawing xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main" '
           'xmlns:wp="http://schemas.openxmlformats.org/drawingml/2006/wordprocessingDrawing" '
           'xmlns:a="http://schemas.openxmlformats.org/drawingml/2006/main" '
           'xmlns:c="http://schemas.openxmlformats.org/drawingml/2006/chart" '
           'xmlns:r="http://schemas.openxmlformats.org/officeDocument/2006/relationships"><wp:inline>'
           '<wp:extent cx="5486400" cy="3200400"/><wp:docPr id="1" name="Chart 1"/><a:graphic>'
           '<a:graphicData uri="http://schemas.openxmlformats.org/drawingml/2006/chart"><c:chart r:id="{rid}"/>'
           '</a:graphicData></a:graphic></wp:inline></w:drawing>')


def _report(language: str) -> DocumentText:
    """A Word report whose quarterly revenue is a chart of one series, as Word embeds one."""
    title, caption, (revenue, _), _, _ = DECKS[language]
    data = CategoryChartData()
    data.categories = ["Q1", "Q2", "Q3", "Q4"]
    data.add_series(revenue, (120.5, 98, 143, 110))
    document = docx.Document()
    document.add_paragraph(title)
    document.add_paragraph(caption)
    part = Part(PackURI("/word/charts/chart1.xml"), "application/vnd.openxmlformats-officedocument.drawingml.chart+xml",
                ChartXmlWriter(XL_CHART_TYPE.COLUMN_CLUSTERED, data).xml.encode(), document.part.package)
    rid = document.part.relate_to(part, RELATIONSHIP_TYPE.CHART)
    document.add_paragraph().add_run()._r.append(parse_xml(_INLINE.format(rid=rid)))
    out = io.BytesIO()
    document.save(out)
    name = f"report-{language}.docx"
    extraction = extract(out.getvalue(), name)
    return DocumentText.of(name, "docx", extraction.mime, len(out.getvalue()), extraction.items)


REVENUE_IN_Q2 = {"en": "What was the revenue in Q2?", "de": "Wie hoch war der Umsatz in Q2?",
                 "fr": "Quel était le chiffre d'affaires au Q2 ?"}


@pytest.mark.parametrize("language", ["en", "de", "fr"])
async def test_a_word_reports_chart_is_read_and_answered(language):
    doc = _report(language)
    (table,) = doc.tables
    assert table.rows[2][:2] == ["Q2", 98]
    _, _, _, highest, _ = DECKS[language]
    best = await _answer(highest, doc, language)
    assert "Q3" in best and "143" in best, best
    assert "98" in await _answer(REVENUE_IN_Q2[language], doc, language)
