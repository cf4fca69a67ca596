"""Extraction in worker processes: the event loop keeps running, slow files time out."""

from __future__ import annotations

import asyncio

import pytest

from extractors.runner import extract_isolated

from .conftest import corpus_bytes, plain_text

pytestmark = pytest.mark.heavy


async def _count_ticks_while(awaitable):
    """Run `awaitable` while a heartbeat task counts how often the event loop gets control."""
    ticks = 0
    done = False

    async def heartbeat():
        nonlocal ticks
        while not done:
            ticks += 1
            await asyncio.sleep(0)

    beat = asyncio.create_task(heartbeat())
    try:
        result = await awaitable
    finally:
        done = True
        await beat
    return result, ticks


async def test_a_long_pdf_is_read_without_stalling_the_event_loop_and_reports_pages_done_on_it():
    """One reading of the 352-page book (a minute or two of a core) for both: the loop keeps turning, and
    the pages done are reported on the loop while the worker reads."""
    loop = asyncio.get_running_loop()
    reports = []

    def progress(done, total):
        assert asyncio.get_running_loop() is loop  # called on the loop, not in the pool's thread
        reports.append((done, total))

    result, ticks = await _count_ticks_while(
        extract_isolated(corpus_bytes("freeculture.pdf"), "freeculture.pdf", None, None, timeout=300,
                         progress=progress)
    )
    assert result.status == "ok"
    assert len(result.items) == 352
    assert "This PDF version of Free Culture is licensed" in plain_text(result)
    # In-loop extraction would give the heartbeat no turn at all until the end.
    assert ticks > 1000
    assert reports, "a file read for seconds reports how far it is"
    assert {total for _, total in reports} == {352}
    done = [d for d, _ in reports]
    # Under load, opening the book can take the first seconds: a report of page 0 then says it has begun.
    assert done == sorted(done) and done[-1] > 0 and done[-1] < 352


async def test_the_time_limit_gives_a_timeout_result_and_the_pool_recovers():
    result = await extract_isolated(corpus_bytes("freeculture.pdf"), "freeculture.pdf", None, None, timeout=0.01)
    assert result.status == "timeout"
    assert result.mime == "application/pdf"
    assert "time limit" in result.warnings[0]
    after = await extract_isolated(b"still working", "note.txt", None, None, timeout=60)
    assert after.status == "ok"
    assert after.items[0].data == "still working"


async def test_passwords_reach_the_worker():
    data = corpus_bytes("libreoffice-writer-password.pdf")
    result = await extract_isolated(data, "locked.pdf", None, "openpassword", timeout=60)
    assert result.status == "ok"
    assert "Lorem ipsum dolor sit amet" in plain_text(result)


async def test_concurrent_files_all_complete():
    names = ["testWORD.docx", "testEXCEL.xlsx", "testCSV.csv", "powerpoint_sample.pptx", "multicolumn.pdf"]
    results = await asyncio.gather(
        *(extract_isolated(corpus_bytes(name), name, None, None, timeout=120) for name in names)
    )
    assert [result.status for result in results] == ["ok"] * len(names)


async def test_garbage_gives_a_result_not_an_exception():
    result = await extract_isolated(b"%PDF-1.7\n\x00\x01garbage", "bad.pdf", None, None, timeout=60)
    assert result.status == "corrupt"
    assert result.warnings


async def test_the_time_limit_counts_the_files_own_work_not_the_queue():
    """A tiny file queued behind a book in a one-worker pool still gets its whole limit."""
    from extractors.runner import ExtractionPool

    pool = ExtractionPool(size=1)
    try:
        await asyncio.get_running_loop().run_in_executor(None, pool.warm)
        book = asyncio.create_task(pool.run(corpus_bytes("freeculture.pdf"), "freeculture.pdf", None, None, 300))
        await asyncio.sleep(0)  # the book takes the only worker first
        small = await pool.run(b"region,sales\nnorth,10\n", "small.csv", None, None, 2)
        assert (await book).status == "ok"
        assert small.status == "ok", small.warnings
    finally:
        pool.shutdown()


async def test_a_file_read_while_the_pool_warms_up_takes_a_worker_the_warm_up_started(monkeypatch):
    """After a restart the resumed round's file waits for a reader the warm-up is starting: no other
    process imports the extractors beside the warm-up's on the machine's cores (issue 51, item 11)."""
    from extractors import runner

    started = []

    class Seen(runner._Worker):  # the pool's own worker, noted as it starts
        def __init__(self, *args):
            super().__init__(*args)
            started.append(self)

    monkeypatch.setattr(runner, "_Worker", Seen)
    pool = runner.ExtractionPool(size=1)
    try:
        warming = asyncio.get_running_loop().run_in_executor(None, pool.warm)
        while not started:  # the warm-up has started its worker (a state, waited for with the warm-up)
            assert not warming.done()
            await asyncio.sleep(0.01)
        result = await pool.run(b"region,sales\nnorth,10\n", "small.csv", None, None, 60)
        await warming
        assert result.status == "ok"
        assert result.startup_seconds > 0  # it waited for the worker's imports
        assert len(started) == 1, "the file started a reader of its own beside the warm-up's"
        assert await pool.run(b"again", "again.txt", None, None, 60) and len(started) == 1
    finally:
        pool.shutdown()
