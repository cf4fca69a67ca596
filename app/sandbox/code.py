"""The `code` node's executor: user Python in a confined worker process, with a warm pool.

Each run takes a worker that has already confined itself (`app/sandbox/confinement.py`: its own
mount, network, IPC and UTS namespaces, a chroot holding only the standard library read-only and a
scratch tmpfs, a user id of its own, rlimits and a seccomp filter) and is waiting for its one job;
the worker exits after it, and the pool starts another in the background. A run never happens in
the service's process or on the event loop: the loop only writes the job and awaits the answer on a
pipe. A stop (cancelling `run_code`'s task) and the wall-clock timeout kill the worker's process
group. Where the confinement cannot be had, `available` is False, `reason` says why, and
`run_code` refuses: code never runs unconfined.

Chosen by measurement over bubblewrap and a WebAssembly CPython (`bench/code_node.py` prints the
figures; docs/sandbox.md has them): the kernel's own calls through ctypes need nothing installed,
and a warm worker answers a trivial run in about a millisecond.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import json
import os
import signal
import struct
import sys
import time
from collections.abc import Coroutine, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from app.sandbox import confinement

WORKER = Path(__file__).with_name("worker.py")
# Each worker runs as a user id of its own, so no worker can signal, trace or limit another.
FIRST_UID, UID_COUNT = 200_000, 10_000
FRAME_SLACK = 64 * 1024  # the answer's JSON around the result
START_TIMEOUT = 30.0
DRAIN_SECONDS = 5.0  # what a killed worker left in its pipe is read away within this
Limit = Literal["time", "memory", "output"]


@dataclass(frozen=True)
class CodeLimits:
    """One run's bounds: wall-clock time, address space and the size of what it prints and returns."""

    timeout_seconds: float = 10.0
    memory_mb: int = 256
    max_output_bytes: int = 1_000_000


@dataclass(frozen=True)
class CodeResult:
    """What a run came to: `result` (JSON) when `ok`, else `error` and, for a killed worker, `limit`."""

    ok: bool
    result: Any
    error: str | None
    limit: Limit | None
    cpu_seconds: float
    wall_seconds: float


class _Worker:
    """One confined process waiting for its job."""

    def __init__(self, process: asyncio.subprocess.Process) -> None:
        self.process = process

    @property
    def pid(self) -> int:
        return self.process.pid

    async def read_frame(self, limit: int) -> Any:
        assert self.process.stdout is not None
        header = await self.process.stdout.readexactly(4)
        size = struct.unpack(">I", header)[0]
        if size > limit:
            raise _TooLargeError(size)
        return json.loads(await self.process.stdout.readexactly(size))

    async def send(self, payload: Mapping[str, Any]) -> None:
        assert self.process.stdin is not None
        data = json.dumps(payload).encode()
        self.process.stdin.write(struct.pack(">I", len(data)) + data)
        await self.process.stdin.drain()

    def cpu_seconds(self) -> float:
        """User and system CPU so far, from /proc (0.0 once the process is gone)."""
        try:
            fields = Path(f"/proc/{self.pid}/stat").read_text().rsplit(")", 1)[1].split()
        except (OSError, IndexError):
            return 0.0
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")

    async def kill(self) -> None:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(self.pid, signal.SIGKILL)
        with contextlib.suppress(ProcessLookupError):
            self.process.kill()
        # `wait` returns once the process's pipes are closed too. What a flood of output left unread
        # paused the reading of its pipe, and a paused pipe never sees its end: read it away (the pipe
        # holds what the killed process wrote, 64 KiB at most), or the wait never returns.
        if self.process.stdout is not None:
            with contextlib.suppress(TimeoutError, OSError):
                async with asyncio.timeout(DRAIN_SECONDS):
                    while await self.process.stdout.read(2**16):
                        pass
        await self.process.wait()


class _TooLargeError(Exception):
    def __init__(self, size: int) -> None:
        super().__init__(f"the worker answered {size} bytes")


