"""Long text work off the event loop, so one large document never stalls everyone's polls.

Counting the tokens of a book, chunking it or summarising it offline takes seconds of CPU. Run
on the event loop, that froze every request of every user for as long. Two places to run it:

- `off_loop`: a worker thread of this process. The loop keeps its turn, but the thread holds
  the GIL, so every hop the loop makes (each database statement, each answer) waits for it
  again; right for short work and for work that fills this process's caches.
- `off_gil`: a worker process. Seconds of CPU (the offline model over a book, a workbook of
  600 sheets, a book's full-text index) run there, and the loop answers a stop at once even
  while ten such rounds run (`bench/stop_latency.py`). The function and its arguments must
  pickle; the text is copied once each way, which costs milliseconds against seconds of work.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import multiprocessing
import os
import threading
import time
from collections.abc import Callable, Iterable
from concurrent.futures import ProcessPoolExecutor, ThreadPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from typing import Any, TypeVar

T = TypeVar("T")

# Text shorter than this is handled in place: the hop to a thread would cost more than the work.
LONG_TEXT = 20_000

# Its own threads: the loop's default pool is DBOS's, whose few threads record the rounds' steps.
_POOL = ThreadPoolExecutor(max_workers=2, thread_name_prefix="foreman-text")

WORKER_PROCESSES = 2  # the machine's cores; more would only queue on them
WORKER_NICENESS = 10  # background work, as extraction: on a busy machine the service's own requests go first

_processes: ProcessPoolExecutor | None = None
_loaders: tuple[Callable[[], Any], ...] = ()  # what each worker loads at its start (warm_processes)
_processes_lock = threading.Lock()


async def off_loop(fn: Callable[..., T], /, *args: Any, **kwargs: Any) -> T:
    """`fn(*args, **kwargs)` in a worker thread."""
    return await asyncio.get_running_loop().run_in_executor(_POOL, functools.partial(fn, *args, **kwargs))


async def off_loop_if_long(size: int, fn: Callable[..., T], /, *args: Any, **kwargs: Any) -> T:
    """`fn(*args, **kwargs)` in a worker thread when it works on `size` >= LONG_TEXT characters, else here."""
    if size >= LONG_TEXT:
        return await off_loop(fn, *args, **kwargs)
    return fn(*args, **kwargs)


async def off_gil(fn: Callable[..., T], /, *args: Any, **kwargs: Any) -> T:
    """`fn(*args, **kwargs)` in a worker process (fn and arguments must pickle)."""
    call = functools.partial(fn, *args, **kwargs)
    loop = asyncio.get_running_loop()
    try:
        return await loop.run_in_executor(_worker_processes(), call)
    except BrokenProcessPool:  # a worker died (killed, out of memory): start fresh ones, try once more
        _discard_processes()
        return await loop.run_in_executor(_worker_processes(), call)


async def off_gil_if_long(size: int, fn: Callable[..., T], /, *args: Any, **kwargs: Any) -> T:
    """`fn(*args, **kwargs)` in a worker process when it works on `size` >= LONG_TEXT characters, else here."""
    if size >= LONG_TEXT:
        return await off_gil(fn, *args, **kwargs)
    return fn(*args, **kwargs)


def warm_processes(*loaders: Callable[[], Any]) -> None:
    """Start the worker processes, each running `loaders` first (the tokenizer, the language
    detector: module-level functions, which pickle by name), and wait for them (blocking; call it
    from a thread). Workers started later, after one died, run the same loaders."""
    global _loaders
    _loaders = loaders
    pool = _worker_processes()
    for future in [pool.submit(os.getpid) for _ in range(WORKER_PROCESSES)]:
        future.result()


def text_size(items: Iterable[tuple[str, str]]) -> int:
    """Characters in a document's (name, text) items."""
    return sum(len(text) for _, text in items)


def worker_pool(size: int, *loaders: Callable[[], Any]) -> ProcessPoolExecutor:
    """`size` worker processes niced below the service (WORKER_NICENESS), ending with it (`end_with`), each
    running `loaders` first; forkserver: never fork this process, whose threads may hold locks at that moment."""
    return ProcessPoolExecutor(size, mp_context=multiprocessing.get_context("forkserver"), initializer=_start_worker,
                               initargs=(os.getpid(), loaders))


def _worker_processes() -> ProcessPoolExecutor:
    global _processes
    with _processes_lock:
        if _processes is None:
            _processes = worker_pool(WORKER_PROCESSES, *_loaders)
        return _processes


def stop_processes() -> None:
    """End the worker processes (blocking: the service calls it in a thread as it shuts down); a call
    of another app of this process that was under way is retried by `off_gil` in fresh ones."""
    global _processes
    with _processes_lock:
        pool, _processes = _processes, None
    if pool is not None:
        end_pool(pool)


def end_pool(pool: ProcessPoolExecutor) -> None:
    """Kill `pool`'s processes, then wait for the pool (blocking: call it from a thread).

    Work under way is not waited for: a worker's warm-up or batch is seconds of niced CPU, and on a
    loaded machine it got so little that a service took over 30 s to end on SIGTERM (the CI run of
    stop 63). Whoever needs the work redoes it. The pool is waited for even so: one left to the
    interpreter's exit leaves its queues' semaphores behind, and the resource tracker warns of them
    ("leaked semaphore objects") after the service has gone."""
    for process in list((getattr(pool, "_processes", None) or {}).values()):
        process.kill()
    pool.shutdown(wait=True, cancel_futures=True)


def _discard_processes() -> None:
    global _processes
    with _processes_lock:
        pool, _processes = _processes, None
    if pool is not None:
        pool.shutdown(wait=False, cancel_futures=True)


def _start_worker(service: int, loaders: tuple[Callable[[], Any], ...]) -> None:
    with contextlib.suppress(OSError):
        os.nice(WORKER_NICENESS)
    end_with(service)
    for load in loaders:
        load()


def end_with(service: int) -> None:
    """This worker process ends once the service process `service` has gone. A worker's parent is the
    fork server, not the service: without this, a killed service would leave its workers (and their
    fork server) running for good."""
    threading.Thread(target=_exit_with, args=(service,), name="foreman-orphan-check", daemon=True).start()


def _exit_with(service: int) -> None:
    while True:
        time.sleep(1.0)
        try:
            os.kill(service, 0)
        except ProcessLookupError:
            os._exit(0)
