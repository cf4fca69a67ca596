"""HTML pages: readable text without markup, scripts or styles."""

from __future__ import annotations

import re
from html.parser import HTMLParser

from extractors.base import ContentItem, Extraction
from extractors.registry import ExtractorRegistry, Source
from extractors.tables import attach, comma_language, text_tables
from extractors.text import decode

MIMES = ["text/html", "application/xhtml+xml"]

_META_CHARSET = re.compile(rb"<meta[^>]+charset=[\"']?([A-Za-z0-9._-]+)", re.IGNORECASE)
_SKIPPED = {"script", "style", "noscript", "template", "head", "svg"}
_BLOCKS = {
    "p", "div", "br", "li", "ul", "ol", "tr", "table", "section", "article", "header", "footer",
    "h1", "h2", "h3", "h4", "h5", "h6", "blockquote", "pre", "hr", "title", "dd", "dt", "form",
}
_CELLS = {"td", "th"}
_HEADINGS = {"h1", "h2", "h3", "h4", "h5", "h6"}


class _TextCollector(HTMLParser):
    """Keeps text, turns block elements into line breaks and table cells into tabs."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.parts: list[str] = []
        self.title = ""
        self._skip_depth = 0
        self._in_title = False
        self.grids: list[list[list[str | None]]] = []  # each table's cells on its grid, in order
        self.headings: list[str] = []  # h1-h6 texts, in order: the sections of the page
        self._heading: list[str] | None = None
        # Open tables, innermost last: rows of (text parts, colspan, rowspan) cells.
        self._open: list[list[list[tuple[list[str], int, int]]]] = []

    def _span(self, attrs: list[tuple[str, str | None]], name: str) -> int:
        value = dict(attrs).get(name) or "1"
        return max(1, min(int(value), 100)) if value.strip().isdigit() else 1

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag == "title":
            self._in_title = True
        elif tag in _SKIPPED:
            self._skip_depth += 1
        if tag in _HEADINGS and not self._skip_depth:
            self._heading = []
        if tag in _BLOCKS:
            self.parts.append("\n")
        elif tag in _CELLS:
            self.parts.append("\t")
        if self._skip_depth:
            return
        if tag == "table":
            self._open.append([])
        elif tag == "tr" and self._open:
            self._open[-1].append([])
        elif tag in _CELLS and self._open:
            if not self._open[-1]:
                self._open[-1].append([])
            self._open[-1][-1].append(([], self._span(attrs, "colspan"), self._span(attrs, "rowspan")))

    def handle_endtag(self, tag: str) -> None:
        if tag == "table" and self._open and not self._skip_depth:
            self.grids.append(_grid(self._open.pop()))
        if tag in _HEADINGS and self._heading is not None:
            heading = " ".join("".join(self._heading).split())
            if heading:
                self.headings.append(heading)
            self._heading = None
        if tag == "title":
            self._in_title = False
        elif tag in _SKIPPED and self._skip_depth:
            self._skip_depth -= 1
        if tag in _BLOCKS:
            self.parts.append("\n")

    def handle_data(self, data: str) -> None:
        if self._in_title:
            self.title += data
        elif not self._skip_depth:
            self.parts.append(data)
            if self._heading is not None:
                self._heading.append(data)
            if self._open and self._open[-1] and self._open[-1][-1]:
                self._open[-1][-1][-1][0].append(data)


def _grid(rows: list[list[tuple[list[str], int, int]]]) -> list[list[str | None]]:
    """Cells laid out on the table's grid: a spanned position stays empty, so columns line up."""
    grid: list[list[str | None]] = []
    taken: set[tuple[int, int]] = set()  # positions covered by a rowspan from above
    for r, row in enumerate(rows):
        out: list[str | None] = []
        c = 0
        for parts, colspan, rowspan in row:
            while (r, c) in taken:
                out.append(None)
                c += 1
            out.append("".join(parts))
            out.extend([None] * (colspan - 1))
            for dr in range(1, rowspan):
                for dc in range(colspan):
                    taken.add((r + dr, c + dc))
            c += colspan
        while (r, c) in taken:
            out.append(None)
            c += 1
        grid.append(out)
    return grid


def extract_html(source: Source, registry: ExtractorRegistry) -> Extraction:
    """One item with the page's title and visible text."""
    match = _META_CHARSET.search(source.data[:4096])
    declared = match.group(1).decode("ascii") if match else None
    markup, encoding = decode(source.data, declared)
    collector = _TextCollector()
    collector.feed(markup)
    collector.close()
    text = _tidy("".join(collector.parts))
    title = " ".join(collector.title.split())
    if title and not text.startswith(title):
        text = f"{title}\n\n{text}"
    item = ContentItem(
        sequence_nr=1,
        name="page",
        ext="txt",
        content_type="text/plain",
        data=text,
        metadata=attach({"extractor": "html.parser", "encoding": encoding, "title": title, "ocr": False,
                         "headings": collector.headings},
                        text_tables(collector.grids, "", "page", comma_language(text))),
    )
    return Extraction(mime=source.mime, status="ok", items=[item])


def _tidy(text: str) -> str:
    """Collapse runs of spaces within lines and of blank lines between them."""
    lines = [re.sub(r"[ \r\u00a0]+", " ", line).strip() for line in text.split("\n")]
    return re.sub(r"\n{3,}", "\n\n", "\n".join(lines)).strip()
