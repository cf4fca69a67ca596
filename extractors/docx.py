"""Word documents: body in document order, then headers, footers, notes and comments."""

from __future__ import annotations

import io
import re
import zipfile
from collections.abc import Iterator

import docx
from docx.document import Document as DocxDocument
from docx.opc.exceptions import PackageNotFoundError
from docx.opc.part import Part
from lxml import etree

from extractors.base import ContentItem, Extraction
from extractors.charts import chart_lines, chart_table, part_chart
from extractors.csv import render_rows
from extractors.registry import ExtractorRegistry, Source, failure
from extractors.tables import Comma, Table, attach, comma_language, text_table

MIMES = ["application/vnd.openxmlformats-officedocument.wordprocessingml.document"]

_W = "{http://schemas.openxmlformats.org/wordprocessingml/2006/main}"
_MC_FALLBACK = "{http://schemas.openxmlformats.org/markup-compatibility/2006}Fallback"
_CHART = "{http://schemas.openxmlformats.org/drawingml/2006/chart}chart"
_R_ID = "{http://schemas.openxmlformats.org/officeDocument/2006/relationships}id"
# Content controls and custom XML wrap blocks, rows or cells at any level; their content counts.
_WRAPPERS = {_W + "sdt", _W + "customXml", _W + "smartTag"}
_SKIPPED = {_W + "pPr", _W + "rPr", _W + "sdtPr", _W + "tblPr", _W + "trPr", _W + "tcPr", _W + "delText", _W + "instrText", _MC_FALLBACK}
_NOTE_SEPARATORS = {"separator", "continuationSeparator", "continuationNotice"}
_PARTS = (  # (relationship type suffix, item name, element holding one note or comment)
    ("/footnotes", "footnotes", _W + "footnote"),
    ("/endnotes", "endnotes", _W + "endnote"),
    ("/comments", "comments", _W + "comment"),
)


def extract_docx(source: Source, registry: ExtractorRegistry) -> Extraction:
    """The body text with its tables, then one item each for headers/footers, notes and comments."""
    try:
        document = docx.Document(io.BytesIO(source.data))
    except (PackageNotFoundError, zipfile.BadZipFile, KeyError, ValueError, etree.XMLSyntaxError) as error:
        return failure(source.mime, "corrupt", source.name, f"not a readable Word document ({error})")
    body = document.element.body
    charts = _charts(document, body)
    items = [_item("body", "\n".join([*blocks(body), *(text for text, _ in charts)]), "body")]
    comma = comma_language(items[0].data)
    attach(items[0].metadata, _tables(body, comma) + [t for n, (_, rows) in enumerate(charts, start=1)
                                                       if (t := chart_table(f"chart {n}", rows, "body", comma))])
    headers: list[str] = []
    footers: list[str] = []
    notes: dict[str, list[str]] = {name: [] for _, name, _ in _PARTS}
    for rel in document.part.rels.values():
        if rel.is_external:
            continue
        kind = rel.reltype.rsplit("/", 1)[-1]
        if kind in ("header", "footer"):
            root = _parse(rel.target_part)
            (headers if kind == "header" else footers).append("\n".join(blocks(root)))
        for suffix, name, tag in _PARTS:
            if rel.reltype.endswith(suffix):
                notes[name].extend(_notes(_parse(rel.target_part), tag))
    if any(text.strip() for text in headers + footers):
        text = "\n".join(t for t in headers + footers if t.strip())
        items.append(_item("headers and footers", text, "header/footer"))
    for name, texts in notes.items():
        if texts:
            items.append(_item(name, "\n".join(texts), name))
    images = sum(1 for rel in document.part.rels.values() if rel.reltype.endswith("/image"))
    items[0].metadata["images"] = images
    items[0].metadata["headings"] = _headings(document, body)
    return Extraction(mime=source.mime, status="ok", items=items)


def blocks(container: etree._Element) -> list[str]:
    """Lines of the paragraphs and tables inside `container`, in document order."""
    lines: list[str] = []
    for child in container:
        tag = child.tag
        if tag == _W + "p":
            lines.extend(_paragraph(child))
        elif tag == _W + "tbl":
            lines.append(_table(child))
        elif tag in _WRAPPERS:
            content = child.find(_W + "sdtContent") if tag == _W + "sdt" else child
            if content is not None:
                lines.extend(blocks(content))
    return lines


def _paragraph(paragraph: etree._Element) -> list[str]:
    """The paragraph's line followed by the lines of any text boxes anchored in it."""
    parts: list[str] = []
    boxes: list[str] = []
    _runs(paragraph, parts, boxes)
    return ["".join(parts), *boxes]


