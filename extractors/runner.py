"""Extraction off the event loop: a small pool of worker processes with a time limit per file."""

from __future__ import annotations

import asyncio
import atexit
import contextlib
import logging
import multiprocessing
import os
import pickle
import resource
import threading
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from multiprocessing.connection import Connection

from extractors.base import Extraction
from extractors.detect import detect_mime
from extractors.limits import ExtractionLimits
from extractors.ocr import ocr_available

log = logging.getLogger(__name__)

__all__ = ["ExtractionPool", "configure", "extract_isolated", "ocr_available", "shutdown_pool", "warm_pool"]

# (bytes, name, mime, password, whether to report progress)
_Job = tuple[bytes, str, "str | None", "str | None", bool]
Progress = Callable[[int, int], None]

WORKER_NICENESS = 10
# A worker reports how far a long file is (pages done of total) at most this often: often
# enough that a person sees it move, rarely enough to cost nothing.
PROGRESS_SECONDS = 2.0
LONG_FILE = 32  # pages (or MB of text): a file this long reports each quarter read
PROGRESS = "progress"  # tag of a progress report on the pipe, ahead of the job's result
READY = "ready"
START_SECONDS = 120.0  # a worker that has not finished its imports by then is broken, not slow


MEMORY = "memory"  # the `extractor` of a file that needed more memory than a worker may have


def _serve(conn: Connection, limits: ExtractionLimits) -> None:
    """Worker process: extract the files it is sent, one at a time, until told to stop."""
    # pypdf logs every repaired cross-reference table; one line per odd file is noise here.
    logging.getLogger("pypdf").setLevel(logging.ERROR)
    # Extraction is background work: on a busy machine the service's own requests go first.
    with contextlib.suppress(OSError):
        os.nice(WORKER_NICENESS)
    from extractors import build_registry
    from extractors.registry import failure, finish

    registry = build_registry(limits=limits)
    _limit_memory(limits.memory_bytes)
    try:
        conn.send(READY)  # imports done: from here on, the time a job takes is the file's own work
    except OSError:  # the service stopped while this worker was starting
        return
    while True:
        try:
            job = conn.recv()
        except (EOFError, OSError):
            return
        if job is None:
            return
        data, name, mime, password, report = job
        reporter = _reporter(conn) if report else None
        try:
            result = registry.extract(data, name, mime=mime, password=password, progress=reporter)
        except MemoryError:
            # Over the address-space limit: this file fails alone; the worker ends (its heap may be
            # in pieces) and the pool starts a fresh one.
            del data, job
            conn.send(_notice(name, "refused", f"{name} was not read: reading it needs more memory than a "
                                               f"reader process may take ({limits.memory_bytes >> 20} MiB, "
                                               "EXTRACT_MEMORY_BYTES).", mime or "application/octet-stream",
                              extractor=MEMORY))
            return
        try:
            conn.send(result)
        except (pickle.PicklingError, TypeError, AttributeError) as error:
            # A plug-in put something unpicklable in its metadata; say so rather than die.
            log.warning("the extraction of %s could not be returned: %s", name, error)
            conn.send(finish(failure(result.mime, "corrupt", name, "the extraction could not be returned")))


def _limit_memory(extra: int) -> None:
    """Cap this process's address space at what it has now (its imports) plus `extra` bytes (0: no
    cap): past it an allocation fails with MemoryError instead of the kernel's OOM killer choosing a
    process of the service. Relative to the start, so the bound is the same whichever libraries load."""
    if not extra:
        return
    try:
        with open("/proc/self/statm") as statm:
            start = int(statm.read().split()[0]) * os.sysconf("SC_PAGE_SIZE")
    except (OSError, ValueError):
        start = 0
    try:
        _, hard = resource.getrlimit(resource.RLIMIT_AS)
        limit = start + extra if hard == resource.RLIM_INFINITY else min(start + extra, hard)
        resource.setrlimit(resource.RLIMIT_AS, (limit, hard))
    except (ValueError, OSError) as error:  # a platform without it: the inflation limits still hold
        log.warning("the reader process's memory could not be limited: %s", error)


def _reporter(conn: Connection) -> Progress:
    """A worker's progress callback: sends (PROGRESS, done, total) up the pipe every few seconds,
    and for a long file (LONG_FILE units or more) at least every quarter of it, however fast."""
    last, told = time.monotonic(), 0

    def report(done: int, total: int) -> None:
        nonlocal last, told
        quarter = total >= LONG_FILE and done - told >= total / 4
        if time.monotonic() - last >= PROGRESS_SECONDS or quarter:
            last, told = time.monotonic(), done
            conn.send((PROGRESS, done, total))

    return report


