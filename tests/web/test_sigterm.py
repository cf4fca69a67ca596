"""A service stopped with SIGTERM leaves nothing behind: its worker processes end with it, and
their queues' semaphores with them (multiprocessing's resource tracker, a process of its own that
outlives the service, warns of any it has to clean up)."""

from __future__ import annotations

import signal
from pathlib import Path

from tests.harness import Replica, wait_for


def _tracker(pid: int) -> int | None:
    """The process id of the resource tracker a process started (from any of its threads), if it has one."""
    for task in Path(f"/proc/{pid}/task").iterdir():
        for child in (task / "children").read_text().split():
            if "resource_tracker" in Path(f"/proc/{child}/cmdline").read_bytes().decode(errors="replace"):
                return int(child)
    return None


def test_a_sigterm_leaves_no_semaphore_for_the_resource_tracker(tmp_path: Path) -> None:
    replica = Replica(tmp_path, "", "alone").start()
    try:
        replica.wait_ready(timeout=240)
        assert replica.process is not None
        with replica.client() as client:  # the agents' worker processes are warmed at the start
            wait_for(lambda: client.get("/ready").status_code == 200, 60, "the service to be ready")
        tracker = wait_for(lambda: _tracker(replica.process.pid), 60, "the resource tracker to start")
        replica.signal(signal.SIGTERM)
        replica.process.wait(120)
        wait_for(lambda: not Path(f"/proc/{tracker}").exists(), 60, "the resource tracker to end")
        log = replica.log()
        assert "Application shutdown complete" in log, log[-2000:]
        assert "leaked semaphore" not in log, log[-2000:]
    finally:
        replica.stop()
