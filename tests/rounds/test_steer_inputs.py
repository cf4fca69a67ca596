"""Steering that steers (issue 50, item 9): "only summarise the report, skip the ledger" during a round
takes the ledger out of the unfinished tasks' inputs, whatever the model's revised plan kept, and the
revision says what changed task by task. Words of leaving a document out in en/de/fr; the round over
real HTTP with a scripted model that, like a small one, plans the same two tasks again."""

from __future__ import annotations

import json
import uuid
from typing import Any

from agents.base import Plan, TaskSpec
from agents.language import left_out
from agents.model import ModelRequest, ModelResponse, Usage
from agents.planning.replan import differences
from agents.planning.slips import ASKED_WHILE_RUNNING, left_out_inputs
from tests.harness import LiveServer, settings_for, wait_for, wait_status
from tests.services.test_multitask import GateModel, post

FACTS = [{"name": "annual-report.txt", "origin": "uploaded", "round": 1, "new": True, "ext": "txt"},
         {"name": "ledger.csv", "origin": "uploaded", "round": 1, "new": True, "ext": "csv"}]
REPORT = b"Annual report 2025\n\nThe cooperative grew to 412 members and opened a second shop in Lindau.\n"
LEDGER = b"date,item,amount\n2025-01-04,seeds,120.50\n2025-02-11,tools,310.00\n"


def test_what_a_request_leaves_out_in_three_languages():
    for request in ("Actually, only summarise the report, skip the ledger.",
                    "Fasse doch nur den Bericht zusammen, ohne das Ledger.",
                    "Résume seulement le rapport, sans le ledger.",
                    "Summarise everything except the CSV."):
        assert left_out(request, FACTS) == ["ledger.csv"], request
    assert left_out("What is not in the ledger?", FACTS) == []
    assert left_out("Summarise both documents.", FACTS) == []


def _task(tid: str, inputs: list[str], instructions: str = "Summarise.", deps: list[str] | None = None) -> TaskSpec:
    return TaskSpec(id=tid, agent="summarizer", instructions=instructions, inputs=inputs, depends_on=deps or [])


def test_the_plan_without_what_is_left_out_and_the_changes_in_words():
    plan = Plan(language="en", answer="", tasks=[_task("t1", ["annual-report.txt"]), _task("t2", ["ledger.csv"]),
                                                 _task("t3", ["annual-report.txt", "ledger.csv"])])
    fixed, notes = left_out_inputs(plan, f"The plan so far...\n\n{ASKED_WHILE_RUNNING}skip the ledger", FACTS)
    assert [(t.id, t.inputs) for t in fixed.tasks] == [("t1", ["annual-report.txt"]), ("t3", ["annual-report.txt"])]
    assert len(notes) == 2 and "dropped" in notes[0]
    # A finished task's text that says "without" is not the user's request.
    assert left_out_inputs(plan, f"- Task t0 finished: sold without the ledger\n\n{ASKED_WHILE_RUNNING}go on",
                           FACTS)[1] == []
    said = differences(plan.tasks[1:], [_task("t3-r1", ["annual-report.txt"], "Summarise the report only.")])
    assert said == ["t2 (summarizer of ledger.csv) dropped",
                    "summarizer task t3-r1 no longer reads ledger.csv and is now asked “Summarise the report only.”"]


class SameTwice(GateModel):
    """Plans two summaries, the first at a gate, and plans them again when steered (a small model's revision)."""

    def __init__(self) -> None:
        super().__init__()
        self.token = ""

    async def complete(self, request: ModelRequest) -> ModelResponse:
        if request.purpose in ("plan", "repair"):
            chosen = {"userLanguage": "en", "objUserResponse": "Here is the plan.", "objFinalDocuments": [],
                      "objWorkplan": [
                          {"id": "t1", "agent": "summarizer", "instructions": f"[gate] {self.token} Summarise the report.",
                           "inputs": ["annual-report.txt"], "outputs": [], "dependsOn": []},
                          {"id": "t2", "agent": "summarizer", "instructions": "Summarise the ledger.",
                           "inputs": ["ledger.csv"], "outputs": [], "dependsOn": ["t1"]}]}
            if ASKED_WHILE_RUNNING in json.dumps(request.messages, ensure_ascii=False):
                chosen["objWorkplan"][0]["instructions"] = "Summarise the report."
            return ModelResponse(text=json.dumps(chosen), data=chosen, usage=Usage(calls=1), model=self.name)
        return await super().complete(request)


def test_a_steer_that_leaves_a_document_out_takes_it_out_of_the_unfinished_tasks(tmp_path, database_url):
    model = SameTwice()
    model.token = uuid.uuid4().hex
    with LiveServer(settings_for(tmp_path, database_url, max_replans=1), model) as server, server.client() as client:
        files = client.post("/api/files", files=[("files", ("annual-report.txt", REPORT, "text/plain")),
                                                 ("files", ("ledger.csv", LEDGER, "text/csv"))]).json()
        started = client.post("/api/workflows/start", json={"prompt": "Summarise both documents.",
                                                            "listFileId": [f["id"] for f in files]})
        assert started.status_code == 200, started.text
        wid = started.json()["id"]
        wait_for(lambda: model.token in model.waiting, 240, "task t1 at its gate")
        steer = "Actually, only summarise the report, skip the ledger."
        assert post(client, wid, steer, "steer").status_code == 200
        model.open(model.token)
        wait_status(client, wid, "completed", "failed", timeout=240)
        items: list[dict[str, Any]] = client.get(f"/api/workflows/{wid}/messages").json()["items"]
    revised = [m for m in items if m["content"].startswith("Plan revised at your request")]
    assert len(revised) == 1, [m["content"][:80] for m in items]
    assert "ledger.csv" in revised[0]["content"] and "dropped" in revised[0]["content"], revised[0]["content"]
    read = [t["inputs"] for t in revised[0]["metadata"]["plan"]["tasks"]]
    assert all("ledger.csv" not in inputs for inputs in read[1:]), read
    summarised = [m["metadata"].get("taskId") for m in items if m["agentName"] == "summarizer"]
    assert summarised == ["t1"], summarised
