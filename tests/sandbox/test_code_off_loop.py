"""Code runs leave the event loop free: a ticker keeps turning while 8 runs spin at once.

No timing is measured: the ticker either ran during the runs or it did not, and the runs all ended
at their time limit (so they did spin throughout).
"""

from __future__ import annotations

import asyncio

from app.sandbox.code import CodeLimits, CodeSandbox
from tests.sandbox.conftest import require


async def test_the_loop_keeps_ticking_while_8_code_runs_spin() -> None:
    sandbox = CodeSandbox(warm=2)
    await sandbox.start()
    require(sandbox)
    ticks = 0

    async def tick() -> None:
        nonlocal ticks
        while True:
            ticks += 1
            await asyncio.sleep(0)

    ticker = asyncio.create_task(tick())
    try:
        runs = [sandbox.run_code("while True:\n    pass", {}, {}, CodeLimits(timeout_seconds=1.0)) for _ in range(8)]
        results = await asyncio.gather(*runs)
        during = ticks
    finally:
        ticker.cancel()
        await sandbox.close()
    assert [r.limit for r in results] == ["time"] * 8
    assert during > 100  # a loop doing the work itself would not have turned at all
