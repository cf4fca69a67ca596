"""Text clean-up before any agent reads a document.

- A word hyphenated at a PDF line end is joined ("com-\\npiler" -> "compiler").
- Lines repeated on many pages of a PDF (running headers and footers, printer's slugs, margin
  line numbers) are dropped.
- Back matter is kept out: a table of contents (its heading and the lines with page numbers
  after it, dot leaders anywhere), an index (entries followed by page numbers) and the
  references, bibliography, notes or index sections that close a document.
- A slide's table rows leave its prose (the table reaches agents as cells) and its speaker
  notes become an item of their own, so a summary quotes the slide's sentences.

The document's stored contents are untouched: this is what agents read of them.
"""

from __future__ import annotations

import re
from collections import Counter
from typing import Any, Iterable

from extractors.base import ContentItem

_HYPHEN = re.compile(r"(?<=[^\W\d_]{2})-[ \t]*\r?\n[ \t]*(?=[a-zäöüßàâçéèêëîïôûùœ]{2})")
_NUMBER_TOKEN = re.compile(r"\S*\d\S*|(?<!\S)[ivxlc]+(?!\S)")
# Headings that open the back matter of a document (when they come late in it).
_BACK_MATTER = re.compile(
    r"^\s*(?:\d+\.?\s*)?(?:references|bibliography|works cited|literature cited|index|notes|endnotes|"
    r"literatur(?:verzeichnis)?|quellen(?:verzeichnis)?|stichwortverzeichnis|register|anmerkungen|"
    r"bibliographie|références|index alphabétique)\s*$",
    re.IGNORECASE,
)
_CONTENTS = re.compile(
    r"^\s*(?:contents|table of contents|inhalt|inhaltsverzeichnis|table des matières|sommaire)\s*$",
    re.IGNORECASE,
)
# "Introduction ........ 3", "Chapter One 21" (after a contents heading), "copyright, 45, 67–70".
TOC_LINE = re.compile(r"(?:\.\s?){4,}\s*[\divxlc]+\s*$|…{2,}\s*\d+\s*$", re.IGNORECASE)
_NUMBERED_LINE = re.compile(r"\S.{0,90}?\s[\divxlc]{1,4}\s*$", re.IGNORECASE)
INDEX_LINE = re.compile(r"^[^\d\n,]{2,80},\s*\d{1,4}(?:[–-]\d{1,4})?n?(?:\s*,\s*\d{1,4}(?:[–-]\d{1,4})?n?)*\s*$")
REFERENCE_LINE = re.compile(r"^\s*\[\d{1,3}\]\s+\S")
_LATE = 0.6  # a back-matter heading counts in the last 40 % of a document
_REPEATED_SHARE = 0.3  # a line on this share of the pages (and at least 3) is a header/footer


def join_hyphens(text: str) -> str:
    """Words split by a hyphen at a line end, joined."""
    return _HYPHEN.sub("", text)


def clean_contents(contents: Iterable[ContentItem]) -> list[tuple[str, str]]:
    """(item name, text) of a document's text items, cleaned for agents (see the module doc)."""
    items: list[tuple[str, str, dict[str, Any]]] = []
    for c in contents:
        meta = c.metadata
        if not c.is_text or c.base64_encoded:
            continue
        name, text = c.name, c.data
        if "slide" in meta:
            prose, notes = _split_slide(text, bool(meta.get("tables")))
            items.append((name, prose, meta))
            if notes:
                items.append((f"{name} notes", notes, meta))
            continue
        items.append((name, join_hyphens(text) if "page" in meta else text, meta))
    pages = [text for _, text, meta in items if "page" in meta]
    repeated = _repeated_lines(pages) if len(pages) >= 3 else set()
    total = sum(len(text) for _, text, _ in items) or 1
    # "[1] ..." lines are a reference list when there are several; one is a quoted footnote.
    references = sum(1 for _, text, _ in items for line in text.split("\n") if REFERENCE_LINE.match(line)) >= 3
    out: list[tuple[str, str]] = []
    seen = 0
    back_matter = False
    contents_zone = False
    for name, text, meta in items:
        kept = []
        for line in text.split("\n"):
            position = seen / total
            seen += len(line) + 1
            stripped = line.strip()
            if repeated and "page" in meta and len(line) < 120 and _shape(stripped) in repeated:
                continue
            if _BACK_MATTER.match(stripped) and position >= _LATE:
                back_matter = True
            if back_matter:
                continue
            if _CONTENTS.match(stripped):
                contents_zone = True
                continue
            if contents_zone:
                if not stripped or _NUMBERED_LINE.match(stripped) or TOC_LINE.search(stripped) or len(stripped) < 40:
                    continue
                contents_zone = False
            if TOC_LINE.search(stripped) or INDEX_LINE.match(stripped) or (references and REFERENCE_LINE.match(stripped)):
                continue
            kept.append(line)
        cleaned = "\n".join(kept).strip("\n")
        if cleaned.strip():
            out.append((name, cleaned))
    return out


def _split_slide(text: str, has_tables: bool) -> tuple[str, str]:
    """A slide's prose (without its table rows when its tables are kept as cells) and its notes."""
    body, marker, notes = text.partition("\n\nNotes:\n")
    if not marker and text.startswith("Notes:\n"):
        body, notes = "", text[len("Notes:\n"):]
    lines = [line for line in body.split("\n") if not (has_tables and "\t" in line)]
    return "\n".join(lines).strip("\n"), notes.strip("\n")


def _shape(line: str) -> str:
    """A line with its numbers (and roman numerals) blanked: "Page 12" and "Page xii" are one line."""
    return _NUMBER_TOKEN.sub("#", " ".join(line.casefold().split()))


def _repeated_lines(pages: list[str]) -> set[str]:
    """Short lines that occur on many pages: headers, footers, slugs, margin numbers."""
    counts: Counter[str] = Counter()
    for page in pages:
        counts.update({_shape(line) for line in page.split("\n") if line.strip() and len(line) < 120})
    floor = max(3, _REPEATED_SHARE * len(pages))
    return {shape for shape, n in counts.items() if n >= floor}
