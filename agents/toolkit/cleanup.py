"""Text clean-up before any agent reads a document.

- A word hyphenated at a PDF line end is joined ("com-\\npiler" -> "compiler").
- Lines repeated on many pages of a PDF (running headers and footers, printer's slugs, margin
  line numbers) are dropped.
- Back matter is kept out by its shape, not by the words of its headings: contents lines with dot
  leaders and a page number, index entries followed by page numbers, and numbered references
  ("[12] ...") when there are several. (The headings' word lists, "Contents", "Inhaltsverzeichnis",
  "References", "Notes", "Index" ..., that dropped everything after them were removed for issue 32:
  no held-out case changed without them, see docs/benchmarks.md; an endnotes section without
  numbered markers now stays.)
- Typographic ligatures (ﬁ, ﬂ, ﬀ, ﬃ, ﬄ, ﬅ, ﬆ) become their letters by NFKC, only they: NFKC on
  all text would also turn full-width, superscript and fraction characters into others. Soft
  hyphens go. A PDF word hyphenated at the end of one page and ended on the next is joined.
- Footnote markers a PDF glues to words ("democracy.3", "piracy1") are set apart ("democracy. [3]")
  when the document shows that it uses them: after punctuation (three or more times), then also
  straight after lower-case words; a document with one "base64" keeps it.
- A body with headings (Word, OpenDocument, HTML) is cut at them: each part is named by its
  heading, which becomes the section a citation names.
- A slide's table rows leave its prose (the table reaches agents as cells) and its speaker
  notes become an item of their own, so a summary quotes the slide's sentences.

The document's stored contents are untouched: this is what agents read of them.
"""

from __future__ import annotations

import re
import unicodedata
from collections import Counter
from collections.abc import Iterable
from typing import Any

from agents.toolkit.markup import xml_lines
from extractors.base import ContentItem

_CAPITAL_AFTER_HYPHEN = re.compile(r"(?<=[^\W\d_]{2}-)[ \t]*\r?\n[ \t]*(?=[A-ZÄÖÜÀ-ÖØ-Þ][a-zäöüßà-öø-ÿ])")
_HYPHEN = re.compile(r"(?<=[^\W\d_]{2})-[ \t]*\r?\n[ \t]*(?=[a-zäöüßàâçéèêëîïôûùœ]{2})")
_NUMBER_TOKEN = re.compile(r"\S*\d\S*|(?<!\S)[ivxlc]+(?!\S)")
# "Introduction ........ 3", "Chapter One 21" (after a contents heading), "copyright, 45, 67–70".
TOC_LINE = re.compile(r"(?:\.\s?){4,}\s*[\divxlc]+\s*$|…{2,}\s*\d+\s*$", re.IGNORECASE)
INDEX_LINE = re.compile(r"^[^\d\n,]{2,80},\s*\d{1,4}(?:[–-]\d{1,4})?n?(?:\s*,\s*\d{1,4}(?:[–-]\d{1,4})?n?)*\s*$")
REFERENCE_LINE = re.compile(r"^\s*\[\d{1,3}\]\s+\S")
_REPEATED_SHARE = 0.3  # a line on this share of the pages (and at least 3) is a header/footer


def join_hyphens(text: str) -> str:
    """Words split by a hyphen at a line end, joined."""
    return _HYPHEN.sub("", text)


def join_compounds(text: str) -> str:
    """A compound split after its hyphen at a line end before a capital, joined with the hyphen ("Sun-\nSpider"
    is "Sun-Spider", which read "Sun- Spider" once the lines were joined). After the running lines are gone:
    a page's last line "refrig-" is not joined to the footer under it."""
    return _CAPITAL_AFTER_HYPHEN.sub("", text)


_LIGATURES = {chr(c): unicodedata.normalize("NFKC", chr(c)) for c in range(0xFB00, 0xFB07)}
_LIGATURES["\u00ad"] = ""  # a soft hyphen is a place a word may break, not a character of it
_LIGATURE = re.compile("[" + "".join(_LIGATURES) + "]")
_PUNCT_MARKER = re.compile(r"([^\W\d_]{3}[.,;:!?]?[\u201d\u2019\"')]?)(?<=[.,;:!?\u201d\u2019\"')])(\d{1,3})(?=\s|$)",
                           re.M)
# After a word of lower-case letters, which may start with a capital ("Coldstore1" is the word and
# footnote 1; issue 50 saw "Coldstore 1" in a summary).
_WORD_MARKER = re.compile(r"\b([A-ZÀ-ÖØ-Þ]?[a-zà-öø-ÿ]{4,})(\d{1,2})(?=[\s.,;:]|$)", re.M)
_PAGE_END_HYPHEN = re.compile(r"([^\W\d_]{2,})-[ \t]*$")
_PAGE_START_WORD = re.compile(r"^[ \t]*([a-zäöüßàâçéèêëîïôûùœ]{2,}[^\s]*)[ \t]*\n?")


