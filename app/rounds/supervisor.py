"""The round supervisor: DBOS's lifecycle, concurrency slots, tracking, immediate stop, reconciliation,
the replicas' heartbeat and takeover, and the drain on SIGTERM."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import sqlalchemy as sa
from dbos import DBOS, DBOSConfig, SetWorkflowID

from app.metrics import RoundTimer
from app.rounds import handle, resume, waiting
from app.rounds.draining import Drain
from app.rounds.leftovers import Collector
from app.rounds.map_items import map_item
from app.rounds.replicas import Observer, Replicas
from app.rounds.runtime import Runtime
from app.rounds.workflow import round_id, round_workflow
from app.store.notify import Listener
from app.store.records import NewLog

log = logging.getLogger("foreman.engine")

# DBOS's workflows, registered by their import, before it launches (it resumes them).
WORKFLOWS = (round_workflow, map_item)
RECONCILE_SECONDS = 2.0
DBOS_THREADS = 4

# A stop's cancel in DBOS's system database runs on its own thread: DBOS's async API queues it
# on its few executor threads behind the steps the running rounds record.
_STOPPER = ThreadPoolExecutor(max_workers=2, thread_name_prefix="foreman-stop")

# DBOS states after which nothing will run the round again.
_FINISHED = {"SUCCESS", "ERROR", "CANCELLED", "MAX_RECOVERY_ATTEMPTS_EXCEEDED"}


def system_engine(url: str) -> sa.Engine:
    """DBOS's SQLite system database, tuned as ours: WAL and NORMAL sync instead of an fsync per commit.

    DBOS's default SQLite engine keeps the rollback journal with full sync, which costs
    several fsyncs for each recorded step; WAL with NORMAL survives a process crash intact.
    """
    engine = sa.create_engine(url, pool_size=1, max_overflow=0, pool_timeout=600)

    @sa.event.listens_for(engine, "connect")
    def _pragmas(dbapi_conn: Any, _record: Any) -> None:
        dbapi_conn.isolation_level = None
        dbapi_conn.execute("PRAGMA journal_mode=WAL")
        dbapi_conn.execute("PRAGMA synchronous=NORMAL")
        dbapi_conn.execute("PRAGMA busy_timeout=30000")
        dbapi_conn.execute("PRAGMA foreign_keys=ON")
        dbapi_conn.isolation_level = "IMMEDIATE"  # as DBOS's own engine: serialised writers

    return engine


def cancel_once(tasks: list[asyncio.Task[Any]]) -> None:
    """Cancel each task not already being cancelled. A second cancel would interrupt the first one's
    cleanup mid-way: an MCP tool call's courtesy cancellation to its server (the SDK shields that write
    from anyio's scopes, not from another `Task.cancel`) never went out."""
    for task in tasks:
        if not task.cancelling():
            task.cancel()


def stop_dequeuing() -> None:
    """This process takes no more rounds off DBOS's queue, where recovery puts a taken-over replica's
    rounds: one it took while leaving would be left to no one."""
    _internal_queue()._worker_concurrency = 0


def start_dequeuing() -> None:
    """Undo `stop_dequeuing` before DBOS launches. DBOS's registry, with its internal queue, outlives
    DBOS.destroy(): an engine started again in the same process (a test's second server) inherited
    the zero of the one that closed and never took a taken-over replica's rounds off the queue."""
    _internal_queue()._worker_concurrency = None  # the internal queue's own default: no limit


def _internal_queue() -> Any:
    from dbos._dbos import _get_dbos_instance  # DBOS has no public switch for its internal queue

    return _get_dbos_instance()._registry.get_internal_queue()