class CodeSandbox:
    """A pool of `warm` confined workers; `run_code` runs one job in one of them.

    At most `max_running` runs at once (each is a process); the others wait for a turn, and their
    time limit starts when it comes. `uids`: the user ids the workers run as, one each in turn; none of them may own a file or a
    process of the service (the default range is far above any account's).
    """

    def __init__(self, warm: int = 2, max_running: int = 8,
                 uids: range = range(FIRST_UID, FIRST_UID + UID_COUNT)) -> None:
        self.warm = warm
        self._running = asyncio.Semaphore(max_running)
        self.available = False
        self.reason = "the code sandbox has not been started"
        self._idle: list[_Worker] = []
        self._tasks: set[asyncio.Task[None]] = set()  # refills, and reaps of finished workers
        start = os.getpid() % len(uids)  # another service's pool starts elsewhere in the range
        self._uids = itertools.cycle([*uids[start:], *uids[:start]])
        self._closed = False
        self._started, self._starting = asyncio.Event(), asyncio.Lock()

    async def ready(self) -> bool:
        """Started (the first caller starts it; the service starts no worker until a code node runs): whether
        code can run here (`reason` says why not)."""
        if not self._started.is_set():
            async with self._starting:
                if not self._started.is_set():
                    await self.start()
                    self._started.set()
        return self.available

    @property
    def idle(self) -> int:
        """How many confined workers are waiting for a job (a run taking one starts warm)."""
        return len(self._idle)

    async def start(self) -> None:
        """Start one worker to learn whether confinement works here, then fill the pool."""
        self._closed = False
        reason = confinement.unsupported_reason()
        if reason is None:
            try:
                self._idle.append(await self._spawn())
            except _StartError as error:
                reason = str(error)
        self.available, self.reason = reason is None, reason or ""
        if self.available:
            self._refill_soon()

    async def close(self) -> None:
        """Kill the idle workers and stop refilling."""
        self._closed = True
        for task in list(self._tasks):
            if task.get_name() == "refill":
                task.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)
        idle, self._idle = self._idle, []
        await asyncio.gather(*(worker.kill() for worker in idle))

    async def run_code(self, code: str, inputs: Mapping[str, Any], nodes: Mapping[str, Any],
                       limits: CodeLimits) -> CodeResult:
        """Run `code` with `inputs` and `nodes` in a fresh confined worker and return what it set as `result`."""
        if not self.available:
            raise SandboxUnavailableError(self.reason)
        async with self._running:
            return await self._run(code, inputs, nodes, limits)

    async def _run(self, code: str, inputs: Mapping[str, Any], nodes: Mapping[str, Any],
                   limits: CodeLimits) -> CodeResult:
        started = time.perf_counter()
        worker = self._idle.pop() if self._idle else await self._spawn()
        job = {"code": code, "inputs": inputs, "nodes": nodes, "timeoutSeconds": limits.timeout_seconds,
               "memoryMb": limits.memory_mb, "maxOutputBytes": limits.max_output_bytes}
        cpu_before = worker.cpu_seconds()
        try:
            async with asyncio.timeout(limits.timeout_seconds):
                await worker.send(job)
                answer = await worker.read_frame(limits.max_output_bytes + FRAME_SLACK)
        except TimeoutError:
            return await self._killed(worker, cpu_before, started, "time",
                                      f"the code ran past its time limit of {limits.timeout_seconds:g} s")
        except _TooLargeError:
            return await self._killed(worker, cpu_before, started, "output",
                                      f"the code's output is larger than {limits.max_output_bytes} bytes")
        except (asyncio.IncompleteReadError, ConnectionError, ValueError):
            return await self._ended(worker, cpu_before, started)
        except BaseException:  # a stop: the worker and anything it holds go with it
            await worker.kill()
            raise
        finally:
            self._refill_soon()  # after the run, so that a worker's start does not compete with it
        self._in_background(worker.kill())  # it is exiting by itself; the answer need not wait for that
        return _answered(answer, time.perf_counter() - started)

    async def _killed(self, worker: _Worker, cpu_before: float, started: float, limit: Limit,
                      error: str) -> CodeResult:
        cpu = worker.cpu_seconds() - cpu_before
        await worker.kill()
        return CodeResult(ok=False, result=None, error=error, limit=limit, cpu_seconds=max(cpu, 0.0),
                          wall_seconds=time.perf_counter() - started)

    async def _ended(self, worker: _Worker, cpu_before: float, started: float) -> CodeResult:
        """The worker died or broke the protocol before answering: say how, in the node's words."""
        cpu = worker.cpu_seconds() - cpu_before
        try:
            async with asyncio.timeout(1.0):
                code = await worker.process.wait()
        except TimeoutError:  # still running after writing something that is not an answer
            await worker.kill()
            return CodeResult(ok=False, result=None, error="the code broke its worker's answer", limit=None,
                              cpu_seconds=max(cpu, 0.0), wall_seconds=time.perf_counter() - started)
        limit: Limit | None
        if code in (-signal.SIGXCPU, -signal.SIGKILL):
            error, limit = "the code used more than its CPU time", "time"
        elif code in (-signal.SIGSEGV, -signal.SIGABRT):
            error, limit = "the code crashed its worker (out of stack or memory)", "memory"
        else:
            error, limit = f"the code ended its worker without a result (exit {code})", None
        return CodeResult(ok=False, result=None, error=error, limit=limit, cpu_seconds=max(cpu, 0.0),
                          wall_seconds=time.perf_counter() - started)

    async def _spawn(self) -> _Worker:
        process = await asyncio.create_subprocess_exec(
            sys.executable, "-I", "-S", "-B", "-X", "utf8", str(WORKER), str(next(self._uids)),
            stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.DEVNULL,
            env={}, cwd="/", start_new_session=True, limit=2**16)
        worker = _Worker(process)
        try:
            async with asyncio.timeout(START_TIMEOUT):
                hello = await worker.read_frame(FRAME_SLACK)
        except (TimeoutError, asyncio.IncompleteReadError, ValueError, _TooLargeError) as error:
            await worker.kill()
            raise _StartError(f"the code worker did not start ({type(error).__name__})") from error
        except BaseException:
            await worker.kill()
            raise
        if not hello.get("ready"):
            await worker.kill()
            raise _StartError(f"the code sandbox cannot isolate a worker here: {hello.get('fatal')}")
        return worker

    def _refill_soon(self) -> None:
        if not self._closed and not any(not task.done() for task in self._tasks if task.get_name() == "refill"):
            self._in_background(self._refill(), "refill")

    def _in_background(self, work: Coroutine[Any, Any, None], name: str = "reap") -> None:
        task = asyncio.get_running_loop().create_task(work, name=name)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def _refill(self) -> None:
        while not self._closed and len(self._idle) < self.warm:
            try:
                worker = await self._spawn()
            except _StartError:
                return
            if self._closed:
                await worker.kill()
                return
            self._idle.append(worker)


