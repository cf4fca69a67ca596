"""A chart's numbers as the table it draws: a row per category, a column per series.

A slide's chart keeps its data in the deck (the chart part's cached values); the slide read only its
title, so "Which quarter had the highest revenue?" over a deck whose numbers are a chart found nothing
to quote or compute. Its rows are now read like a slide's table. A chart python-pptx cannot read (an
XY plot without categories, a broken part) gives no rows. Pure, over python-pptx's chart objects.
"""

from __future__ import annotations

import logging
import math
from typing import Any

log = logging.getLogger(__name__)


def _cell(value: Any) -> str:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return ""
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)


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