class _Worker:
    """One worker process and our end of its pipe."""

    def __init__(self, context: multiprocessing.context.ForkServerContext, limits: ExtractionLimits) -> None:
        self.conn, child = context.Pipe()
        self.process = context.Process(target=_serve, args=(child, limits), daemon=True, name="foreman-extractor")
        self.process.start()
        child.close()
        self.ready = False

    def wait_ready(self) -> bool:
        """Wait for the worker's imports (not counted in any file's time limit); False if it died."""
        if not self.ready:
            try:
                self.ready = self.conn.poll(START_SECONDS) and self.conn.recv() == READY
            except (EOFError, OSError):
                self.ready = False
        return self.ready

    def kill(self) -> None:
        self.process.kill()
        self.process.join(5)
        self.conn.close()


class ExtractionPool:
    """Up to `size` worker processes; a job past its time limit has its process killed and replaced.

    Each job waits on its pipe in a thread of our own, so the event loop never blocks and no
    asyncio primitive ties the pool to one loop.
    """

    def __init__(self, size: int | None = None, limits: ExtractionLimits | None = None) -> None:
        self.size = size or min(4, os.cpu_count() or 1)
        self.limits = limits or ExtractionLimits()
        # forkserver: forking a process that runs an event loop and threads is unsafe.
        self._context = multiprocessing.get_context("forkserver")
        # The document libraries are imported once, in the forkserver the workers are forked from (the
        # process's one forkserver, if it has not started yet): each worker then starts with them
        # rather than importing them itself (0.9 s of CPU per worker).
        self._context.set_forkserver_preload(["__main__", "extractors.formats"])
        self._slots = threading.BoundedSemaphore(self.size)
        self._idle: list[_Worker] = []
        self._starting: list[_Worker] = []  # started by `warm`, imports not done yet
        self._lock = threading.Lock()
        self._threads = ThreadPoolExecutor(max_workers=self.size * 2, thread_name_prefix="extraction")
        self._closed = False

    async def run(self, data: bytes, name: str, mime: str | None, password: str | None, timeout: float,
                  progress: Progress | None = None) -> Extraction:
        """Extract in a worker process; "timeout" when it takes longer than `timeout` seconds.

        `progress(done, total)` is called on the event loop while a long file is read.
        """
        loop = asyncio.get_running_loop()
        relay = None
        if progress is not None:
            def relay(done: int, total: int) -> None:
                loop.call_soon_threadsafe(progress, done, total)
        job = (data, name, mime, password, relay is not None)
        return await loop.run_in_executor(self._threads, self._run, job, timeout, relay)

    def warm(self) -> None:
        """Start every worker and wait for its imports, so the first files do not pay for them.

        A file that comes meanwhile takes a worker being started and waits for its imports, rather
        than start one more: after a crash on a loaded machine, the resumed round's read then shares
        the cores with the warm-up, not with the warm-up and a process of its own importing beside it.
        """
        with self._lock:
            missing = self.size - len(self._idle) - len(self._starting)
        started = [_Worker(self._context, self.limits) for _ in range(max(0, missing))]
        with self._lock:
            self._starting += started
        for worker in started:
            deadline = time.monotonic() + START_SECONDS
            while True:
                with self._lock:
                    if worker not in self._starting:
                        break  # a file took it: it waits for the imports itself
                    done = worker.conn.poll(0) or not worker.process.is_alive() or time.monotonic() > deadline
                    if done:
                        self._starting.remove(worker)
                if done:
                    if worker.conn.poll(0) and worker.wait_ready():
                        self._give_back(worker)
                    else:
                        worker.kill()
                    break
                with contextlib.suppress(OSError):  # a file took it meanwhile and ended it
                    worker.conn.poll(0.05)  # its imports are done when the pipe has its first word

    def _run(self, job: _Job, timeout: float, relay: Progress | None = None) -> Extraction:
        data, name, mime, _, _ = job
        # Typed results keep the file's type, so the caller can still say what it was.
        mime = mime or detect_mime(data, name)
        late = f"{name}: extraction stopped after the {timeout:g} s time limit."
        # The limit is the file's own work: time queued for a free worker, or a worker's start-up,
        # is not counted (a 217-byte CSV must not time out because a book is being read).
        self._slots.acquire()
        try:
            worker = self._take()
            cold, started = not worker.ready, time.monotonic()
            if not worker.wait_ready():
                worker.kill()
                return _notice(name, "corrupt", f"{name}: the extraction process did not start.", mime)
            startup = time.monotonic() - started if cold else 0.0
            deadline = time.monotonic() + timeout
            try:
                worker.conn.send(job)
                while True:
                    if not worker.conn.poll(max(0.0, deadline - time.monotonic())):
                        worker.kill()
                        return _notice(name, "timeout", late, mime)
                    result = worker.conn.recv()
                    if not (isinstance(result, tuple) and result[:1] == (PROGRESS,)):
                        break
                    if relay is not None:
                        relay(result[1], result[2])
            except (EOFError, OSError) as error:
                worker.kill()
                code = worker.process.exitcode
                log.warning("the extraction process for %s stopped unexpectedly (exit code %s): %s", name, code, error)
                return _notice(name, "corrupt", f"{name} was not read: its reader process stopped (exit code "
                                                f"{code}); the file may be damaged, or need more memory than a "
                                                "reader may use.", mime)
            extraction: Extraction = result  # after its progress tuples, the worker sends the result
            if extraction.items and extraction.items[0].metadata.get("extractor") == MEMORY:
                worker.kill()  # it ends by itself: do not hand it the next file
            else:
                self._give_back(worker)
            extraction.startup_seconds = startup
            return extraction
        finally:
            self._slots.release()

    def _take(self) -> _Worker:
        with self._lock:
            while self._idle:
                worker = self._idle.pop()
                if worker.process.is_alive():
                    return worker
                worker.kill()
            if self._starting:
                return self._starting.pop(0)
        return _Worker(self._context, self.limits)

    def _give_back(self, worker: _Worker) -> None:
        with self._lock:
            if not self._closed and len(self._idle) < self.size:
                self._idle.append(worker)
                return
        worker.kill()

    def shutdown(self) -> None:
        """Stop the idle workers; running jobs finish and their workers then stop."""
        with self._lock:
            self._closed = True
            idle, self._idle = self._idle, []
            starting, self._starting = self._starting, []
        for worker in starting:
            worker.kill()
        for worker in idle:
            try:
                worker.conn.send(None)
                worker.process.join(2)
            except OSError:
                pass
            if worker.process.is_alive():
                worker.kill()
            worker.conn.close()
        self._threads.shutdown(wait=False)


