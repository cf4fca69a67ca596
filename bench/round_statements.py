"""Statements and commits per round, ours and DBOS's, and CPU per round: a 5-task round, instant model.

    python bench/round_statements.py [--root CHECKOUT] [--database-url URL] [--rounds 30]

Counts every statement and commit SQLAlchemy runs on the service's database and on DBOS's
system database (events on every engine) over sequential rounds after a warm-up one, for the
tree at --root (default: this one), so two checkouts compare in one sitting.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path


def count(counts: Counter) -> None:
    from sqlalchemy import event
    from sqlalchemy.engine import Engine

    def side(conn) -> str:
        url = conn.engine.url
        return "dbos" if "dbos" in str(url.database) or url.drivername.endswith("psycopg") else "ours"

    @event.listens_for(Engine, "before_cursor_execute")
    def _statement(conn, cursor, statement, *args) -> None:
        kind = "commits" if statement.strip().upper() == "COMMIT" else "statements"
        counts[side(conn), kind] += 1

    @event.listens_for(Engine, "commit")
    def _commit(conn) -> None:
        counts[side(conn), "commits"] += 1


async def measure(data_dir: Path, database_url: str, rounds: int) -> tuple[Counter, float]:
    from common import DelayedModel

    from agents.registry import build_registry
    from app.config import Settings
    from app.contract.schemas import StartRequest
    from app.services.workflows import WorkflowService
    from app.store.records import Owner

    settings = Settings(data_dir=data_dir, database_url=database_url, task_concurrency=5)
    registry = build_registry(entry_points=False)
    try:
        from app.main import build_engine
        engine = build_engine(settings, DelayedModel(5, 0.0), registry)
        repo = engine.rt.repo
    except ImportError:  # a tree from before the engine and its dependencies were split
        from app.rounds.supervisor import Runtime
        engine = Runtime(settings, DelayedModel(5, 0.0), registry)
        repo = engine.repo
    await engine.start()
    service = WorkflowService(engine)
    owner = Owner(1, 1)

    async def one(prompt: str) -> None:
        answer = await service.start(owner, None, StartRequest(prompt=prompt), None)
        await engine.wait_round(answer["id"])
        store = repo.workflows if hasattr(repo, "messages") else repo  # one store per aggregate, or one repository
        assert (await store.workflow(owner, answer["id"])).status == "completed"

    counts: Counter = Counter()
    try:
        await one("warm up")
        count(counts)
        cpu = time.process_time()
        for i in range(rounds):
            await one(f"round {i}")
        cpu = time.process_time() - cpu
    finally:
        await engine.close()
    return counts, cpu


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--root", default=str(Path(__file__).resolve().parents[1]))
    parser.add_argument("--database-url", default="")
    parser.add_argument("--rounds", type=int, default=30)
    args = parser.parse_args()
    sys.path.insert(0, args.root)
    # The tree measured, imported before `common` puts this one first on the path: all three packages.
    import agents  # noqa: F401
    import app  # noqa: F401
    import extractors  # noqa: F401

    sys.path.insert(0, str(Path(__file__).resolve().parent))
    with tempfile.TemporaryDirectory() as tmp:
        counts, cpu = asyncio.run(measure(Path(tmp), args.database_url, args.rounds))
    n = args.rounds
    print(f"{args.root} on {'PostgreSQL' if args.database_url else 'SQLite'}, {n} rounds of 5 tasks, instant model:")
    for side in ("ours", "dbos"):
        print(f"  {side}: {counts[side, 'statements'] / n:.1f} statements, {counts[side, 'commits'] / n:.1f} commits "
              "per round")
    print(f"  CPU per round: {cpu / n * 1000:.1f} ms")


if __name__ == "__main__":
    main()
