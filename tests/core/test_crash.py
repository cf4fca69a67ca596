"""Crash: the service killed with SIGKILL mid-round resumes from its last finished step."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from collections import Counter
from pathlib import Path

import httpx
import pytest

from tests.harness import free_port, plan_of, wait_for, wait_status
from tests.openai_stub import Hold, Reply

ROOT = Path(__file__).resolve().parents[2]


class Service:
    """`python -m app` as a child process on a fixed data dir."""

    def __init__(self, tmp_path: Path, stub_url: str, database_url: str) -> None:
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.env = {**os.environ, "DATA_DIR": str(tmp_path / "data"), "PORT": str(self.port),
                    "OPENAI_BASE_URL": stub_url, "OPENAI_API_KEY": "test", "DATABASE_URL": database_url,
                    "LLM_MAX_RETRIES": "0",
                    # Pinned: the restarted process resumes the rounds of the one killed (on PostgreSQL the
                    # default id is new in every process, and another replica takes over instead).
                    "EXECUTOR_ID": "crash-test"}
        self.log = open(tmp_path / "service.log", "ab")
        self.proc: subprocess.Popen | None = None
        self.clients: list[httpx.Client] = []

    def start(self) -> None:
        self.proc = subprocess.Popen([sys.executable, "-m", "app"], cwd=ROOT, env=self.env, stdout=self.log,
                                     stderr=subprocess.STDOUT)
        wait_for(self._ready, 60, "the service to start")

    def _ready(self) -> bool:
        assert self.proc.poll() is None, "the service exited"
        try:
            return httpx.get(self.url + "/ready", timeout=2).status_code == 200
        except httpx.HTTPError:
            return False

    def client(self) -> httpx.Client:
        self.clients.append(httpx.Client(base_url=self.url, timeout=30))
        return self.clients[-1]

    def kill(self) -> None:
        self.proc.send_signal(signal.SIGKILL)
        self.proc.wait(30)

    def stop(self) -> None:
        for client in self.clients:
            client.close()
        if self.proc and self.proc.poll() is None:
            self.proc.terminate()
            self.proc.wait(30)
        self.log.close()


@pytest.fixture
def service(tmp_path, openai_stub, database_url):
    svc = Service(tmp_path, openai_stub.base_url, database_url)
    yield svc
    svc.stop()


def test_killed_mid_task_resumes_without_duplicates(service, openai_stub):
    openai_stub.script([Reply(plan_of(2, chain=True)), Reply("First part analysed."), Hold(then="lost")])
    service.start()
    client = service.client()
    wid = client.post("/api/workflows/start", json={"prompt": "Analyse both parts"}).json()["id"]
    assert openai_stub.wait_requests(3, timeout=60), "the second task never called the model"
    service.kill()
    openai_stub.release()

    openai_stub.script([Reply("Second part analysed."), Reply("All done.")])
    service.start()
    status = wait_status(client, wid, "completed", "failed")
    assert status["status"] == "completed"

    bodies = [json.dumps(r) for r in openai_stub.requests]
    assert sum('"response_format"' in b for b in bodies) == 1  # the plan was not made again
    assert sum("Question: Look at part 1" in b for b in bodies) == 1  # the finished task did not run again
    assert sum("Question: Look at part 2" in b for b in bodies) == 2  # the interrupted one ran again

    messages = client.get(f"/api/workflows/{wid}/messages").json()["items"]
    assert [m["status"] for m in messages] == ["first", "step", "step", "step", "last"]
    assert "Second part analysed." in messages[3]["content"]
    logs = [e["message"] for e in client.get(f"/api/workflows/{wid}/logs").json()["items"]]
    assert not [text for text, n in Counter(logs).items() if n > 1]
    assert logs[-1] == "Workflow completed successfully"
    assert [w["status"] for w in client.get("/api/workflows").json()["items"]] == ["completed"]


def test_a_round_that_keeps_crashing_ends_failed(service, openai_stub):
    openai_stub.script([Hold()] * 10)
    service.start()
    client = service.client()
    wid = client.post("/api/workflows/start", json={"prompt": "Plan something"}).json()["id"]
    status = lambda: client.get(f"/api/workflows/{wid}/status").json()  # noqa: E731
    for attempt in range(1, 8):
        assert openai_stub.wait_requests(attempt, timeout=60)
        service.kill()
        service.start()
        # Either the round is resumed (it calls the model again) or the engine gives up on it.
        outcome = wait_for(lambda: "failed" if status()["status"] == "failed" else
                           len(openai_stub.requests) > attempt and "resumed", 60, "a resume or a failure")
        if outcome == "failed":
            break
    assert attempt > 1, "the round was never resumed"
    assert status()["status"] == "failed" and status()["progress"] == 100
    logs = client.get(f"/api/workflows/{wid}/logs").json()["items"]
    assert logs[-1]["type"] == "error" and "could not be resumed" in logs[-1]["message"]
    openai_stub.release()
