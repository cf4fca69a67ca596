"""Decompression bombs of every zip-based format are refused before a parser inflates them; the
text of one file is cut at MAX_EXTRACTED_CHARS; a reader over its memory fails that file alone."""

from __future__ import annotations

import io
import random
import zipfile

import pytest

from extractors import build_registry
from extractors.limits import ExtractionLimits, cap_text, check_zip
from extractors.runner import ExtractionPool
from tests.bombs import FORMATS, bomb, lying_docx

from .conftest import corpus_bytes

MIB = 1 << 20
SMALL = ExtractionLimits(max_part_bytes=2 * MIB, max_inflated_bytes=3 * MIB, max_chars=50_000)


@pytest.fixture(scope="module")
def registry():
    return build_registry(ocr=False, limits=SMALL)


@pytest.mark.parametrize("kind", FORMATS)
def test_a_part_inflating_past_its_limit_is_refused_with_a_sentence(registry, kind):
    data = bomb(kind, 4 * MIB)
    assert len(data) < 40_000  # a small upload standing for a big one
    result = registry.extract(data, f"bomb.{kind}")
    assert result.status == "refused"
    [item] = result.items
    assert item.data.startswith(f"bomb.{kind} was not read: its part ")
    assert "over the 2 MiB limit of one part" in item.data
    assert item.metadata["status"] == "refused"


@pytest.mark.parametrize("kind", FORMATS)
def test_a_part_compressed_beyond_the_ratio_is_refused_at_the_default_limits(kind):
    result = build_registry(ocr=False).extract(bomb(kind, 2 * MIB), f"bomb.{kind}")
    assert result.status == "refused"
    assert "is compressed more than 200:1" in result.items[0].data


def test_parts_within_their_limit_but_over_the_file_limit_are_refused():
    data = io.BytesIO()
    with zipfile.ZipFile(data, "w", zipfile.ZIP_DEFLATED) as z:
        z.writestr("[Content_Types].xml", "<Types/>")
        for n in range(3):
            z.writestr(f"word/part{n}.xml", random.Random(n).randbytes(1_300_000))  # incompressible
    result = build_registry(ocr=False, limits=SMALL).extract(data.getvalue(), "parts.docx")
    assert result.status == "refused"
    assert "over the 3 MiB limit of one file" in result.items[0].data


def test_headers_that_lie_about_the_size_do_not_get_past_the_inflating_count(registry):
    data = lying_docx(6 * MIB, declared=1000)
    with zipfile.ZipFile(io.BytesIO(data)) as z:
        assert z.getinfo("word/document.xml").file_size == 1000  # what the headers say
    result = registry.extract(data, "liar.docx")
    assert result.status == "refused"
    assert "inflates to more than 2 MiB, although it declares 1,000 bytes" in result.items[0].data


@pytest.mark.parametrize("name", ["testWORD_various.docx", "testEXCEL.xlsx", "testPPT_various.pptx"])
def test_real_documents_pass_the_default_limits(name):
    data = corpus_bytes(name)
    check_zip(data, ExtractionLimits())  # raises when refused
    assert build_registry(ocr=False).extract(data, name).status == "ok"


def test_text_past_max_chars_is_cut_with_a_notice_in_the_content_item(registry):
    text = ("Lorem ipsum dolor sit amet. " * 4000).encode()  # 112,000 characters
    result = registry.extract(text, "long.txt")
    body = [i for i in result.items if i.is_text]
    assert sum(len(i.data) for i in body) < 50_000 + 200
    last = body[-1]
    assert last.data.endswith("[Only the first 50,000 of its 112,000 characters of text were kept "
                              "(MAX_EXTRACTED_CHARS); the rest was cut.]")
    assert last.metadata["truncated"] is True
    assert result.status == "partial"
    assert any("MAX_EXTRACTED_CHARS" in w for w in result.warnings)


def test_cap_text_leaves_a_short_file_alone():
    result = build_registry(ocr=False).extract(b"short text", "a.txt")
    assert cap_text(result, 100).items == result.items and result.status == "ok"


async def test_a_reader_over_its_memory_fails_that_file_alone_and_the_next_file_is_read():
    pool = ExtractionPool(size=1, limits=ExtractionLimits(max_chars=0, memory_bytes=160 * MIB))
    try:
        text = b"All work and no play makes Jack a dull boy.\n" * (1_500_000)  # 66 MB of text
        result = await pool.run(text, "big.txt", None, None, timeout=600)
        assert result.status == "refused", result.items[0].data
        assert result.items[0].data == ("big.txt was not read: reading it needs more memory than a reader "
                                        "process may take (160 MiB, EXTRACT_MEMORY_BYTES).")
        after = await pool.run(b"a,b\n1,2\n3,4\n", "small.csv", None, None, timeout=600)
        assert after.status == "ok"
    finally:
        pool.shutdown()


@pytest.mark.parametrize("kind", ["pptx", "docx", "odt"])
async def test_a_large_part_within_the_limits_is_read_to_its_end(kind):
    """A part inflating past 1 MiB at an honest ratio, followed by more of the file: the inflating
    count stops at the part's end (it inflated the part's tail again and again, for ever: a PPTX
    whose slide inflates to 64 MB was still being read after 45 s)."""
    pool = ExtractionPool(size=1, limits=ExtractionLimits(max_chars=100_000))
    try:
        result = await pool.run(bomb(kind, 4 * MIB, varied=True), f"large.{kind}", None, None, timeout=120)
    finally:
        pool.shutdown()
    assert result.status == "partial", [i.data[:200] for i in result.items]  # read, then cut at max_chars
    assert "Only the first 100,000 of its" in result.items[-1].data
