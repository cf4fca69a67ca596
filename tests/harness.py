"""Shared test harness: a live server on 127.0.0.1, a scripted model, waiting on state."""

from __future__ import annotations

import asyncio
import functools
import os
import signal
import socket
import subprocess
import sys
import threading
import time
import uuid
from collections import Counter
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import replace
from pathlib import Path
from typing import Any

import httpx
import pytest
import uvicorn

from app.config import Settings
from app.main import create_app
from tests.corpus import CORPUS
from tests.ports import free_port

ROOT = Path(__file__).resolve().parents[1]
PG_URL = os.environ.get("FOREMAN_TEST_PG_URL", "")  # e.g. postgresql+asyncpg://postgres@127.0.0.1/postgres


def wait_for(check: Callable[[], Any], timeout: float = 30.0, what: str = "condition") -> Any:
    """Poll `check` until it returns something truthy; fail with `what` after `timeout` seconds.

    Polls every 10 ms at first, then less often (up to every 50 ms): most checks are HTTP requests,
    whose CPU on both ends a polled round or start would otherwise share its two cores with."""
    deadline = time.monotonic() + timeout
    pause = 0.01
    while True:
        value = check()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(pause)
        pause = min(pause * 1.25, 0.05)


@functools.cache
def _probe() -> httpx.Client:
    # One client for every readiness probe: making a client costs ~20 ms of CPU (its TLS context),
    # and a start is polled dozens of times. No kept connection: a probed process may be killed.
    return httpx.Client(timeout=2, limits=httpx.Limits(max_keepalive_connections=0))


def ready_at(url: str) -> bool:
    """Whether the service at `url` answers GET /ready with 200 (False while nothing answers)."""
    try:
        return _probe().get(url + "/ready").status_code == 200
    except httpx.HTTPError:
        return False


def plan_of(n_tasks: int, agent: str = "analyst", chain: bool = False) -> dict[str, Any]:
    """A plan with `n_tasks` tasks of `agent`, independent or each depending on the one before."""
    return {
        "userLanguage": "en",
        "objUserResponse": "Here is the plan.",
        "objFinalDocuments": [],
        "objWorkplan": [
            {"id": f"t{i}", "agent": agent, "instructions": f"Look at part {i} of the request.", "inputs": [],
             "outputs": [], "dependsOn": [f"t{i - 1}"] if chain and i > 1 else []}
            for i in range(1, n_tasks + 1)
        ],
    }


def settings_for(tmp: Path, database_url: str = "", **overrides: Any) -> Settings:
    # Embedding (seconds of CPU per document) only where a test asks for it: EMBEDDINGS=local.
    overrides.setdefault("embeddings", "off")
    return replace(Settings(data_dir=tmp / "data", database_url=database_url), **overrides)


class LiveServer:
    """The real app under uvicorn in a background thread, on a free port of 127.0.0.1.

    Its worker pools are the test session's (kept between servers, stopped once at the session's
    end): stopping them with each server cost 6-11 s a server under load (`python -m app`, as in
    `Replica`, still stops its own; so does this app with `keep_workers=False`)."""

    def __init__(self, settings: Settings, model: Any = None, registry: Any = None, keep_workers: bool = True) -> None:
        self.settings = replace(settings, host="127.0.0.1", port=free_port())
        self.app = create_app(self.settings, model=model, registry=registry, keep_workers=keep_workers)
        self.url = f"http://127.0.0.1:{self.settings.port}"
        # As `python -m app`: open event streams get 5 s to end at shutdown, then they are closed.
        self._server = uvicorn.Server(uvicorn.Config(self.app, host="127.0.0.1", port=self.settings.port,
                                                     log_level="warning", lifespan="on", timeout_graceful_shutdown=5))
        self._thread = threading.Thread(target=self._server.run, daemon=True)

    def __enter__(self) -> LiveServer:
        self._thread.start()
        wait_for(self._ready, 60, "the server to be ready")
        return self

    def _ready(self) -> bool:
        if not self._thread.is_alive():
            raise AssertionError("the server stopped during start-up; see the log above")
        return ready_at(self.url)

    def __exit__(self, *exc: object) -> None:
        self._server.should_exit = True
        self._thread.join(120)
        # Its database may be dropped next: a server still closing then would fail before it let DBOS's
        # process-wide instance go, and the next server in this process would inherit it.
        assert not self._thread.is_alive(), "the server did not stop within 120 s"

    def client(self, key: str | None = None) -> httpx.Client:
        headers = {"Authorization": f"Bearer {key}"} if key else {}
        return httpx.Client(base_url=self.url, headers=headers, timeout=30)


def wait_status(client: httpx.Client, workflow_id: str, *statuses: str, timeout: float = 60) -> dict[str, Any]:
    """Wait until the workflow's status is one of `statuses`; return the status body."""
    def check() -> dict[str, Any] | None:
        body = client.get(f"/api/workflows/{workflow_id}/status").json()
        return body if body["status"] in statuses else None

    return wait_for(check, timeout, f"workflow {workflow_id} to be {statuses}")


def upload(client: httpx.Client, *names: str) -> list[dict[str, Any]]:
    files = [("files", (name, (CORPUS / name).read_bytes())) for name in names]
    response = client.post("/api/files", files=files)
    assert response.status_code == 201, response.text
    return response.json()


def unique_db_name() -> str:
    return "foreman_test_" + uuid.uuid4().hex[:12]