def normalise_ligatures(text: str) -> str:
    """Ligature characters as their letters; soft hyphens dropped."""
    return _LIGATURE.sub(lambda m: _LIGATURES[m.group(0)], text)


def uses_markers(texts: Iterable[str]) -> bool:
    """Whether a document glues footnote markers to its words (three or more after punctuation)."""
    count = 0
    for text in texts:
        count += len(_PUNCT_MARKER.findall(text))
        if count >= 3:
            return True
    return False


def separate_markers(text: str) -> str:
    """Footnote markers glued to words set apart as "[n]"."""
    text = _PUNCT_MARKER.sub(r"\1 [\2]", text)
    return _WORD_MARKER.sub(r"\1 [\2]", text)


def _join_pages(items: list[tuple[str, str, dict[str, Any]]]) -> None:
    """A word hyphenated at the end of one page and ended at the top of the next, joined on the first."""
    for i in range(len(items) - 1):
        name, text, meta = items[i]
        after_name, after, after_meta = items[i + 1]
        if "page" not in meta or "page" not in after_meta:
            continue
        end = _PAGE_END_HYPHEN.search(text.rstrip("\n"))
        start = _PAGE_START_WORD.match(after)
        if end and start:
            items[i] = (name, text.rstrip("\n")[: end.start()] + end.group(1) + start.group(1), meta)
            items[i + 1] = (after_name, after[start.end():], after_meta)


def _sections(name: str, text: str, headings: list[str]) -> list[tuple[str, str]]:
    """A body cut at its heading lines, each part named by its heading (the part before: `name`)."""
    wanted = [" ".join(h.split()) for h in headings if h.strip()]
    if not wanted:
        return [(name, text)]
    parts: list[tuple[str, list[str]]] = [(name, [])]
    for line in text.split("\n"):
        if wanted and " ".join(line.split()) == wanted[0]:
            parts.append((wanted.pop(0), [line]))
        else:
            parts[-1][1].append(line)
    return [(title, "\n".join(lines)) for title, lines in parts if "\n".join(lines).strip()]


def clean_contents(contents: Iterable[ContentItem]) -> list[tuple[str, str]]:
    """(item name, text) of a document's text items, cleaned for agents (see the module doc)."""
    items: list[tuple[str, str, dict[str, Any]]] = []
    for c in contents:
        meta = c.metadata
        if not c.is_text or c.base64_encoded:
            continue
        name, text = c.name, c.data
        if c.ext == "xml":  # read as its elements' text, not its markup (`agents.toolkit.markup`)
            text = xml_lines(text) or text
        if "slide" in meta:
            prose, notes = _split_slide(text, bool(meta.get("tables")))
            items.append((name, prose, meta))
            if notes:
                items.append((f"{name} notes", notes, meta))
            continue
        text = normalise_ligatures(text)
        if "page" in meta:
            items.append((name, join_hyphens(text), meta))
        else:
            items.extend((part, body, meta) for part, body in _sections(name, text, meta.get("headings") or []))
    # Running heads and footers go before the pages are joined: a page that ends "refrig-" above its
    # footer ("Cold chain audit — page 4") continues its word on the next page all the same.
    page_texts = [text for _, text, meta in items if "page" in meta]
    running = _repeated_lines(page_texts) if len(page_texts) >= 3 else set()
    if running:
        items = [(name, _without_lines(text, running) if "page" in meta else text, meta) for name, text, meta in items]
    items = [(name, join_compounds(text), meta) for name, text, meta in items]
    _join_pages(items)
    if uses_markers(text for _, text, meta in items if "page" in meta):
        items = [(name, separate_markers(text) if "page" in meta else text, meta) for name, text, meta in items]
    pages = [text for _, text, meta in items if "page" in meta]
    repeated = _repeated_lines(pages) if len(pages) >= 3 else set()
    # "[1] ..." lines are a reference list when there are several; one is a quoted footnote.
    references = sum(1 for _, text, _ in items for line in text.split("\n") if REFERENCE_LINE.match(line)) >= 3
    out: list[tuple[str, str]] = []
    for name, text, meta in items:
        kept = []
        for line in text.split("\n"):
            stripped = line.strip()
            if repeated and "page" in meta and len(line) < 120 and _shape(stripped) in repeated:
                continue
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


def _without_lines(text: str, shapes: set[str]) -> str:
    return "\n".join(line for line in text.split("\n")
                     if not (len(line) < 120 and line.strip() and _shape(line.strip()) in shapes))


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
