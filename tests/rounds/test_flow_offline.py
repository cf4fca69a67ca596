"""A round of the offline model saved as a flow, over real HTTP on both databases: run on the same files it
runs the same agents in the same order, makes the same kinds of files, and makes no planning call (the
model's requests counted). Its own module: one live server per module (DBOS is one per process)."""

from __future__ import annotations

import pytest

from agents.model import ModelRequest, ModelResponse
from agents.offline import OfflineModel
from tests.harness import LiveServer, settings_for, upload, wait_status
from tests.rounds.test_flow_rounds import run_flow


class CountingOffline(OfflineModel):
    """The offline model, keeping each request."""

    def __init__(self) -> None:
        super().__init__()
        self.requests: list[ModelRequest] = []

    async def complete(self, request: ModelRequest) -> ModelResponse:
        self.requests.append(request)
        return await super().complete(request)


@pytest.fixture(scope="module")
def offline(tmp_path_factory, module_database_url):
    model = CountingOffline()
    settings = settings_for(tmp_path_factory.mktemp("flow-offline"), module_database_url)
    with LiveServer(settings, model=model) as live:
        yield live, model


def made_files(client, wf: str, round_no: int) -> list[str]:
    """The kinds (extensions) of the files the round's steps made, in order."""
    items = client.get(f"/api/workflows/{wf}/messages").json()["items"]
    return [d["name"].rsplit(".", 1)[-1] for m in items if m["status"] == "step" and m.get("round", round_no) == round_no
            for d in m.get("documents") or []]


def test_a_round_of_the_offline_model_saved_as_a_flow(offline):
    live, model = offline
    with live.client() as client:
        files = upload(client, "UDHR_first_article_all.txt")
        started = client.post("/api/workflows/start", json={"prompt": "Summarise this document as a report.",
                                                            "listFileId": [files[0]["id"]]}).json()["id"]
        assert wait_status(client, started, "completed", "failed")["status"] == "completed"
        planned = [(r.agent, r.purpose) for r in model.requests if r.purpose not in ("plan", "repair", "review", "final")]
        kinds = made_files(client, started, 1)
        made = client.post("/api/flows", json={"fromRound": {"workflowId": started, "round": 1}, "name": "report"})
        assert made.status_code == 201, made.text
        assert [x["type"] for x in made.json()["draft"]["nodes"]][1:-1] == ["agent"] * (len(made.json()["draft"]["nodes"]) - 2)
        before = len(model.requests)
        run = run_flow(client, made.json()["id"], {}, listFileId=[files[0]["id"]])
        assert wait_status(client, run, "completed", "failed")["status"] == "completed"
        again = model.requests[before:]
        assert not any(r.purpose == "plan" for r in again)
        assert [(r.agent, r.purpose) for r in again] == planned
        assert made_files(client, run, 1) == kinds