class Engine:
    """Runs rounds as DBOS workflows: at most MAX_CONCURRENT_ROUNDS at once, stopped at once on request."""

    def __init__(self, rt: Runtime, observer: Observer | None = None) -> None:
        self.rt = rt
        self.ready = False
        self.startup_seconds: dict[str, float] = {}  # each part of start-up, in its order (the start-up log)
        self._tasks: dict[str, set[asyncio.Task[Any]]] = {}
        self._slots = asyncio.Semaphore(max(1, rt.settings.max_concurrent_rounds))
        self._reconciler: asyncio.Task[None] | None = None
        self._collector: asyncio.Task[None] | None = None
        self.collector = Collector(rt.repo.leftovers, rt.repo.files, rt.storage,
                                   rt.settings.unattached_upload_ttl_seconds, rt.settings.orphan_grace_seconds)
        self._rounds: dict[str, asyncio.Future[Any]] = {}
        self._launched: set[str] = set()  # rounds this process launched, until they begin (`resumed`)
        self._stops: set[asyncio.Future[None]] = set()  # stops whose cancel DBOS has yet to record
        self.periodic: list[Callable[[], Awaitable[None]]] = []  # run after each reconciliation
        self.go_on = resume.go_on  # a round's part after the user's decision (the round workflow calls it)
        self.listener = (None if rt.settings.is_sqlite
                         else Listener(rt.settings.app_database_url, rt.cursors, on_stop=self.cancel_local,
                                       application_name=f"foreman {rt.settings.executor_id}",
                                       on_draft=rt.journal.drafts.receive, on_steer=rt.journal.heard_steer))
        if self.listener is not None:
            rt.journal.drafts.sender = self.listener.send_drafts
        self.drain = Drain()
        # Replicas share a PostgreSQL database; on SQLite one process runs everything, and resumes its own.
        self.replicas = (None if rt.settings.is_sqlite else Replicas(
            rt.repo.replicas, rt.settings.executor_id, rt.settings.heartbeat_timeout_seconds,
            recover=lambda executors: asyncio.to_thread(DBOS._recover_pending_workflows, executors),
            on_lost=self.cancel_all, observer=observer))

    async def start(self) -> None:
        """Migrate the schema, launch DBOS (which resumes interrupted rounds), reconcile the rest."""
        settings = self.rt.settings
        settings.data_dir.mkdir(parents=True, exist_ok=True)
        began = time.monotonic()
        await self.rt.db.migrate()
        self._took("schema", began)
        if self.listener is not None:
            self.listener.start()
        if self.replicas is not None:
            await self.replicas.join()
        handle.install(self)  # before DBOS launches: it resumes interrupted rounds, which reach us here

        config: DBOSConfig = {
            "name": "foreman",
            "system_database_url": settings.system_database_url,
            "application_version": settings.app_version,
            "executor_id": settings.executor_id,
            "log_level": "WARNING",
            # DBOS's own default is a thread per concurrent checkpoint, without bound: 100 rounds of
            # five parallel tasks spawned hundreds of threads fighting over the GIL and one SQLite
            # connection. A small pool does the same checkpoints with less switching.
            "max_executor_threads": DBOS_THREADS,
        }
        if settings.is_sqlite:
            config["system_database_engine"] = system_engine(settings.system_database_url)
        else:
            # A paused replica's open transaction must not hold locks its taker waits on.
            config["sys_db_idle_transaction_timeout_sec"] = settings.heartbeat_timeout_seconds
            # DBOS's pool has no overflow: it opens at most DBOS_POOL_SIZE connections, plus the one
            # it takes out of the pool to LISTEN. Its connections carry the replica's name.
            config["sys_db_pool_size"] = settings.dbos_pool_size
            config["db_engine_kwargs"] = {"connect_args": {
                "application_name": f"foreman-dbos {settings.executor_id}"[:63]}}
        DBOS(config=config)
        start_dequeuing()
        began = time.monotonic()
        DBOS.launch()  # called on our loop, so DBOS resumes interrupted rounds on it
        self._took("rounds resumed", began)
        began = time.monotonic()
        await self.reconcile()
        self._took("reconciled", began)
        self._reconciler = asyncio.create_task(self._reconcile_forever())
        self._collector = asyncio.create_task(self.collector.run_forever(settings.housekeeping_seconds))  # uploads no one used, bytes without a row
        if self.replicas is not None:
            self.replicas.start()
        self.ready = True

    def _took(self, part: str, began: float) -> None:
        """A part of start-up is over: its time is logged now (a start that hangs or is killed shows
        how far it got) and kept for the summary line."""
        self.startup_seconds[part] = seconds = time.monotonic() - began
        log.info("Start-up: %s in %.2f s.", part, seconds)

    async def shutdown(self) -> None:
        """SIGTERM: refuse new rounds at once and hand this replica's rounds over.

        With another live replica to take them, they are released at once: their tasks are cancelled
        where they are and the replica leaves, so a survivor resumes them within its next heartbeat
        tick. What a step finished is in the journal (each step is one transaction) and stays done;
        a step cut short runs again on the survivor. Waiting for running steps instead cost a loaded
        machine up to SHUTDOWN_GRACE_SECONDS per SIGTERM (issue 51: 54.9 s to the rounds finished on
        a survivor against 10 s for a SIGKILL's takeover). Alone (SQLite, or the last replica),
        running steps may finish for up to SHUTDOWN_GRACE_SECONDS: the next start resumes after them.
        """
        self.ready = False
        if self._reconciler is None:  # SIGTERM before DBOS launched: nothing runs yet
            return
        stop_dequeuing()
        if self.replicas is not None:
            self.replicas.takes_over = False
        if await self._taker_alive():
            self.drain.draining = True  # a round between two steps starts no other meanwhile
            log.info("Shutting down: handing %d round(s) over at once; a step cut short runs again on the "
                     "replica that takes it.", len(self._tasks))
        else:
            grace = self.rt.settings.shutdown_grace_seconds
            finished = await self.drain.begin(grace)
            log.info("Shutting down: %s; handing %d round(s) over.", "running steps finished" if finished
                     else f"{self.drain.running} step(s) cut short by SHUTDOWN_GRACE_SECONDS ({grace:g} s)",
                     len(self._tasks))
        await self.cancel_all()
        if self.replicas is not None:
            await self.replicas.leave()

    async def _taker_alive(self) -> bool:
        """Whether another replica beats now, and can take this one's rounds at once."""
        if self.replicas is None:
            return False
        try:
            return await self.replicas.others_alive()
        except Exception:  # noqa: BLE001 - a database that does not answer: no one can take them now
            log.warning("Shutting down: the other replicas could not be read; running steps may finish first.",
                        exc_info=True)
            return False

    async def cancel_all(self) -> None:
        """Cancel every round task of this process, writing nothing; DBOS keeps the rounds pending."""
        tasks = [t for ts in self._tasks.values() for t in ts]
        cancel_once(tasks)
        if tasks:
            await asyncio.gather(*tasks, return_exceptions=True)

    async def close(self) -> None:
        """Stop running rounds' tasks and hand them over (or, alone, resume them on the next start)."""
        self.ready = False
        if self._collector is not None:
            self._collector.cancel()
        if self._reconciler is not None:
            self._reconciler.cancel()
            stop_dequeuing()
        try:
            await self.cancel_all()
            if self._stops:  # a stop answered just before stays a stop after a restart
                await asyncio.wait(list(self._stops))
            if self.replicas is not None:
                await self.replicas.leave()
        finally:
            # Whatever failed above: DBOS's instance is process-wide, and DBOS(config) hands a live one
            # back unchanged, so an engine started later in this process (a test's next server) would run
            # on this one's system database.
            DBOS.destroy()
        if self.rt.sandbox is not None:
            await self.rt.sandbox.close()
        if self.rt.documents.vectors is not None:
            await self.rt.documents.vectors.close()
        await self.rt.journal.drafts.close()
        if self.listener is not None:
            await self.listener.stop()
        await self.rt.db.dispose()
        close = getattr(self.rt.model, "aclose", None)
        if close is not None:
            await close()
        handle.release()

    async def reconcile(self) -> None:
        """No workflow stays `running` with nothing running it."""
        for row in await self.rt.repo.workflows.running_workflows():
            rid = round_id(row.id, row.current_round, row.segment)
            status = await DBOS.get_workflow_status_async(rid)
            if status is None:  # crashed between the start's (or a decision's) commit and the round's launch
                await self.launch(row.id, row.current_round, row.segment)
            elif status.status in _FINISHED and not self.is_running(row.id):
                await self.rt.journal.fail(
                    row.id, row.current_round,
                    "The round was interrupted and could not be resumed "
                    f"(the engine reports {status.status.lower()}); post again to retry.",
                    f"{rid}:reconcile",
                )

    async def _reconcile_forever(self) -> None:
        # DBOS gives up on a round that keeps crashing while it recovers it, after our start-up
        # pass; checking again now and then ends such rounds as failed without another restart.
        while True:
            await asyncio.sleep(RECONCILE_SECONDS)
            try:
                await self.reconcile()
                await waiting.expire_due(self.rt, self.launch)
                for job in self.periodic:
                    await job()
            except Exception:  # a passing database error must not end the loop
                log.exception("Reconciling running rounds failed; trying again later.")

    async def launch(self, workflow_id: str, round_no: int, segment: int = 0) -> None:
        """Run the round (its part after the user's `segment`-th decision) in the background, durably."""
        rid = round_id(workflow_id, round_no, segment)
        self._launched.add(rid)
        with SetWorkflowID(rid):
            handle = await DBOS.start_workflow_async(round_workflow, workflow_id, round_no, segment)
        task = getattr(handle, "task", None)
        if task is not None:
            self._rounds[workflow_id] = task
            task.add_done_callback(lambda done: self._rounds.pop(workflow_id, None)
                                   if self._rounds.get(workflow_id) is done else None)

    def resumed(self, workflow_id: str, round_no: int, segment: int = 0) -> bool:
        """Whether the round beginning now was launched by an earlier process (DBOS resumes it after a
        crash, or this replica took it over), not by this one: asked once, as it begins."""
        rid = round_id(workflow_id, round_no, segment)
        if rid in self._launched:
            self._launched.discard(rid)
            return False
        return True

    async def wait_round(self, workflow_id: str) -> None:
        """Wait until the round this process launched for the workflow has ended (however it ended)."""
        task = self._rounds.get(workflow_id)
        if task is not None:
            await asyncio.wait([task])

    def stop(self, workflow_id: str, round_no: int, segment: int = 0) -> asyncio.Future[None]:
        """Cancel the round at once: the task running it here now, its DBOS workflow on the stopper thread.

        The stop's answer waits for neither: the round's status, stopped in the database, already
        refuses its every later write, and a round task that is cancelled records nothing in DBOS.
        The future ends once DBOS says CANCELLED and the task has ended; `close` waits for it.
        """
        tasks = list(self._tasks.get(workflow_id, ()))
        cancel_once(tasks)
        self.rt.rounds.forget(workflow_id, round_no)
        rid = round_id(workflow_id, round_no, segment)
        cancel = asyncio.get_running_loop().run_in_executor(_STOPPER, DBOS.cancel_workflow, rid)
        settled = asyncio.ensure_future(self._settle(rid, cancel, tasks))
        self._stops.add(settled)
        settled.add_done_callback(self._stops.discard)
        return settled

    async def _settle(self, rid: str, cancel: asyncio.Future[None], tasks: list[asyncio.Task[Any]]) -> None:
        try:
            await cancel
        except Exception:  # the round writes nothing more; only a restart in between could run it again
            log.exception("Round %s is stopped but DBOS did not record its cancel.", rid)
        if tasks:
            await asyncio.wait(tasks, timeout=5)

    def cancel_local(self, workflow_id: str) -> None:
        """Cancel the round's task if this process runs it (a stop said in another process, or this one's
        own stop heard back from PostgreSQL: that task is already being cancelled and is left alone)."""
        cancel_once(list(self._tasks.get(workflow_id, ())))

    def track(self, workflow_id: str, task: asyncio.Task[Any] | None) -> None:
        if task is not None:
            self._tasks.setdefault(workflow_id, set()).add(task)

    def untrack(self, workflow_id: str, task: asyncio.Task[Any] | None) -> None:
        tasks = self._tasks.get(workflow_id)
        if tasks is not None:
            tasks.discard(task)
            if not tasks:
                del self._tasks[workflow_id]

    def is_running(self, workflow_id: str) -> bool:
        """Whether this process runs a round of the workflow right now."""
        return bool(self._tasks.get(workflow_id))

    @contextlib.asynccontextmanager
    async def slot(self, workflow_id: str, round_no: int) -> AsyncIterator[None]:
        """At most MAX_CONCURRENT_ROUNDS rounds run at once; the others wait and say so."""
        if self._slots.locked():
            await self.rt.journal.append(workflow_id, round_no, logs=[NewLog(
                f"{round_id(workflow_id, round_no)}:waiting",
                f"Waiting for a free slot: {self.rt.settings.max_concurrent_rounds} rounds are running.",
                agent_name="system", progress=0)])
        timer = RoundTimer()
        async with self._slots:
            timer.acquire()
            try:
                yield
            finally:
                timer.release()
                self.rt.rounds.forget(workflow_id, round_no)

