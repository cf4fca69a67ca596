"""A killed worker is waited for even when it flooded its answer pipe: asyncio's `Process.wait` returns
only once the pipes are closed, and a pipe whose reading was paused (more unread output than the
reader's limit) never sees its end. The suite hung on this for good, twice in one afternoon, in
test_code_hostile's "1 GB written to the answer pipe" (an answer too large: read 4 bytes, then the kill)."""

from __future__ import annotations

import asyncio
import sys

from app.sandbox.code import _Worker

FLOOD = "import os\nwhile True:\n    os.write(1, b'x' * 10**6)"


async def test_a_worker_that_floods_its_pipe_is_killed_and_waited_for() -> None:
    process = await asyncio.create_subprocess_exec(
        sys.executable, "-c", FLOOD, stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE,
        start_new_session=True, limit=2**16)
    assert process.stdout is not None
    await process.stdout.readexactly(4)  # the header of an answer too large; nothing more is read
    while len(process.stdout._buffer) <= 2 * 2**16:  # noqa: SLF001 - until the reading is paused, as it was
        await asyncio.sleep(0.01)
    async with asyncio.timeout(30):  # it hung for good before
        await _Worker(process).kill()
    assert process.returncode is not None
