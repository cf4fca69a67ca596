"""A planned output's name is a file name, never a path, over real HTTP: a model's plan naming
"../../../tmp/evil.md" delivers "evil.md" (named and served so); an edited plan naming it is refused
with a 400 naming it, as an upload's name would have been cleaned."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.harness import LiveServer, settings_for, wait_status
from tests.scripted import ScriptedModel
from tests.web.conftest import check_error

EVIL = "../../../tmp/evil.md"


def plan(name: str) -> dict[str, Any]:
    return {"userLanguage": "en", "objUserResponse": "A memo.",
            "objFinalDocuments": [{"name": name, "type": "md", "purpose": "memo"}],
            "objWorkplan": [{"id": "t1", "agent": "writer", "instructions": "Write the memo.", "inputs": [],
                             "outputs": [{"name": name, "type": "md", "purpose": "memo"}], "dependsOn": []}]}


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory, module_database_url: str) -> Iterator[LiveServer]:
    settings = settings_for(Path(tmp_path_factory.mktemp("names")), module_database_url)
    with LiveServer(settings, ScriptedModel(plan=plan(EVIL))) as live:
        yield live


@pytest.fixture
def client(server: LiveServer) -> Iterator[httpx.Client]:
    with server.client() as c:
        yield c


def test_a_model_plans_output_path_delivers_a_plain_file_name(client: httpx.Client) -> None:
    wid = client.post("/api/workflows/start", json={"prompt": "Write a memo."}).json()["id"]
    assert wait_status(client, wid, "completed", "failed", timeout=120)["status"] == "completed"
    documents = [d for m in client.get(f"/api/workflows/{wid}/messages").json()["items"] for d in m["documents"]]
    assert documents and {(d["name"], d["ext"]) for d in documents} == {("evil", "md")}
    served = client.get(f"/api/files/{documents[0]['fileId']}/content")
    assert served.status_code == 200
    assert served.headers["content-disposition"] == "attachment; filename=\"evil.md\"; filename*=UTF-8''evil.md"


def test_an_edited_plans_output_path_is_refused_naming_it(client: httpx.Client) -> None:
    started = client.post("/api/workflows/start", json={"prompt": "Write a memo.", "review": "plan"})
    wid = wait_status(client, started.json()["id"], "waiting", timeout=120)["id"]
    edit = plan("memo.md")
    tasks = edit["objWorkplan"]
    tasks[0]["outputs"][0]["name"] = EVIL
    answer = client.post(f"/api/workflows/{wid}/review", json={"decision": "edit", "plan": {
        "tasks": tasks, "finalDocuments": [{"name": "a\u202eb/x.md", "type": "md", "purpose": "memo"}]}})
    body = check_error(answer, 400, "invalid_plan")
    assert f"task 't1': output '{EVIL}' is not a plain file name (no folders or control characters): " \
           "name it 'evil.md'" in body["problems"]
    assert "final document 'a\u202eb/x.md' is not a plain file name (no folders or control characters): " \
           "name it 'x.md'" in body["problems"]
    assert client.get(f"/api/workflows/{wid}/status").json()["status"] == "waiting"
