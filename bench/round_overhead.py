"""Round overhead: a 5-task round with an instant model, and 100 concurrent rounds vs one.

    python bench/round_overhead.py [--database-url URL]

Prints the median wall time of a 5-task round (instant model), the wall time of one round and
of 100 concurrent rounds with the model answering after 200 ms, their ratio, and peak memory.
"""

from __future__ import annotations

import argparse
import asyncio
import resource
import statistics
import tempfile
import time
from pathlib import Path

from common import DelayedModel, median
from dbos_floor import floor

from agents.registry import build_registry
from app.config import Settings
from app.engine import Engine
from app.main import build_engine
from app.records import Owner
from app.schemas import StartRequest
from app.service import WorkflowService

OWNER = Owner(1, 1)


async def one_round(service: WorkflowService, runtime: Engine, prompt: str) -> float:
    t0 = time.perf_counter()
    answer = await service.start(OWNER, None, StartRequest(prompt=prompt), None)
    await runtime.wait_round(answer["id"])
    elapsed = time.perf_counter() - t0
    row = await runtime.rt.repo.workflows.workflow(OWNER, answer["id"])
    assert row.status == "completed", row.status
    return elapsed


async def measure(model: DelayedModel, data_dir: Path, database_url: str, rounds: int, concurrent: int) -> list[float]:
    settings = Settings(data_dir=data_dir, database_url=database_url, max_concurrent_rounds=max(concurrent, 8),
                        task_concurrency=5)
    runtime = build_engine(settings, model, build_registry(entry_points=False))
    await runtime.start()
    service = WorkflowService(runtime)
    try:
        await one_round(service, runtime, "warm up")
        if concurrent == 1:
            return [await one_round(service, runtime, f"round {i}") for i in range(rounds)]
        t0 = time.perf_counter()
        await asyncio.gather(*(one_round(service, runtime, f"round {i}") for i in range(concurrent)))
        return [time.perf_counter() - t0]
    finally:
        await runtime.close()


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--database-url", default="")
    parser.add_argument("--rounds", type=int, default=40)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        instant = asyncio.run(measure(DelayedModel(5, 0.0), Path(tmp) / "a", args.database_url, args.rounds, 1))
        single = asyncio.run(measure(DelayedModel(5, 0.2), Path(tmp) / "b", args.database_url, 5, 1))
        crowd = asyncio.run(measure(DelayedModel(5, 0.2), Path(tmp) / "c", args.database_url, 1, 100))
        dbos_one, dbos_crowd = asyncio.run(floor(Path(tmp) / "d"))
    peak_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    one = median(single)
    print(f"5-task round, instant model: median {median(instant) * 1000:.1f} ms over {len(instant)} rounds "
          f"(p90 {statistics.quantiles(instant, n=10)[-1] * 1000:.1f} ms; target <= 100 ms)")
    print(f"model answering after 200 ms: one round {one * 1000:.0f} ms, 100 concurrent rounds "
          f"{crowd[0] * 1000:.0f} ms, ratio {crowd[0] / one:.2f} (target <= 1.5)")
    print(f"DBOS alone, same shape with empty steps: one {dbos_one * 1000:.0f} ms, 100 concurrent "
          f"{dbos_crowd * 1000:.0f} ms, ratio {dbos_crowd / dbos_one:.2f} (the floor for rounds checkpointed in DBOS)")
    print(f"peak memory (max RSS of the process): {peak_mb:.0f} MiB")


if __name__ == "__main__":
    main()
