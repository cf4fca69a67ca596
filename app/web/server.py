"""uvicorn with a graceful SIGTERM, for rolling restarts of replicas."""

from __future__ import annotations

import asyncio
import gc
import signal
from types import FrameType
from typing import Any

import uvicorn


def settle_heap() -> None:
    """Exempt what start-up built from the collector's full passes (a hook at the end of start-up).

    Start-up leaves about 160,000 long-lived objects (the imported libraries, the app). While
    rounds ran, a full collection came about every 10 s and walked them all: 100-310 ms (on the
    loaded 2-core machine) with the event loop and every thread stopped, and every item in
    flight waited for it. Frozen, they are never walked again: full passes took 6-11 ms.
    """
    gc.collect()  # what start-up threw away is freed, not frozen
    gc.freeze()


class Server(uvicorn.Server):
    """uvicorn, whose first SIGTERM drains the engine and hands its rounds over before uvicorn stops.

    uvicorn alone closes its socket at once, so /ready could not answer 503 to the load balancer
    while the running steps finish. A second SIGTERM, or SIGINT, stops at once as before.
    """

    def __init__(self, config: uvicorn.Config, engine: Any) -> None:  # app.rounds.supervisor.Engine
        super().__init__(config)
        self.engine = engine
        self._loop: asyncio.AbstractEventLoop | None = None
        self._draining = False
        self._drain: asyncio.Task[None] | None = None  # held, so the loop does not drop the task

    async def serve(self, sockets: Any = None) -> None:
        self._loop = asyncio.get_running_loop()
        await super().serve(sockets)

    def handle_exit(self, sig: int, frame: FrameType | None) -> None:
        if sig != signal.SIGTERM or self._loop is None or self._draining:
            return super().handle_exit(sig, frame)
        self._draining = True
        self._loop.call_soon_threadsafe(self._begin_drain, sig, frame)

    def _begin_drain(self, sig: int, frame: FrameType | None) -> None:
        async def drain() -> None:
            try:
                await self.engine.shutdown()
            finally:
                super(Server, self).handle_exit(sig, frame)

        self._drain = asyncio.get_running_loop().create_task(drain())