def _runs(element: etree._Element, parts: list[str], boxes: list[str]) -> None:
    for child in element:
        tag = child.tag
        if tag in _SKIPPED or not isinstance(tag, str):
            # mc:Fallback repeats the text box of mc:Choice for old readers; reading both doubles it.
            continue
        if tag == _W + "t":
            parts.append(child.text or "")
        elif tag == _W + "tab":
            parts.append("\t")
        elif tag in (_W + "br", _W + "cr"):
            parts.append("\n")
        elif tag == _W + "noBreakHyphen":
            parts.append("-")
        elif tag == _W + "txbxContent":
            boxes.extend(blocks(child))
        else:
            _runs(child, parts, boxes)


def _table(table: etree._Element) -> str:
    """Tab-separated rows; a merged cell is read once, where the merge starts."""
    return render_rows(_cells(table))


def _cells(table: etree._Element) -> list[list[str]]:
    """The table's grid: a cell spanning columns is followed by empty cells, a vertical merge's
    continuation is empty, so every row keeps the table's columns."""
    rows = []
    for row in _children(table, _W + "tr"):
        cells: list[str] = []
        for cell in _children(row, _W + "tc"):
            span = cell.find(f"{_W}tcPr/{_W}gridSpan")
            extra = int(span.get(_W + "val", "1")) - 1 if span is not None and span.get(_W + "val", "1").isdigit() else 0
            merge = cell.find(f"{_W}tcPr/{_W}vMerge")
            if merge is not None and merge.get(_W + "val", "continue") == "continue":
                cells.append("")
            else:
                cells.append(" ".join(" ".join(blocks(cell)).split()))
            cells.extend([""] * extra)
        rows.append(cells)
    return rows


def _charts(document: DocxDocument, body: etree._Element) -> list[tuple[str, list[list[str]]]]:
    """The body's charts in order: (their title and rows as text, their rows), after the body's text (where
    each stands is not kept: a chart is a drawing in a run)."""
    found = []
    for ref in body.iter(_CHART):
        part = document.part.related_parts.get(ref.get(_R_ID, ""))
        chart = part_chart(part.blob) if part is not None else None
        lines, rows = chart_lines(chart) if chart is not None else ([], [])
        if rows:
            found.append(("\n".join(lines), rows))
    return found


def _tables(body: etree._Element, comma: Comma) -> list[Table]:
    """The body's tables (not those nested in another table's cells), as typed cells (numbers read the
    way the table writes them, or else as the document's language does, `comma`: `text_table`)."""
    found: list[Table] = []
    for element in body.iter(_W + "tbl"):
        if any(parent.tag == _W + "tbl" for parent in element.iterancestors()):
            continue
        table = text_table(f"table {len(found) + 1}", _cells(element), "body", comma)
        if table is not None:
            found.append(table)
    return found


def _children(element: etree._Element, tag: str) -> Iterator[etree._Element]:
    """Direct children with `tag`, looking through content controls wrapped around them."""
    for child in element:
        if child.tag == tag:
            yield child
        elif child.tag in _WRAPPERS:
            content = child.find(_W + "sdtContent") if child.tag == _W + "sdt" else child
            if content is not None:
                yield from _children(content, tag)


def _headings(document: DocxDocument, body: etree._Element) -> list[str]:
    """The body's headings in order: paragraphs whose style is a heading ("heading 1".."heading 9";
    styles.xml keeps the built-in names in English whatever the language Word shows them in)."""
    heading_ids = set()
    for style in document.styles.element.iter(_W + "style"):
        name = style.find(_W + "name")
        label = (name.get(_W + "val", "") if name is not None else "").casefold()
        if label.startswith("heading ") or label == "title":
            heading_ids.add(style.get(_W + "styleId"))
    found = []
    for paragraph in body.iter(_W + "p"):
        style = paragraph.find(f"{_W}pPr/{_W}pStyle")
        if style is not None and style.get(_W + "val") in heading_ids:
            text = " ".join("".join(_paragraph(paragraph)[:1]).split())
            if text:
                found.append(text)
    return found


def _notes(root: etree._Element, tag: str) -> list[str]:
    texts = []
    for note in root.iter(tag):
        if note.get(_W + "type") in _NOTE_SEPARATORS:
            continue
        text = "\n".join(line for line in blocks(note) if line.strip())
        author = note.get(_W + "author")
        if text:
            texts.append(f"{author}: {text}" if author else text)
    return texts


def _parse(part: Part) -> etree._Element:
    element = getattr(part, "element", None)
    return element if element is not None else etree.fromstring(part.blob)


def _item(name: str, text: str, section: str) -> ContentItem:
    return ContentItem(
        sequence_nr=1,
        name=name,
        ext="txt",
        content_type="text/plain",
        data=re.sub(r"\n{3,}", "\n\n", text).strip("\n"),
        metadata={"extractor": "python-docx", "section": section, "ocr": False},
    )
