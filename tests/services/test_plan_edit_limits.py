"""A large edited plan over real HTTP and MCP: told "too many tasks" at once, alone, and never a 500.

A 10,000-task chained edit (788 KB, under the body limit) once took 215 s on the event loop and
blocked /health as long; a cycle of 1,000 tasks ended in a RecursionError (500).
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.harness import LiveServer, plan_of, settings_for, wait_status
from tests.protocols.test_mcp import connect
from tests.scripted import ScriptedModel
from tests.web.conftest import check_error


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory, module_database_url: str) -> Iterator[LiveServer]:
    settings = settings_for(Path(tmp_path_factory.mktemp("edits")), module_database_url)
    with LiveServer(settings, ScriptedModel(plan=plan_of(2, chain=True))) as live:
        yield live


@pytest.fixture
def client(server: LiveServer) -> Iterator[httpx.Client]:
    with server.client() as c:
        yield c


def waiting(client: httpx.Client) -> str:
    started = client.post("/api/workflows/start", json={"prompt": "Compare the figures.", "review": "plan"})
    assert started.status_code == 200, started.text
    return str(wait_status(client, started.json()["id"], "waiting", timeout=240)["id"])


def tasks(count: int, cycle: bool = False) -> list[dict[str, Any]]:
    """`count` analyst tasks, each depending on the one before (the first on the last: a cycle); 10,000
    of them are under 800 KB, within the JSON body limit."""
    return [{"id": f"t{i}", "agent": "analyst", "instructions": "Go.", "dependsOn": [f"t{i - 1}"] if i > 1 else ([f"t{count}"] if cycle else [])}
            for i in range(1, count + 1)]


@pytest.mark.parametrize("cycle", [False, True], ids=["chain", "cycle"])
def test_an_edit_of_ten_thousand_tasks_is_refused_for_its_size_alone_while_health_answers(
        server: LiveServer, client: httpx.Client, cycle: bool) -> None:
    wid = waiting(client)
    healths: list[int] = []
    done = threading.Event()

    def poll() -> None:
        with server.client() as other:
            while not done.is_set():
                healths.append(other.get("/health", timeout=30).status_code)
                answered.set()

    answered = threading.Event()
    poller = threading.Thread(target=poll)
    poller.start()
    assert answered.wait(30), "health never answered"  # once before the edit, however busy the machine
    try:
        answer = client.post(f"/api/workflows/{wid}/review", timeout=60,
                             json={"decision": "edit", "plan": {"tasks": tasks(10_000, cycle), "finalDocuments": []}})
    finally:
        done.set()
        poller.join()
    body = check_error(answer, 400, "invalid_plan")
    assert body["problems"] == ["the plan has 10,000 tasks; at most 8 are allowed"]
    assert healths and set(healths) == {200}
    assert client.get(f"/api/workflows/{wid}/status").json()["status"] == "waiting"  # nothing changed


def test_a_cycle_within_the_limit_is_named(client: httpx.Client) -> None:
    wid = waiting(client)
    answer = client.post(f"/api/workflows/{wid}/review",
                         json={"decision": "edit", "plan": {"tasks": tasks(8, cycle=True), "finalDocuments": []}})
    body = check_error(answer, 400, "invalid_plan")
    assert body["problems"] == ["tasks form a cycle: t1 -> t2 -> t3 -> t4 -> t5 -> t6 -> t7 -> t8 -> t1"]


async def test_mcp_review_round_gets_the_same_answer_with_its_reasons(server: LiveServer, client: httpx.Client) -> None:
    wid = waiting(client)
    async with connect(server) as mcp:
        refused = await mcp.call_tool("review_round", {"workflow_id": wid, "decision": "edit",
                                                       "plan": {"tasks": tasks(10_000, cycle=True), "finalDocuments": []}})
    assert refused.is_error
    text = refused.content[0].text
    assert "the plan has 10,000 tasks; at most 8 are allowed" in text and "(400 invalid_plan)" in text
