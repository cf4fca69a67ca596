"""A large text is decoded a MB at a time, reporting KB read of KB total, into exactly its text."""

from __future__ import annotations

from extractors import build_registry
from extractors.text import LARGE_TEXT


def test_a_large_text_reports_its_progress_and_decodes_across_slices():
    line = "Grüße aus Köln: 東京の天気 — ça va ? 1234567\n"
    text = line * (LARGE_TEXT // len(line.encode()) + 7)
    data = text.encode("utf-8")
    reports: list[tuple[int, int]] = []
    result = build_registry(ocr=False).extract(data, "long.txt", progress=lambda d, t: reports.append((d, t)))
    [item] = result.items
    assert item.metadata["encoding"] == "utf-8" and "\ufffd" not in item.data
    head = item.data[:1_900_000]  # an item past the item limit is cut, with a note
    assert text.startswith(head) and len(head) == 1_900_000
    assert len(reports) == -(-len(data) // (1 << 20)) and reports[-1] == (len(data) // 1024, len(data) // 1024)
    assert [d for d, _ in reports] == sorted(d for d, _ in reports)


def test_a_small_text_reports_nothing():
    reports: list[tuple[int, int]] = []
    build_registry(ocr=False).extract(b"Short text.\n" * 100, "short.txt", progress=lambda d, t: reports.append((d, t)))
    assert reports == []
