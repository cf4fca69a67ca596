"""The characters a TeX font without a Unicode map leaves in a PDF's text as control codes.

A PDF made by TeX with bitmap (Type 3) or re-encoded fonts and no ToUnicode map gives each glyph's code
in the font's own encoding, and pypdf and pdfium print it as is: "the signi\\x1cer", "\\x10Workers of the
World, Unite!\\x11", where a reader sees "signifier" and quotation marks (corpus `issue918.pdf`, an essay
set in TeX's T1 fonts). Downstream the control code was dropped and the word became "signier", which no
search finds. TeX's two text encodings put their ligatures at fixed codes: T1 (Cork) at 0x1B-0x1F with
its quotation marks and dashes at 0x10-0x16, OT1 at 0x0B-0x0F. A control code is never text, so one glued
to a word is read in the encoding the page's codes point to (OT1 when a code of its ligatures sits inside
a word, else T1); a code that is not glued to a word is left to the clean-up that drops it. Pure.
"""

from __future__ import annotations

import re

_T1 = {"\x1b": "ff", "\x1c": "fi", "\x1d": "fl", "\x1e": "ffi", "\x1f": "ffl", "\x10": "\u201c", "\x11": "\u201d",
       "\x12": "\u201e", "\x13": "\u00ab", "\x14": "\u00bb", "\x15": "\u2013", "\x16": "\u2014"}
_OT1 = {"\x0b": "ff", "\x0c": "fi", "\x0d": "fl", "\x0e": "ffi", "\x0f": "ffl"}
# A code with a printed character on at least one side: part of a word, or a quotation mark or dash beside one.
_GLUED = re.compile(r"(?<=[^\s\x00-\x1f])[\x0b-\x1f]|[\x0b-\x1f](?=[^\s\x00-\x1f])")
_OT1_INSIDE = re.compile(r"[^\W\d_][\x0b-\x0f][^\W\d_]")


def tex_codes(text: str) -> str:
    """The text with TeX's ligature, quotation-mark and dash codes glued to words read as those characters."""
    if not _GLUED.search(text):
        return text
    table = _OT1 if _OT1_INSIDE.search(text) else _T1
    return _GLUED.sub(lambda m: table.get(m.group(0), m.group(0)), text)
