"""Extraction off the event loop: a small pool of worker processes with a time limit per file."""

from __future__ import annotations

import asyncio
import atexit
import contextlib
import logging
import multiprocessing
import os
import pickle
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from multiprocessing.connection import Connection

from extractors.base import Extraction
from extractors.detect import detect_mime
from extractors.ocr import ocr_available

log = logging.getLogger(__name__)

__all__ = ["ExtractionPool", "extract_isolated", "ocr_available", "shutdown_pool"]

_Job = tuple[bytes, str, "str | None", "str | None"]


WORKER_NICENESS = 10


def _serve(conn: Connection) -> None:
    """Worker process: extract the files it is sent, one at a time, until told to stop."""
    # pypdf logs every repaired cross-reference table; one line per odd file is noise here.
    logging.getLogger("pypdf").setLevel(logging.ERROR)
    # Extraction is background work: on a busy machine the service's own requests go first.
    with contextlib.suppress(OSError):
        os.nice(WORKER_NICENESS)
    from extractors import build_registry
    from extractors.registry import failure, finish

    registry = build_registry()
    while True:
        try:
            job = conn.recv()
        except (EOFError, OSError):
            return
        if job is None:
            return
        data, name, mime, password = job
        result = registry.extract(data, name, mime=mime, password=password)
        try:
            conn.send(result)
        except (pickle.PicklingError, TypeError, AttributeError) as error:
            # A plug-in put something unpicklable in its metadata; say so rather than die.
            conn.send(finish(failure(result.mime, "corrupt", name, f"the result could not be returned ({error})")))


class _Worker:
    """One worker process and our end of its pipe."""

    def __init__(self, context: multiprocessing.context.BaseContext) -> None:
        self.conn, child = context.Pipe()
        self.process = context.Process(target=_serve, args=(child,), daemon=True, name="foreman-extractor")
        self.process.start()
        child.close()

    def kill(self) -> None:
        self.process.kill()
        self.process.join(5)
        self.conn.close()


class ExtractionPool:
    """Up to `size` worker processes; a job past its time limit has its process killed and replaced.

    Each job waits on its pipe in a thread of our own, so the event loop never blocks and no
    asyncio primitive ties the pool to one loop.
    """

    def __init__(self, size: int | None = None) -> None:
        self.size = size or min(4, os.cpu_count() or 1)
        # forkserver: forking a process that runs an event loop and threads is unsafe.
        self._context = multiprocessing.get_context("forkserver")
        self._slots = threading.BoundedSemaphore(self.size)
        self._idle: list[_Worker] = []
        self._lock = threading.Lock()
        self._threads = ThreadPoolExecutor(max_workers=self.size * 2, thread_name_prefix="extraction")
        self._closed = False

    async def run(self, data: bytes, name: str, mime: str | None, password: str | None, timeout: float) -> Extraction:
        """Extract in a worker process; "timeout" when it takes longer than `timeout` seconds."""
        loop = asyncio.get_running_loop()
        return await loop.run_in_executor(self._threads, self._run, (data, name, mime, password), timeout)

    def _run(self, job: _Job, timeout: float) -> Extraction:
        data, name, mime, _ = job
        # The limit covers waiting for a free worker too, so a caller never waits longer.
        deadline = time.monotonic() + timeout
        # Typed results keep the file's type, so the caller can still say what it was.
        mime = mime or detect_mime(data, name)
        late = f"{name}: extraction stopped after the {timeout:g} s time limit."
        if not self._slots.acquire(timeout=max(0.0, deadline - time.monotonic())):
            return _notice(name, "timeout", f"{late} No worker became free in time.", mime)
        try:
            worker = self._take()
            try:
                worker.conn.send(job)
                if not worker.conn.poll(max(0.0, deadline - time.monotonic())):
                    worker.kill()
                    return _notice(name, "timeout", late, mime)
                result = worker.conn.recv()
            except (EOFError, OSError) as error:
                worker.kill()
                return _notice(name, "corrupt", f"{name}: the extraction process stopped unexpectedly ({error}).", mime)
            self._give_back(worker)
            return result
        finally:
            self._slots.release()

    def _take(self) -> _Worker:
        with self._lock:
            while self._idle:
                worker = self._idle.pop()
                if worker.process.is_alive():
                    return worker
                worker.kill()
        return _Worker(self._context)

    def _give_back(self, worker: _Worker) -> None:
        with self._lock:
            if not self._closed:
                self._idle.append(worker)
                return
        worker.kill()

    def shutdown(self) -> None:
        """Stop the idle workers; running jobs finish and their workers then stop."""
        with self._lock:
            self._closed = True
            idle, self._idle = self._idle, []
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


def _notice(name: str, status: str, sentence: str, mime: str = "application/octet-stream") -> Extraction:
    from extractors.registry import failure, finish

    return finish(failure(mime, status, name, sentence, sentence=sentence, extractor="runner"))


_pool: ExtractionPool | None = None
_pool_lock = threading.Lock()


def _shared_pool() -> ExtractionPool:
    global _pool
    with _pool_lock:
        if _pool is None:
            _pool = ExtractionPool()
            atexit.register(_pool.shutdown)
        return _pool


def shutdown_pool() -> None:
    """Stop the shared pool's workers (tests and service shutdown call this)."""
    global _pool
    with _pool_lock:
        pool, _pool = _pool, None
    if pool is not None:
        pool.shutdown()


async def extract_isolated(data: bytes, name: str, mime: str | None, password: str | None, timeout: float) -> Extraction:
    """Extract one file in a worker process within `timeout` seconds; never raises."""
    try:
        return await _shared_pool().run(data, name, mime, password, timeout)
    except asyncio.CancelledError:
        raise
    except Exception as error:  # noqa: BLE001 - the caller gets a result, never an exception
        log.exception("isolated extraction of %s failed", name)
        return _notice(name, "corrupt", f"{name}: extraction failed ({type(error).__name__}: {error}).")
