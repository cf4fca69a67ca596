"""Replicas on one PostgreSQL database that take over each other's rounds.

Each replica beats in the replicas table. When one has been silent for longer than
HEARTBEAT_TIMEOUT_SECONDS, or said it is leaving (a graceful shutdown), every live replica
tries a compare-and-set on its row; the one that wins hands the silent replica's DBOS executor
to DBOS's own recovery, which puts its pending rounds back on DBOS's queue, from which exactly
one live replica dequeues each and resumes it from its last checkpoint. A replica that was
only paused finds its row taken at its next beat: its rounds' writes are already refused (see
app.store.ownership); it cancels its local rounds, puts back on the queue any of its own that no one
took, and beats again as a live replica.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from typing import Protocol

from app.store.repository.replicas import ReplicaStore

log = logging.getLogger("foreman.replicas")

Recover = Callable[[list[str]], Awaitable[object]]


class Observer(Protocol):
    """What the metrics see of takeovers and heartbeats (`app.metrics.ReplicaMetrics`)."""

    def took_over(self, executor_id: str) -> None:
        """This replica took `executor_id` over."""

    def heartbeat_ages(self, ages: dict[str, float]) -> None:
        """Seconds since each other live replica's last heartbeat."""


class Unobserved:
    """The observer that records nothing."""

    def took_over(self, executor_id: str) -> None:
        pass

    def heartbeat_ages(self, ages: dict[str, float]) -> None:
        pass


class Replicas:
    """This replica's heartbeat, and the takeover of silent ones."""

    def __init__(self, heartbeats: ReplicaStore, executor_id: str, timeout: float, recover: Recover,
                 on_lost: Callable[[], Awaitable[None]], observer: Observer | None = None) -> None:
        self.heartbeats = heartbeats
        self.me = executor_id
        self.timeout = timeout
        # A beat several times per timeout: one late beat never makes a live replica look silent.
        # The same tick looks for silent replicas, so one that left is taken over within a tick.
        self.interval = min(1.0, timeout / 4)
        self.recover = recover
        self.on_lost = on_lost
        self.observer: Observer = observer or Unobserved()
        self.takes_over = True  # False while draining: a replica on its way out takes on nothing
        self.peers = 0  # the other replicas that beat within the timeout at the last tick
        self._task: asyncio.Task[None] | None = None

    async def join(self) -> None:
        """Register as alive (before DBOS launches, so every executor that may own rounds has a row)."""
        await self.heartbeats.register(self.me)

    def start(self) -> None:
        self._task = asyncio.create_task(self._run(), name="foreman-replicas")

    async def stop(self) -> None:
        if self._task is not None:
            self._task.cancel()
            await asyncio.gather(self._task, return_exceptions=True)
            self._task = None

    async def leave(self) -> None:
        """Stop beating and hand this replica's rounds over to the others at once."""
        await self.stop()
        await self.heartbeats.leave(self.me)

    async def others_alive(self) -> bool:
        """Whether another replica has beaten within the timeout (one that could take this one's rounds)."""
        return any(age < self.timeout for age in (await self.heartbeats.ages(self.me)).values())

    async def _run(self) -> None:
        while True:
            try:
                await self.tick()
            except asyncio.CancelledError:
                raise
            except Exception:  # a passing database error must not end the heartbeat
                log.exception("Heartbeat of replica %s failed; trying again.", self.me)
            await asyncio.sleep(self.interval)

    async def tick(self) -> None:
        """Beat (or notice this replica was taken over), then take over the silent replicas."""
        if not await self.heartbeats.beat(self.me):
            log.warning("Replica %s was silent too long and its rounds were taken over; it stops its own "
                        "copies of them and carries on as a fresh replica.", self.me)
            await self.on_lost()
            await self.recover([self.me])  # its rounds that no one took (started during the pause) go back
            await self.heartbeats.register(self.me)
        if not self.takes_over:
            return
        for silent in await self.heartbeats.silent(self.timeout, self.me):
            executors = await self.heartbeats.claim(silent, self.me, self.timeout)
            if executors is None:
                continue  # another replica won the compare-and-set
            log.warning("Replica %s took over replica %s: its rounds resume from their last checkpoints.",
                        self.me, silent)
            await self.recover(executors)
            self.observer.took_over(silent)
        ages = await self.heartbeats.ages(self.me)
        self.peers = sum(age < self.timeout for age in ages.values())
        self.observer.heartbeat_ages(ages)
