"""A TeX PDF without a Unicode map for its fonts gives its ligatures, quotation marks and dashes as control
codes ("signi\\x1cer"): they are read in TeX's encodings, so "signifier" is a word search finds again
(corpus `issue918.pdf`, an essay nobody here wrote: "signier", "suce", "signication" before)."""

from __future__ import annotations

from extractors import extract
from extractors.pdf_glyphs import tex_codes

from .conftest import corpus_bytes, plain_text


def test_the_tex_essay_reads_with_its_ligatures_and_quotation_marks():
    text = plain_text(extract(corpus_bytes("issue918.pdf"), "issue918.pdf"))
    for word in ("signifier", "signified", "suffice", "signification", "\u201cexcusatory", "Unite!\u201d"):
        assert word in text, word
    assert not any(ord(ch) < 32 and ch not in "\n\t" for ch in text)


def test_both_tex_encodings_and_only_codes_glued_to_a_word():
    assert tex_codes("the signi\x1cer and the \x1crst \x1dow, o\x1b and e\x1ecient") == \
        "the signifier and the first flow, off and efficient"
    assert tex_codes("\x10Workers of the World, Unite!\x11 1990\x151995") == "\u201cWorkers of the World, Unite!\u201d 1990\u20131995"
    # OT1 (older TeX fonts) puts its ligatures lower: a code of those inside a word says which encoding the page uses.
    assert tex_codes("the \x0crst e\x0eciency of the \x0dow") == "the first efficiency of the flow"
    assert tex_codes("page one \x0c page two") == "page one \x0c page two"  # a form feed between words is no glyph
    assert tex_codes("plain text, nothing to read") == "plain text, nothing to read"
