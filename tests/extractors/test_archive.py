"""ZIP archives: members extracted in turn, bombs refused before they fill memory."""

from __future__ import annotations

import io
import zipfile

from extractors import ArchiveLimits, build_registry, extract

from .conftest import corpus_bytes, plain_text


def _zip(members: dict[str, bytes]) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", compression=zipfile.ZIP_DEFLATED) as archive:
        for name, data in members.items():
            archive.writestr(name, data)
    return buffer.getvalue()


def test_a_highly_compressed_member_is_refused():
    bomb = _zip({"zeros.txt": bytes(16 * 1024 * 1024)})  # 16 MiB of zeros, about 16 KiB zipped
    result = extract(bomb, "bomb.zip")
    assert result.status == "refused"
    assert "zip bomb" in result.items[0].data
    assert result.warnings


def test_an_archive_expanding_past_the_size_limit_is_refused():
    registry = build_registry(ArchiveLimits(max_total_bytes=1024 * 1024))
    archive = _zip({f"part{i}.txt": b"lorem ipsum " * 30_000 for i in range(4)})
    result = registry.extract(archive, "big.zip")
    assert result.status == "refused"
    assert "limit" in result.warnings[0]


def test_deeply_nested_archives_are_refused():
    data = b"the innermost text"
    for level in range(6):
        data = _zip({f"level{level}.zip" if level else "inner.txt": data})
    result = extract(data, "nested.zip")
    assert result.status == "refused"
    assert "nested" in result.warnings[0]


def test_too_many_members_are_refused():
    registry = build_registry(ArchiveLimits(max_members=5))
    result = registry.extract(_zip({f"{i}.txt": b"x" for i in range(6)}), "many.zip")
    assert result.status == "refused"


def test_nested_archives_within_limits_are_read():
    inner = _zip({"inner.txt": b"text from the inner archive"})
    outer = _zip({"inner.zip": inner, "readme.md": b"# Title\n\n- outer text\n"})
    result = extract(outer, "outer.zip")
    assert result.status == "ok"
    assert "text from the inner archive" in plain_text(result)
    assert "inner.zip/inner.txt" in {item.metadata["member"] for item in result.items}


def test_office_files_inside_a_zip_are_extracted_as_office_files():
    archive = _zip({"doc/testWORD.docx": corpus_bytes("testWORD.docx")})
    result = extract(archive, "docs.zip")
    assert "This is the header for our document" in plain_text(result)


def test_a_broken_member_does_not_hide_the_others():
    archive = _zip({"broken.pdf": b"%PDF-1.4 nothing else", "fine.txt": b"still readable"})
    result = extract(archive, "mixed.zip")
    assert result.status == "partial"
    assert "still readable" in plain_text(result)
    assert any("broken.pdf" in warning for warning in result.warnings)
