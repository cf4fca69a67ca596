"""The floor DBOS sets under the round-overhead benchmark: the same shape with empty steps.

Imported by round_overhead.py: a workflow of one step, five parallel steps and one step, each
answering after `delay` seconds, on the same tuned SQLite system database, one alone and 100 at
once. Whatever ratio this reaches, rounds that checkpoint every step in DBOS cannot beat.

`floor_system` is the floor under Foreman's own shape, as a system round_overhead.py runs beside
the others: a DBOS workflow whose plan and final answer are DBOS steps and whose five tasks are
plain coroutines, each making its model call through Foreman's model client to the same stub,
and nothing else (no database of its own, no agents). No design on DBOS and this client spends
less CPU on a round.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from pathlib import Path

import common  # noqa: F401  (the checkout on sys.path)
import sqlalchemy as sa
from dbos import DBOS

from agents.model import Model, ModelRequest
from app.llm.client import OpenAIModel
from app.rounds.supervisor import DBOS_THREADS, system_engine

DELAY = {"seconds": 0.2}
FLOOR_MODEL: dict[str, Model] = {}


@DBOS.step(name="bench.empty")
async def empty_step(i: int) -> int:
    await asyncio.sleep(DELAY["seconds"])
    return i


@DBOS.workflow(name="bench.shape")
async def shape(tasks: int) -> None:
    await empty_step(0)
    await asyncio.gather(*(empty_step(i) for i in range(1, tasks + 1)))
    await empty_step(tasks + 1)


def _ask(purpose: str, text: str) -> Awaitable:
    return FLOOR_MODEL["model"].complete(ModelRequest(purpose=purpose, messages=[{"role": "user", "content": text}]))


@DBOS.step(name="bench.floor_plan")
async def floor_plan(prompt: str) -> int:
    await _ask("plan", f"Plan: {prompt}")
    return 5


@DBOS.step(name="bench.floor_final")
async def floor_final(results: list[str]) -> None:
    await _ask("final", "Review: " + " ".join(results))


@DBOS.workflow(name="bench.floor_round")
async def floor_round(prompt: str) -> None:
    tasks = await floor_plan(prompt)
    answers = await asyncio.gather(*(_ask("task", f"Do t{i}.") for i in range(1, tasks + 1)))
    await floor_final([a.text for a in answers])


@DBOS.workflow(name="bench.floor_round_stepless")
async def floor_round_stepless(prompt: str) -> None:
    """The same round with no DBOS step: plan and final as plain calls, as the tasks are."""
    await _ask("plan", f"Plan: {prompt}")
    answers = await asyncio.gather(*(_ask("task", f"Do t{i}.") for i in range(1, 6)))
    await _ask("final", "Review: " + " ".join(a.text for a in answers))


@asynccontextmanager
async def floor_system(base_url: str, data_dir: Path, _pg_url: str, stepless: bool = False,
                       ) -> AsyncIterator[tuple[Callable[[str], Awaitable[None]], Callable[[], tuple[int, int]]]]:
    """DBOS on its tuned SQLite file and Foreman's model client, nothing else; yields (run one round,
    its statements and commits so far): a system for round_overhead.py. `stepless`: the round
    without DBOS steps (what it would cost if the journal were the plan's and final's checkpoint too)."""
    data_dir.mkdir(parents=True, exist_ok=True)
    url = f"sqlite:///{data_dir / 'dbos.sqlite'}"
    engine, counts = system_engine(url), [0, 0]

    @sa.event.listens_for(engine, "before_cursor_execute")
    def _statement(conn, cursor, statement: str, *args: object) -> None:
        counts[0] += not statement.lstrip().upper().startswith(("BEGIN", "COMMIT"))

    @sa.event.listens_for(engine, "commit")
    def _commit(conn) -> None:
        counts[1] += 1

    FLOOR_MODEL["model"] = model = OpenAIModel(base_url=base_url, api_key="none", model="stub", max_connections=1000)
    DBOS(config={"name": "bench", "system_database_url": url, "system_database_engine": engine,
                 "max_executor_threads": DBOS_THREADS, "log_level": "WARNING"})
    DBOS.launch()

    async def run(prompt: str) -> None:
        await (await DBOS.start_workflow_async(floor_round_stepless if stepless else floor_round, prompt)).get_result()

    try:
        yield run, lambda: (counts[0], counts[1])
    finally:
        DBOS.destroy()
        await model.aclose()


def stepless_floor_system(base_url: str, data_dir: Path, pg_url: str):
    return floor_system(base_url, data_dir, pg_url, stepless=True)


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
