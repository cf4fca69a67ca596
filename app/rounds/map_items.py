"""The DBOS workflow that runs one map item a flow round shared (`app.rounds.item_queue`), on whichever
replica took it off the queue."""

from __future__ import annotations

import asyncio
from typing import Any

import msgspec
from dbos import DBOS

from agents.flows import Node
from app.rounds.flow_run import run_map_item
from app.rounds.handle import current
from app.rounds.item_queue import WORKFLOW


@DBOS.workflow(name=WORKFLOW, max_recovery_attempts=None)
async def map_item(workflow_id: str, round_no: int, flow_hash: str, inputs: str, body: str, path: str,
                   extra: str) -> dict[str, Any] | None:
    """One map item, run and settled here; None when its round no longer runs (nothing is run then)."""
    engine = current()
    rt = engine.rt
    row = await rt.repo.workflows.workflow(None, workflow_id)
    if row is None or row.status != "running" or row.current_round != round_no:
        return None  # stopped, deleted or over before this item was taken off the queue
    task = asyncio.current_task()
    engine.track(workflow_id, task)  # a stop of the round cuts the item here, on any replica
    try:
        run = await run_map_item(rt, workflow_id, round_no, flow_hash, msgspec.json.decode(inputs),
                                 msgspec.json.decode(body, type=Node), path, msgspec.json.decode(extra))
    finally:
        engine.untrack(workflow_id, task)
        if not engine.is_running(workflow_id):
            rt.rounds.forget(workflow_id, round_no)  # the round's input, read here for its items
    return None if run is None else msgspec.to_builtins(run)
