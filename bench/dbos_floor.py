"""The floor DBOS sets under the round-overhead benchmark: the same shape with empty steps.

Imported by round_overhead.py: a workflow of one step, five parallel steps and one step, each
answering after `delay` seconds, on the same tuned SQLite system database, one alone and 100 at
once. Whatever ratio this reaches, rounds that checkpoint every step in DBOS cannot beat.
"""

from __future__ import annotations

import asyncio
import time
from pathlib import Path

import common  # noqa: F401  (the checkout on sys.path)
from dbos import DBOS

from app.engine import DBOS_THREADS, system_engine

DELAY = {"seconds": 0.2}


@DBOS.step(name="bench.empty")
async def empty_step(i: int) -> int:
    await asyncio.sleep(DELAY["seconds"])
    return i


@DBOS.workflow(name="bench.shape")
async def shape(tasks: int) -> None:
    await empty_step(0)
    await asyncio.gather(*(empty_step(i) for i in range(1, tasks + 1)))
    await empty_step(tasks + 1)


async def floor(data_dir: Path, tasks: int = 5, delay: float = 0.2, concurrent: int = 100) -> tuple[float, float]:
    """Wall time of one workflow alone and of `concurrent` at once."""
    DELAY["seconds"] = delay
    data_dir.mkdir(parents=True, exist_ok=True)
    url = f"sqlite:///{data_dir / 'dbos.sqlite'}"
    DBOS(config={"name": "bench", "system_database_url": url, "system_database_engine": system_engine(url),
                 "max_executor_threads": DBOS_THREADS, "log_level": "WARNING"})
    DBOS.launch()
    try:
        await (await DBOS.start_workflow_async(shape, tasks)).get_result()  # warm up
        t0 = time.perf_counter()
        await (await DBOS.start_workflow_async(shape, tasks)).get_result()
        one = time.perf_counter() - t0
        t0 = time.perf_counter()
        handles = [await DBOS.start_workflow_async(shape, tasks) for _ in range(concurrent)]
        await asyncio.gather(*(h.get_result() for h in handles))
        return one, time.perf_counter() - t0
    finally:
        DBOS.destroy()


if __name__ == "__main__":
    import tempfile

    with tempfile.TemporaryDirectory() as tmp:
        alone, crowd = asyncio.run(floor(Path(tmp)))
    print(f"DBOS alone, plan + 5 parallel + final empty steps of 200 ms: one {alone * 1000:.0f} ms, 100 concurrent "
          f"{crowd * 1000:.0f} ms, ratio {crowd / alone:.2f}")