BACKENDS = ["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)]


async def _admin(statement: str) -> None:
    import asyncpg

    dsn = PG_URL.replace("postgresql+asyncpg://", "postgresql://")
    conn = await asyncpg.connect(dsn)
    try:
        await conn.execute(statement)
    finally:
        await conn.close()


def pg_fetch(database_url: str, query: str, *args: Any) -> list[Any]:
    """The rows of one query on a test's PostgreSQL database (asyncpg records)."""
    import asyncpg

    async def run() -> list[Any]:
        conn = await asyncpg.connect(database_url.replace("postgresql+asyncpg://", "postgresql://"))
        try:
            return await conn.fetch(query, *args)
        finally:
            await conn.close()

    return asyncio.run(run())


def backend_url(backend: str) -> Iterator[str]:
    """'' for SQLite, or the URL of a fresh PostgreSQL database (dropped afterwards) for "postgres"."""
    if backend == "sqlite":
        yield ""
        return
    if not PG_URL:
        pytest.skip("FOREMAN_TEST_PG_URL is not set: the PostgreSQL run of this test is skipped")
    name = unique_db_name()
    asyncio.run(_admin(f'CREATE DATABASE "{name}"'))
    try:
        yield f"{PG_URL.rsplit('/', 1)[0]}/{name}"
    finally:
        asyncio.run(_admin(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))


class Replica:
    """`python -m app` as a process of its own on a shared database (a replica), with its own data dir.

    `env` adds settings (e.g. OPENAI_BASE_URL); without a model endpoint it runs offline.
    """

    def __init__(self, tmp: Path, database_url: str, executor_id: str, **env: str) -> None:
        self.name = executor_id
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.log_path = tmp / f"{executor_id}.log"
        self.env = {**os.environ, "DATABASE_URL": database_url, "DATA_DIR": str(tmp / executor_id),
                    "PORT": str(self.port), "EXECUTOR_ID": executor_id}
        for name in ("OPENAI_API_KEY", "OPENAI_BASE_URL", "API_KEYS"):
            self.env.pop(name, None)
        self.env.update(env)
        self.process: subprocess.Popen | None = None

    def start(self) -> Replica:
        """Launch the process (wait for it with `wait_ready`)."""
        with open(self.log_path, "ab") as log:
            self.process = subprocess.Popen([sys.executable, "-m", "app"], cwd=ROOT, env=self.env, stdout=log,
                                            stderr=subprocess.STDOUT)
        return self

    def wait_ready(self, timeout: float = 60) -> Replica:
        def ready() -> bool:
            assert self.process is not None and self.process.poll() is None, f"{self.name} exited; see {self.log_path}"
            return ready_at(self.url)

        wait_for(ready, timeout, f"replica {self.name} to be ready")
        return self

    def client(self) -> httpx.Client:
        return httpx.Client(base_url=self.url, timeout=30)

    def signal(self, sig: int) -> None:
        assert self.process is not None
        self.process.send_signal(sig)

    def log(self) -> str:
        return self.log_path.read_text(errors="replace")

    def stop(self) -> None:
        """End the process if it still runs (continued first, in case a test paused it)."""
        if self.process is None or self.process.poll() is not None:
            return
        self.process.send_signal(signal.SIGCONT)
        self.process.terminate()
        try:
            self.process.wait(30)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()


@contextmanager
def other_process(tmp: Path, database_url: str, executor_id: str = "b",
                  environ: dict[str, str] | None = None) -> Iterator[httpx.Client]:
    """`python -m app` as a second process on the same database (or its own SQLite with ''), offline,
    with `environ` added: its client once it is ready. Its output goes to `tmp/<executor_id>.log`."""
    replica = Replica(tmp, database_url, executor_id, **(environ or {})).start()
    try:
        with replica.wait_ready().client() as client:
            yield client
    finally:
        replica.stop()


class ConnectionPeaks:
    """The most connections each group of application_names held at once on one PostgreSQL database,
    sampled in a thread on a connection of its own (not counted) until stopped. `group` maps an
    application_name to its group (None: not counted); by default each name is its own group."""

    def __init__(self, database_url: str, group: Callable[[str], str | None] = lambda name: name) -> None:
        self.dsn = database_url.replace("postgresql+asyncpg://", "postgresql://", 1)
        self.group = group
        self.peak: Counter[str] = Counter()
        self.samples = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=lambda: asyncio.run(self._sample()), daemon=True)

    async def _sample(self) -> None:
        import asyncpg

        conn = await asyncpg.connect(self.dsn, server_settings={"application_name": "connection sampler"})
        try:
            while not self._stop.is_set():
                rows = await conn.fetch("SELECT application_name AS name, count(*) AS n FROM pg_stat_activity "
                                        "WHERE datname = current_database() AND pid <> pg_backend_pid() GROUP BY 1")
                now: Counter[str] = Counter()
                for row in rows:
                    if (key := self.group(row["name"])) is not None:
                        now[key] += row["n"]
                for key, n in now.items():
                    self.peak[key] = max(self.peak[key], n)
                self.samples += 1
                await asyncio.sleep(0.02)  # the sampling interval, not a wait for work
        finally:
            await conn.close()

    def __enter__(self) -> ConnectionPeaks:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join(10)


@contextmanager
def counting_listener() -> Iterator[tuple[int, list[Any]]]:
    """A TCP listener on 127.0.0.1 that counts the connections it accepts: (its port, what it accepted)."""
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    sock.listen(16)
    sock.settimeout(0.2)
    seen: list[Any] = []
    stop = threading.Event()

    def accept() -> None:
        while not stop.is_set():
            try:
                conn, _ = sock.accept()
                seen.append(conn)
                conn.close()
            except OSError:
                continue

    thread = threading.Thread(target=accept, daemon=True)
    thread.start()
    try:
        yield sock.getsockname()[1], seen
    finally:
        stop.set()
        thread.join(2)
        sock.close()
