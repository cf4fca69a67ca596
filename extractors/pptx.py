"""PowerPoint presentations: one item per slide with all shape text and the speaker notes."""

from __future__ import annotations

import io
import zipfile

import pptx
from lxml import etree
from pptx.exc import PackageNotFoundError
from pptx.shapes.autoshape import Shape
from pptx.shapes.base import BaseShape
from pptx.shapes.graphfrm import GraphicFrame
from pptx.shapes.group import GroupShape

from extractors.base import ContentItem, Extraction
from extractors.charts import chart_lines, chart_table
from extractors.csv import render_rows
from extractors.registry import ExtractorRegistry, Source, failure
from extractors.tables import attach, comma_language, text_tables

MIMES = ["application/vnd.openxmlformats-officedocument.presentationml.presentation"]

_A_T = "{http://schemas.openxmlformats.org/drawingml/2006/main}t"
_MC_FALLBACK = "{http://schemas.openxmlformats.org/markup-compatibility/2006}Fallback"


def extract_pptx(source: Source, registry: ExtractorRegistry) -> Extraction:
    """Slides in order; each item holds the slide's shape text, then its notes."""
    try:
        presentation = pptx.Presentation(io.BytesIO(source.data))
    except (PackageNotFoundError, zipfile.BadZipFile, KeyError, ValueError, etree.XMLSyntaxError) as error:
        return failure(source.mime, "corrupt", source.name, f"not a readable presentation ({error})")
    items = []
    for number, slide in enumerate(presentation.slides, start=1):
        lines: list[str] = []
        grids: list[list[list[str]]] = []
        charts: list[list[list[str]]] = []
        for shape in slide.shapes:
            lines.extend(_shape_lines(shape, grids, charts))
        notes = ""
        if slide.has_notes_slide and slide.notes_slide.notes_text_frame is not None:
            notes = slide.notes_slide.notes_text_frame.text.strip()
        text = "\n".join(line for line in lines if line.strip())
        if notes:
            text += f"\n\nNotes:\n{notes}"
        comma = comma_language(text)
        tables = text_tables(grids, f"slide {number} ", f"slide {number}", comma) + [
            t for n, rows in enumerate(charts, start=1)
            if (t := chart_table(f"slide {number} chart {n}", rows, f"slide {number}", comma))]
        items.append(
            ContentItem(
                sequence_nr=number,
                name=f"slide {number}",
                ext="txt",
                content_type="text/plain",
                data=text.strip("\n"),
                metadata=attach({"extractor": "python-pptx", "slide": number, "has_notes": bool(notes), "ocr": False},
                                tables),
            )
        )
    if not items:
        return failure(source.mime, "corrupt", source.name, "the presentation has no slides")
    return Extraction(mime=source.mime, status="ok", items=items)


def _shape_lines(shape: BaseShape, grids: list[list[list[str]]], charts: list[list[list[str]]]) -> list[str]:
    """Text of one shape; groups are walked, tables and charts become tab-separated rows (and their cells
    `grids` and `charts`)."""
    if isinstance(shape, GroupShape):
        return [line for inner in shape.shapes for line in _shape_lines(inner, grids, charts)]
    if isinstance(shape, GraphicFrame) and shape.has_table:  # only a graphic frame holds a table or a chart
        rows = [[cell.text if not cell.is_spanned else "" for cell in row.cells] for row in shape.table.rows]
        grids.append(rows)
        return [render_rows(rows)]
    if isinstance(shape, Shape) and shape.has_text_frame:  # only an autoshape (<p:sp>) has a text frame
        return [shape.text_frame.text]
    if isinstance(shape, GraphicFrame) and shape.has_chart:
        chart = shape.chart
        lines, rows = chart_lines(chart)
        if rows:
            charts.append(rows)
        return lines
    # Other shapes (e.g. WordArt inside mc:AlternateContent) may still hold text runs.
    return ["".join(_runs(shape.element))] if shape.element is not None else []


def _runs(element: etree._Element) -> list[str]:
    texts = []
    for child in element:
        if child.tag == _MC_FALLBACK:
            continue
        if child.tag == _A_T:
            texts.append(child.text or "")
        elif isinstance(child.tag, str):
            texts.extend(_runs(child))
    return texts
