"""ROUND_MAX_ATTEMPTS: an attempt of a round that fails by an error inside it is counted, and the round goes
on where it stopped; the last counted attempt fails the round with a log (issue 28, item 5). Crashes are not
counted: tests/rounds/test_crash.py kills a round more often than that and it completes."""

from __future__ import annotations

from collections import Counter

import pytest

from agents.model import ModelRequest, ModelResponse
from app.rounds import attempts
from tests.harness import LiveServer, plan_of, settings_for, wait_status
from tests.scripted import ScriptedModel


class BrokenPlanner(ScriptedModel):
    """The scripted model, whose first `breaks` planning calls raise an error the round does not expect."""

    def __init__(self, breaks: int) -> None:
        super().__init__(plan=plan_of(2))
        self.breaks = breaks
        self.plans = 0

    async def complete(self, request: ModelRequest) -> ModelResponse:
        if request.purpose == "plan":
            self.plans += 1
            if self.plans <= self.breaks:
                raise RuntimeError(f"planner bug number {self.plans}")
        return await super().complete(request)


@pytest.fixture(autouse=True)
def _short_pauses(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(attempts, "RETRY_PAUSE_SECONDS", 0.05)


@pytest.mark.parametrize("breaks", [1, 2])
def test_a_round_whose_attempts_fail_fewer_times_than_allowed_completes(tmp_path, database_url, breaks):
    model = BrokenPlanner(breaks)
    with LiveServer(settings_for(tmp_path, database_url, round_max_attempts=3), model) as server, \
            server.client() as client:
        wid = client.post("/api/workflows/start", json={"prompt": "Compare the figures."}).json()["id"]
        assert wait_status(client, wid, "completed", "failed")["status"] == "completed"
        assert model.plans == breaks + 1
        logs = [e["message"] for e in client.get(f"/api/workflows/{wid}/logs").json()["items"]]
        assert logs[-1] == "Workflow completed successfully"
        assert not [text for text, n in Counter(logs).items() if n > 1]  # the retries wrote nothing twice
        messages = client.get(f"/api/workflows/{wid}/messages").json()["items"]
        assert [m["status"] for m in messages] == ["first", "step", "step", "step", "last"]


def test_the_last_allowed_attempt_that_fails_fails_the_round_with_a_log(tmp_path, database_url):
    model = BrokenPlanner(5)
    with LiveServer(settings_for(tmp_path, database_url, round_max_attempts=2), model) as server, \
            server.client() as client:
        wid = client.post("/api/workflows/start", json={"prompt": "Compare the figures."}).json()["id"]
        status = wait_status(client, wid, "completed", "failed")
        assert status["status"] == "failed" and status["progress"] == 100
        assert model.plans == 2
        last = client.get(f"/api/workflows/{wid}/logs").json()["items"][-1]
        assert last["type"] == "error" and last["message"].startswith("The round failed")
