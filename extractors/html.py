"""HTML pages: readable text without markup, scripts or styles."""

from __future__ import annotations

import re
from html.parser import HTMLParser

from extractors.base import ContentItem, Extraction
from extractors.registry import ExtractorRegistry, Source
from extractors.text import decode

MIMES = ["text/html", "application/xhtml+xml"]

_META_CHARSET = re.compile(rb"<meta[^>]+charset=[\"']?([A-Za-z0-9._-]+)", re.IGNORECASE)
_SKIPPED = {"script", "style", "noscript", "template", "head", "svg"}
_BLOCKS = {
    "p", "div", "br", "li", "ul", "ol", "tr", "table", "section", "article", "header", "footer",
    "h1", "h2", "h3", "h4", "h5", "h6", "blockquote", "pre", "hr", "title", "dd", "dt", "form",
}
_CELLS = {"td", "th"}


class _TextCollector(HTMLParser):
    """Keeps text, turns block elements into line breaks and table cells into tabs."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.parts: list[str] = []
        self.title = ""
        self._skip_depth = 0
        self._in_title = False

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag == "title":
            self._in_title = True
        elif tag in _SKIPPED:
            self._skip_depth += 1
        if tag in _BLOCKS:
            self.parts.append("\n")
        elif tag in _CELLS:
            self.parts.append("\t")

    def handle_endtag(self, tag: str) -> None:
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
        metadata={"extractor": "html.parser", "encoding": encoding, "title": title, "ocr": False},
    )
    return Extraction(mime=source.mime, status="ok", items=[item])


def _tidy(text: str) -> str:
    """Collapse runs of spaces within lines and of blank lines between them."""
    lines = [re.sub(r"[ \r\u00a0]+", " ", line).strip() for line in text.split("\n")]
    return re.sub(r"\n{3,}", "\n\n", "\n".join(lines)).strip()
