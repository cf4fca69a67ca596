"""Worker processes end at once when their pool is ended (`agents.toolkit.cpu.end_pool`): a service on
SIGTERM does not wait for a worker's warm-up or batch, which on a loaded machine got so little CPU that
a service took over 30 s to end (the CI run of stop 63)."""

from __future__ import annotations

import os
import threading
import time
from concurrent.futures import CancelledError
from concurrent.futures.process import BrokenProcessPool

import pytest

from agents.toolkit.cpu import end_pool, worker_pool


def test_ending_a_pool_kills_a_worker_in_the_middle_of_its_work():
    pool = worker_pool(1)
    worker = pool.submit(os.getpid).result()  # the worker is up
    busy = pool.submit(time.sleep, 3600)  # an hour of work under way
    queued = pool.submit(time.sleep, 3600)
    ender = threading.Thread(target=end_pool, args=(pool,))
    ender.start()
    ender.join(120)  # a liveness bound against the hour, not a speed target
    assert not ender.is_alive(), "end_pool waited for the work under way"
    with pytest.raises((BrokenProcessPool, CancelledError)):
        busy.result(0)
    with pytest.raises((BrokenProcessPool, CancelledError)):
        queued.result(0)
    with pytest.raises(ProcessLookupError):
        os.kill(worker, 0)
