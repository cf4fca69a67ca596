"""A long stored document is read for a round in a worker process: cleaning up a book's text holds
the GIL for a fifth of a second, which in a thread of the service every answer (a stop, a poll)
waited for. It reads exactly as it does in place."""

from __future__ import annotations

from datetime import UTC, datetime

from agents.toolkit import cpu
from app.rounds.documents import document_text, read_document
from app.store.tables import FileRow
from extractors import extract

FILE = FileRow(id=3, mandate_id=1, user_id=1, name="notes", ext="txt", mime="text/plain", size=1, sha256="s",
               created_at=datetime(2026, 1, 1, tzinfo=UTC))


async def test_a_long_document_is_read_in_a_worker_process_as_it_reads_in_place(monkeypatch):
    ran_in_process: list[str] = []
    real = cpu.off_gil

    async def recording(fn, *args, **kwargs):
        ran_in_process.append(fn.__name__)
        return await real(fn, *args, **kwargs)

    monkeypatch.setattr(cpu, "off_gil", recording)
    lines = [f"Line {i} of the notes says something about part {i % 7}." for i in range(2_000)]
    long = extract("\n".join(lines).encode(), "notes.txt").items
    assert sum(len(c.data) for c in long) > cpu.LONG_TEXT

    doc = await read_document(FILE, long, round_no=2, new=False)
    assert ran_in_process == ["of"]
    assert doc == document_text(FILE, long, round_no=2, new=False)
    assert doc.round == 2 and not doc.new and doc.sha256 == "s" and "Line 1999 of the notes" in doc.text

    short = extract(b"A short note.\n", "notes.txt").items
    assert (await read_document(FILE, short)).text == "A short note."
    assert ran_in_process == ["of"]  # a short one is not worth a process hop
