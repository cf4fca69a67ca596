"""Ports for the servers tests start: below Linux's ephemeral range, one block per xdist worker.

A port the kernel hands out for `bind(0)` lies in the ephemeral range (32768-60999 here), which
outgoing connections draw from too: a process started later to listen on it can find it taken
in between (seen: `[Errno 98] address already in use` for a replica). Ports below that range are
only ever taken by an explicit bind, so each worker walks its own block of them in turn, skipping
any that something on the machine already holds, and never hands out the same port twice in a row.
"""

from __future__ import annotations

import itertools
import os
import random
import socket

_LOW, _HIGH = 20000, 32000
_BLOCK = 1000


def _worker_block() -> range:
    worker = os.environ.get("PYTEST_XDIST_WORKER", "gw0").removeprefix("gw")
    index = int(worker) if worker.isdigit() else 0
    start = _LOW + (index * _BLOCK) % (_HIGH - _LOW)
    return range(start, start + _BLOCK)


def _walk() -> itertools.cycle[int]:
    block = _worker_block()
    first = random.randrange(len(block))  # a rerun of the same worker does not meet its last run's ports
    return itertools.cycle([*block[first:], *block[:first]])


_ports = _walk()


def bindable(port: int) -> bool:
    with socket.socket() as sock:
        try:
            sock.bind(("127.0.0.1", port))
        except OSError:
            return False
    return True


def free_port() -> int:
    """A port on 127.0.0.1 nothing holds now and no other test worker will hand out."""
    for _ in range(_BLOCK):
        port = next(_ports)
        if bindable(port):
            return port
    raise RuntimeError(f"no free port in {_worker_block()}")
