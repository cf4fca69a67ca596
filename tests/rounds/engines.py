"""The production round engine on a real database for tests that drive rounds through the services
(offline model, no HTTP): started and closed around a test, a round started and waited for."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

from agents.offline import OfflineModel
from agents.registry import build_registry
from app.contract.schemas import StartRequest
from app.main import build_engine
from app.rounds.supervisor import Engine
from app.services.workflows import WorkflowService
from app.store.records import Owner
from tests.harness import settings_for

OWNER = Owner(1, 1)


@asynccontextmanager
async def engine_on(tmp_path: Path, database_url: str, reach: int | None = None) -> AsyncIterator[Engine]:
    """A started engine; `reach`: the tokens of history a round reads (its memory's reach)."""
    engine = build_engine(settings_for(tmp_path, database_url), OfflineModel(), build_registry(entry_points=False))
    await engine.start()
    if reach is not None:
        engine.rt.runner.history_reach = reach
    try:
        yield engine
    finally:
        await engine.close()


async def run_round(engine: Engine, prompt: str, workflow_id: str | None = None, files: list[int] | None = None) -> str:
    """A round of `OWNER`'s, waited for; it must complete. The workflow's id."""
    answer = await WorkflowService(engine).start(OWNER, workflow_id, StartRequest(prompt=prompt, list_file_id=files or []),
                                                 None)
    await engine.wait_round(answer["id"])
    row = await engine.rt.repo.workflows.workflow(OWNER, answer["id"])
    assert row is not None and row.status == "completed", row and row.status
    return str(answer["id"])
