"""With a model planning (scripted): what the planner is shown of the conversation, and a continuation
it plans itself reuses what the stopped round delivered."""

from __future__ import annotations

import asyncio
import threading
from typing import Any

from agents.model import ModelRequest, ModelResponse
from tests.harness import LiveServer, settings_for, upload, wait_for, wait_status
from tests.scripted import ScriptedModel


def task(tid: str, agent: str, instructions: str, outputs: list[str] = (), depends: list[str] = ()) -> dict[str, Any]:
    return {"id": tid, "agent": agent, "instructions": instructions, "inputs": [],
            "outputs": [{"name": n, "type": "md", "purpose": "result"} for n in outputs], "dependsOn": list(depends)}


def plan(*tasks: dict[str, Any]) -> dict[str, Any]:
    return {"userLanguage": "en", "objUserResponse": "On it.", "objFinalDocuments": [], "objWorkplan": list(tasks)}


class PlannerScript(ScriptedModel):
    """Plans from a list, one per round; the first writer call waits until the round is stopped."""

    def __init__(self, plans: list[dict[str, Any]]) -> None:
        super().__init__(answer_all=True)
        self.plans = plans
        self.held = threading.Event()

    async def complete(self, request: ModelRequest) -> ModelResponse:
        if request.purpose == "plan":
            self.plan = self.plans.pop(0)
        if request.agent == "writer" and not self.held.is_set():
            self.requests.append(request)
            self.held.set()
            await asyncio.Event().wait()
        return await super().complete(request)


def test_a_model_sees_the_catalogue_and_history_and_its_continuation_reuses_delivered_work(tmp_path):
    first = plan(task("t1", "summarizer", "Summarize the comments.", ["notes.md"]),
                 task("t2", "writer", "Write a memo from the summary.", ["memo.md"], ["t1"]))
    # The model's own judgement on "pick it up again": the same tasks, the delivered one without outputs.
    again = plan(task("t1", "summarizer", "Summarize the comments."),
                 task("t2", "writer", "Write a memo from the summary.", ["memo.md"], ["t1"]))
    model = PlannerScript([first, again])
    with LiveServer(settings_for(tmp_path), model) as server, server.client() as client:
        [doc] = upload(client, "docx_comments.docx")
        wid = client.post("/api/workflows/start", json={"prompt": "Summarize the comments, then a memo.",
                                                        "listFileId": [doc["id"]]}).json()["id"]
        wait_for(model.held.is_set, 60, "the writer's call to be held")
        assert client.post(f"/api/workflows/{wid}/stop").status_code == 200

        before = len(model.requests)
        client.post("/api/workflows/start", params={"id": wid}, json={"prompt": "Pick it up again.", "listFileId": []})
        assert wait_status(client, wid, "completed", "failed")["status"] == "completed"
        calls = model.requests[before:]
        [planning] = [c for c in calls if c.purpose == "plan"]
        shown = planning.messages[-1]["content"]
        assert "- docx_comments.docx (docx, " in shown and "round 1, uploaded" in shown
        assert "- notes.md (md, " in shown and "round 1, produced" in shown  # t1's output is in the catalogue
        assert "[round 1] Summarize the comments, then a memo." in shown
        assert "t1 summarizer: Summarize the comments. (delivered)" in shown
        assert "t2 writer: Write a memo from the summary. (not delivered)" in shown
        assert [c.agent for c in calls if c.purpose != "plan" and c.agent != "project_manager"] == ["writer"]

        messages = client.get(f"/api/workflows/{wid}/messages").json()["items"]
        last = messages[-1]
        assert last["round"] == 2 and "t1 (summarizer)" in last["content"] and "t2 (writer)" in last["content"]
        assert {f"{d['name']}.{d['ext']}" for d in last["documents"]} == {"notes.md", "memo.md"}  # what the plan named