def _answered(answer: Any, wall: float) -> CodeResult:
    """The worker's answer as a result; the code may have written it itself, so every field is checked."""
    if not isinstance(answer, dict):
        answer = {"ok": False, "error": "the code broke its worker's answer"}
    limit = answer.get("limit")
    error = answer.get("error")
    cpu = answer.get("cpu")
    return CodeResult(ok=answer.get("ok") is True, result=answer.get("result") if answer.get("ok") is True else None,
                      error=None if error is None else str(error)[:4000],
                      limit=limit if limit in ("time", "memory", "output") else None,
                      cpu_seconds=float(cpu) if isinstance(cpu, (int, float)) else 0.0, wall_seconds=wall)


class _StartError(Exception):
    """A worker could not be started or could not confine itself."""


class SandboxUnavailableError(Exception):
    """Code cannot run here because it could not be isolated; the message says why."""


async def run_code(code: str, inputs: Mapping[str, Any], nodes: Mapping[str, Any], limits: CodeLimits) -> CodeResult:
    """Run `code` once in a worker started for it (cold: a service keeps a `CodeSandbox` instead)."""
    sandbox = CodeSandbox(warm=0)
    await sandbox.start()
    try:
        return await sandbox.run_code(code, inputs, nodes, limits)
    finally:
        await sandbox.close()
