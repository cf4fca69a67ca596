"""CSV and TSV files: parsed into rows and returned as one tab-separated table."""

from __future__ import annotations

import csv
import io

from extractors.base import ContentItem, Extraction
from extractors.registry import ExtractorRegistry, Source
from extractors.tables import attach, comma_language, text_table
from extractors.text import decode

MIMES = ["text/csv", "text/tab-separated-values", "application/csv"]


def extract_csv(source: Source, registry: ExtractorRegistry) -> Extraction:
    """One table item with one line per record and a tab between cells."""
    text, encoding = decode(source.data)
    text = text.lstrip("\ufeff")
    delimiter = "\t" if source.mime == "text/tab-separated-values" else _sniff(text)
    rows = list(csv.reader(io.StringIO(text, newline=""), delimiter=delimiter))
    # Where the cells show no decimals, a ";" between them says what the language does: spreadsheets
    # whose language writes "4,25" separate a CSV's cells with ";".
    comma = (lambda: True) if delimiter == ";" else comma_language(text)
    table = text_table("table", rows, "table", comma, delimiter=delimiter)
    item = ContentItem(
        sequence_nr=1,
        name="table",
        ext="tsv",
        content_type="text/tab-separated-values",
        data=render_rows(rows),
        metadata=attach({"extractor": "csv", "encoding": encoding, "rows": len(rows), "ocr": False},
                        [table] if table else []),
    )
    return Extraction(mime=source.mime, status="ok", items=[item])


def render_rows(rows: list[list[str]]) -> str:
    """Tab-separated lines; tabs and line breaks inside a cell become spaces to keep the grid."""
    lines = []
    for row in rows:
        cells = [" ".join(str(cell).split()) for cell in row]
        while cells and not cells[-1]:
            cells.pop()
        lines.append("\t".join(cells))
    while lines and not lines[-1]:
        lines.pop()
    return "\n".join(lines)


def _sniff(text: str) -> str:
    try:
        return csv.Sniffer().sniff(text[:8192], delimiters=",;\t|").delimiter
    except csv.Error:
        return ","
