"""A flow's map items shared among the live replicas (PostgreSQL): each item is a DBOS workflow on one
queue that every replica takes work off, so a large map scales out.

The run that meets the map (`agents.flows.iteration`) hands each item not yet settled to `spread`, at most
the map's `concurrency` at once (its global concurrency, whichever replicas run them), and records the run
the item settled; with no other live replica the items run in the round (as on SQLite), saving the queue's
polls. An item's workflow id is the round's and the item's path: a round resumed after a crash
or taken over meets the items it had sent and waits for them again, never running one twice; an item on
a replica that dies is recovered like any of its workflows (`app.rounds.replicas`). A stop cuts the items
where they run (each is tracked under its workflow, and the stop reaches every replica) and an item taken
off the queue after the stop runs nothing. On SQLite one process runs everything: items run in the round.

The queue is registered in DBOS's system database when a round first shares an item; every replica's
DBOS lists the queues there each second and takes items off it from then on.
"""

from __future__ import annotations

import asyncio
import contextvars
from collections.abc import Callable, Coroutine, Mapping
from typing import Any, TypeVar

import msgspec
from dbos import DBOS, EnqueueOptions

from agents.flows import ItemRunner, Node, NodeRun

QUEUE = "foreman.map-items"
WORKFLOW = "foreman.map_item"  # `app.rounds.map_items.map_item`
POLL_SECONDS = 0.5  # how often a replica looks for items on the queue, and a waiting run for their results
T = TypeVar("T")

_registered: asyncio.Future[Any] | None = None
_HERE = object()  # what `spread` finds for an item to run in the round


def item_id(workflow_id: str, round_no: int, path: str) -> str:
    """The DBOS workflow id of a map item: sending it twice runs it once."""
    return f"{workflow_id}:{round_no}:item:{path}"


async def _outside(work: Coroutine[Any, Any, T]) -> T:
    """`work` outside the round's DBOS workflow: enqueued items are not its recorded children (their order
    depends on which item finishes first, which a replay would not meet again)."""
    return await asyncio.create_task(work, context=contextvars.Context())


async def _register(workers: int) -> None:
    """The queue in DBOS's system database, once per process: `workers` items a replica runs at once."""
    global _registered
    if _registered is None:
        _registered = asyncio.ensure_future(DBOS.register_queue_async(
            QUEUE, worker_concurrency=workers, polling_interval_sec=POLL_SECONDS))
    try:
        await asyncio.shield(_registered)
    except Exception:
        _registered = None  # tried again by the next item
        raise


def spreader(journal: Any, flow_hash: str, inputs: Mapping[str, Any], workers: int,
             peers: Callable[[], int]) -> ItemRunner:
    """The `ItemRunner` of one flow round's run (its `RoundJournal`): each item enqueued for any replica,
    and the run it settled awaited; with no other live replica (`peers`), None: the item runs in the round,
    unless it was sent before (by this round before a crash or a takeover), whose run is awaited then."""
    arguments = msgspec.json.encode(inputs).decode()

    async def spread(body: Node, path: str, extra: Mapping[str, Any]) -> NodeRun | None:
        wid = item_id(journal.workflow_id, journal.round_no, path)

        async def run() -> Any:
            if not peers():
                if await DBOS.get_workflow_status_async(wid) is None:
                    return _HERE
                handle: Any = await DBOS.retrieve_workflow_async(wid)
            else:
                await journal.flush()  # what it held (the runs before the map): the item's replica reads them
                journal.seq = None  # other replicas write this round's node runs too: each write reads the last seq
                await _register(workers)
                options: EnqueueOptions = {"workflow_name": WORKFLOW, "queue_name": QUEUE, "workflow_id": wid,
                                           "workflow_id_reuse_policy": "return-existing"}
                handle = await DBOS.enqueue_workflow_with_options_async(
                    options, journal.workflow_id, journal.round_no, flow_hash, arguments,
                    msgspec.json.encode(body).decode(), path, msgspec.json.encode(dict(extra)).decode())
            return await handle.get_result(polling_interval_sec=POLL_SECONDS)

        done = await _outside(run())
        if done is _HERE:
            return None
        if done is None:
            return NodeRun(path, body.id, body.type, "failed", error="the item was not run: the round had ended")
        return msgspec.convert(done, NodeRun)

    return spread
