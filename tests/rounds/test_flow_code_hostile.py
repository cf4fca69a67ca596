"""The sandbox's hostile suite run the way a person's flow runs it: each case is a `code` node of a flow
saved and started over real HTTP on a live service, and each asserts that the effect did not happen:
the service's own secrets (a file in its DATA_DIR, its database, its environment, a process of its
user) are in no answer, node run or message; nothing is written outside the worker's scratch; a
listener on 127.0.0.1 sees no connection; limits end the node with a node error; /health answers
throughout. The cases are tests/sandbox/test_code_hostile.py's (the sandbox alone)."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from app.sandbox import confinement
from tests.harness import LiveServer, counting_listener, settings_for, wait_status
from tests.rounds.test_flow_rounds import EchoModel, e, n
from tests.sandbox.test_code_hostile import CONNECTS, READS, WRITES

pytestmark = pytest.mark.skipif(confinement.unsupported_reason() is not None,
                                reason=f"no OS isolation here: {confinement.unsupported_reason()}")

SECRET = "flow-hostile-5e57c0de-never-leaves"
SECRET_ENV = "FOREMAN_FLOW_HOSTILE_SECRET"
INPUTS = {"data": "string", "db": "string", "holder": "number", "target": "string", "name": "string",
          "port": "number"}


@pytest.fixture(scope="module")
def live(tmp_path_factory) -> Iterator[tuple[LiveServer, Path]]:
    """A service on SQLite whose data dir, database and environment hold SECRET, and a writable place
    outside the sandbox."""
    tmp = tmp_path_factory.mktemp("flow-hostile")
    os.environ[SECRET_ENV] = SECRET
    settings = settings_for(tmp, "", code_timeout_seconds=3.0)
    settings.data_dir.mkdir(parents=True, exist_ok=True)
    (settings.data_dir / "secret.txt").write_text(SECRET)
    outside = tmp / "outside"
    outside.mkdir()
    try:
        with LiveServer(settings, model=EchoModel()) as server, server.client() as client:
            # The secret in the service's database too: a workflow's message holds it.
            wf = client.post("/api/workflows/start", json={"prompt": f"Remember {SECRET}"}).json()["id"]
            wait_status(client, wf, "completed", "failed")
            yield server, outside
    finally:
        os.environ.pop(SECRET_ENV, None)


@pytest.fixture(scope="module")
def holder() -> Iterator[int]:
    """A process of the service's user holding the secret in its environment and memory."""
    proc = subprocess.Popen([sys.executable, "-c", "import sys, time; s = sys.argv[1] * 2; time.sleep(600)", SECRET],
                            env={**os.environ, SECRET_ENV: SECRET})
    yield proc.pid
    proc.kill()
    proc.wait()


@pytest.fixture(scope="module")
def listener() -> Iterator[tuple[int, list[Any]]]:
    """A listener on 127.0.0.1 the code must never reach."""
    with counting_listener() as found:
        yield found


def run_code(client: httpx.Client, code: str, inputs: dict[str, Any]) -> tuple[str, str]:
    """Save a one-node flow running `code`, run it; the round's status and everything it shows."""
    definition = {"name": "hostile", "inputs": {k: {"type": t} for k, t in INPUTS.items()},
                  "nodes": [n("start", "start"), n("c", "code", code=code), n("end", "end")],
                  "edges": [e("start", "c"), e("c", "end")], "outputs": {"out": "{{ c.output }}"}}
    flow = client.post("/api/flows", json=definition)
    assert flow.status_code == 201, flow.text
    started = client.post("/api/workflows/start", json={"flow": {"id": flow.json()["id"], "version": "draft",
                                                                 "inputs": inputs}})
    assert started.status_code == 200, started.text
    wf = started.json()["id"]
    status = wait_status(client, wf, "completed", "failed", timeout=120)["status"]
    shown = client.get(f"/api/workflows/{wf}").text + client.get(f"/api/workflows/{wf}/nodes").text
    assert client.get("/health").status_code == 200
    return status, shown


def inputs_for(server: LiveServer, outside: Path, holder: int, port: int, name: str) -> dict[str, Any]:
    data = server.settings.data_dir
    database = next(iter(sorted(data.glob("*.db"))), data / "foreman.db")
    return {"data": str(data), "db": str(database), "holder": holder, "target": str(outside / name), "name": name,
            "port": port}


@pytest.mark.parametrize("code", READS.values(), ids=READS.keys())
def test_a_code_node_cannot_read_the_services_secrets(live, holder, listener, code):
    server, outside = live
    with server.client() as client:
        status, shown = run_code(client, code, inputs_for(server, outside, holder, listener[0], "unused"))
    assert SECRET not in shown and SECRET_ENV not in shown and "root:x:0:0" not in shown
    assert status in ("completed", "failed")


@pytest.mark.parametrize("code", WRITES.values(), ids=WRITES.keys())
def test_a_code_node_writes_nothing_outside_its_scratch(live, holder, listener, code, request):
    server, outside = live
    name = "pwned-" + "".join(c if c.isalnum() else "-" for c in request.node.callspec.id)
    with server.client() as client:
        run_code(client, code, inputs_for(server, outside, holder, listener[0], name))
    assert not (outside / name).exists() and not Path("/etc", name).exists()


@pytest.mark.parametrize("code", CONNECTS.values(), ids=CONNECTS.keys())
def test_a_code_node_reaches_no_listener(live, holder, listener, code):
    server, outside = live
    port, seen = listener
    with server.client() as client:
        run_code(client, code, inputs_for(server, outside, holder, port, "unused"))
    assert not seen  # (a socket() that fails with EPERM may be all the code does: the node then succeeds)


@pytest.mark.parametrize(("code", "says"), [
    ("while True:\n    pass", "time"),
    ("result = len(bytearray(6 * 2**30))", "MemoryError"),
    ("result = 'x' * (50 * 2**20)", "output"),
    ("def f(n):\n    return f(n + 1)\nresult = f(0)", "RecursionError"),
    ("import os", "os"),
])
def test_limits_end_the_node_with_an_error_that_says_which(live, holder, listener, code, says):
    server, outside = live
    with server.client() as client:
        status, shown = run_code(client, code, inputs_for(server, outside, holder, listener[0], "unused"))
    assert status == "failed" and says in shown
