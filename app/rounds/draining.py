"""Draining: on SIGTERM, no new step starts; alone (no replica to take the rounds), running steps may finish first."""

from __future__ import annotations

import asyncio
import contextlib
import functools
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import ParamSpec, TypeVar

from app.rounds import handle

P = ParamSpec("P")
T = TypeVar("T")


class Drain:
    """Counts the steps running in this process; once draining, a round about to start a step waits
    there (until it is cancelled and handed over) instead of starting it."""

    def __init__(self) -> None:
        self.draining = False
        self._running = 0
        self._idle = asyncio.Event()
        self._idle.set()

    @contextlib.asynccontextmanager
    async def step(self) -> AsyncIterator[None]:
        """Run one step, unless the process is draining: then wait to be cancelled."""
        if self.draining:
            await asyncio.Future()  # never done: the handover cancels this round's task here
        self._running += 1
        self._idle.clear()
        try:
            yield
        finally:
            self._running -= 1
            if not self._running:
                self._idle.set()

    @property
    def running(self) -> int:
        return self._running

    async def begin(self, grace: float) -> bool:
        """Start no new step; wait up to `grace` seconds for the running ones. True when all finished."""
        self.draining = True
        try:
            await asyncio.wait_for(self._idle.wait(), grace)
        except TimeoutError:
            return False
        return True


def step() -> contextlib.AbstractAsyncContextManager[None]:
    """Where a round's step runs: it starts only while this process is not draining."""
    drain: Drain = handle.current().drain
    return drain.step()


def gated(step: Callable[P, Awaitable[T]]) -> Callable[P, Awaitable[T]]:
    """A round's step (or task) that starts only while this process is not draining."""
    @functools.wraps(step)
    async def run(*args: P.args, **kwargs: P.kwargs) -> T:
        async with handle.current().drain.step():
            return await step(*args, **kwargs)

    return run