def _notice(name: str, status: str, sentence: str, mime: str = "application/octet-stream",
            extractor: str = "runner") -> Extraction:
    from extractors.registry import failure, finish

    return finish(failure(mime, status, name, sentence, sentence=sentence, extractor=extractor))


_pool: ExtractionPool | None = None
_pool_lock = threading.Lock()
_limits = ExtractionLimits()


def configure(limits: ExtractionLimits) -> None:
    """The limits of the shared pool's workers (the service's settings); a pool running with
    others is stopped, and the next file starts one with these."""
    global _limits
    with _pool_lock:
        changed, _limits = limits != _limits, limits
    if changed:
        shutdown_pool()


def _shared_pool() -> ExtractionPool:
    global _pool
    with _pool_lock:
        if _pool is None:
            _pool = ExtractionPool(limits=_limits)
            atexit.register(_pool.shutdown)
        return _pool


def warm_pool() -> None:
    """Start the shared pool's workers now (blocking: call it in a thread)."""
    _shared_pool().warm()


def shutdown_pool() -> None:
    """Stop the shared pool's workers (tests and service shutdown call this)."""
    global _pool
    with _pool_lock:
        pool, _pool = _pool, None
    if pool is not None:
        pool.shutdown()


async def extract_isolated(data: bytes, name: str, mime: str | None, password: str | None, timeout: float,
                           progress: Progress | None = None) -> Extraction:
    """Extract one file in a worker process within `timeout` seconds; never raises.

    `progress(done, total)`, when given, is called on the event loop every few seconds while
    a long file is read.
    """
    try:
        return await _shared_pool().run(data, name, mime, password, timeout, progress)
    except asyncio.CancelledError:
        raise
    except Exception:  # the caller gets a result, never an exception
        log.exception("isolated extraction of %s failed", name)
        return _notice(name, "corrupt", f"{name}: extraction failed for a reason of the service; try again.")
