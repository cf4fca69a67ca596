"""A chart's numbers as the table it draws: a row per category, a column per series.

A chart keeps its data in the document (the chart part's cached values); a slide read only its title and
a Word file nothing of it, so "Which quarter had the highest revenue?" over a deck whose numbers are a chart found nothing
to quote or compute. Its rows are now read like a slide's table. A chart python-pptx cannot read (an
XY plot without categories, a broken part) gives no rows. Pure, over python-pptx's chart objects.
"""

from __future__ import annotations

import logging
import math
from dataclasses import replace
from typing import Any

from extractors.csv import render_rows
from extractors.tables import Comma, Table, never, text_table

log = logging.getLogger(__name__)


def _cell(value: Any) -> str:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return ""
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)


def part_chart(blob: bytes) -> Any:
    """A chart part of any Office document (a Word file's `word/charts/chart1.xml`), read by python-pptx's
    chart model, which is DrawingML's and the same in every Office format; None when it does not parse."""
    from pptx.chart.chart import Chart
    from pptx.oxml import parse_xml

    try:
        return Chart(parse_xml(blob), None)  # type: ignore[no-untyped-call]  # python-pptx has no hints
    except Exception:  # noqa: BLE001 - a broken part costs its chart, not the document
        log.debug("a chart part could not be parsed", exc_info=True)
        return None


def chart_title(chart: Any) -> str:
    """The chart's own title, or ""."""
    try:
        return str(chart.chart_title.text_frame.text) if chart.has_title and chart.chart_title.has_text_frame else ""
    except Exception:  # noqa: BLE001
        return ""


def chart_rows(chart: Any) -> list[list[str]]:
    """[[category label, series names...], [category, value, ...], ...]; [] when it has no series to read."""
    try:
        plots = list(chart.plots)
        series = [s for plot in plots for s in plot.series]
        if not plots or not series:
            return []
        categories = [str(c) for c in plots[0].categories]
        values = [list(s.values) for s in series]
    except Exception:  # noqa: BLE001 - python-pptx raises many kinds on charts it does not know
        log.debug("a chart's data could not be read", exc_info=True)
        return []
    length = max([len(categories), *(len(v) for v in values)])
    header = ["", *(str(s.name or f"{n}") for n, s in enumerate(series, start=1))]
    rows = [[categories[i] if i < len(categories) else "", *(_cell(v[i]) if i < len(v) else "" for v in values)]
            for i in range(length)]
    return [header, *rows]


def chart_lines(chart: Any) -> tuple[list[str], list[list[str]]]:
    """A chart as a document's text reads it (its title, then its rows tab-separated) and its rows ([] for
    none)."""
    rows = chart_rows(chart)
    return [t for t in [chart_title(chart), render_rows(rows) if rows else ""] if t], rows


def chart_table(name: str, rows: list[list[str]], source: str, comma: Comma = never) -> Table | None:
    """`text_table` over a chart's rows, whose first row names its series whatever its cells hold (a chart of
    one series has a blank and one name there, which the table finder takes for a title line)."""
    table = text_table(name, rows, source, comma)
    return replace(table, header_row=0) if table is not None else None
