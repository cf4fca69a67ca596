"""Plans where a task works on another task's files, over HTTP: the final file holds the chain's work."""

from __future__ import annotations

import io
from typing import Any

import docx

from agents.model import Model, ModelRequest, ModelResponse, Usage
from agents.offline import OfflineModel
from agents.requests import TranslateHints
from tests.corpus import CORPUS
from tests.harness import LiveServer, settings_for, upload, wait_status


class PlannedOffline(Model):
    """A scripted plan (the planner's judgement is not under test here); every task is the offline
    model's own work, except translations, which it cannot do: those upper-case the text and mark it."""

    name = "planned-offline"
    offline = False

    def __init__(self, plan: dict[str, Any]) -> None:
        self.plan = plan
        self.offline_model = OfflineModel()

    async def complete(self, request: ModelRequest) -> ModelResponse:
        usage = Usage(prompt_tokens=1, completion_tokens=1, calls=1)
        if request.purpose in ("plan", "repair"):
            return ModelResponse(text="", data=self.plan, usage=usage, model=self.name)
        if isinstance(request.hints, TranslateHints):
            text = "\n\n".join(d.text or "" for d in request.hints.documents)
            return ModelResponse(text=f"[FR] {text.upper()}", usage=usage, model=self.name)
        return await self.offline_model.complete(request)


def task(tid: str, agent: str, instructions: str, inputs: list[str], outputs: list[str],
         depends: list[str] = ()) -> dict[str, Any]:
    return {"id": tid, "agent": agent, "instructions": instructions, "inputs": inputs,
            "outputs": [{"name": n, "type": n.rsplit(".", 1)[1], "purpose": "result"} for n in outputs],
            "dependsOn": list(depends)}


def run(tmp_path, plan: dict[str, Any], prompt: str, names: list[str]) -> tuple[Any, list[dict[str, Any]]]:
    with LiveServer(settings_for(tmp_path), PlannedOffline(plan)) as server, server.client() as client:
        ids = [f["id"] for f in upload(client, *names)]
        wid = client.post("/api/workflows/start", json={"prompt": prompt, "listFileId": ids}).json()["id"]
        assert wait_status(client, wid, "completed", "failed")["status"] == "completed"
        messages = client.get(f"/api/workflows/{wid}/messages").json()["items"]
        failed = [m["content"] for m in messages if m["metadata"].get("failed")]
        assert not failed, failed
        delivered = {f"{d['name']}.{d['ext']}": client.get(f"/api/files/{d['fileId']}/content").content
                     for d in messages[-1]["documents"]}
        return delivered, messages


def test_a_writer_reports_on_the_tables_a_data_extractor_produced(tmp_path):
    plan = {"userLanguage": "en", "objUserResponse": "Tables first, then a report.",
            "objFinalDocuments": [{"name": "report.docx", "type": "docx", "purpose": "report"}],
            "objWorkplan": [
                task("t1", "data_extractor", "Extract the table.", ["testCSV.csv"], ["tables.csv"]),
                task("t2", "writer", "Write a report on the table.", ["tables.csv"], ["report.docx"], ["t1"])]}
    delivered, _ = run(tmp_path, plan, "Extract the table and write a report on it.", ["testCSV.csv"])
    text = "\n".join(p.text for p in docx.Document(io.BytesIO(delivered["report.docx"])).paragraphs)
    tables = docx.Document(io.BytesIO(delivered["report.docx"])).tables
    cells = {c.text for t in tables for row in t.rows for c in row.cells}
    source = (CORPUS / "testCSV.csv").read_text()
    found = {v for v in ("225", "144", "15") if v in text or v in cells}
    assert found == {"225", "144", "15"} and all(v in source for v in found)


def test_a_translator_translates_the_document_a_writer_produced(tmp_path):
    plan = {"userLanguage": "en", "objUserResponse": "A memo, then its translation.",
            "objFinalDocuments": [{"name": "memo.fr.md", "type": "md", "purpose": "translation"}],
            "objWorkplan": [
                task("t1", "writer", "Write a memo on the document.", ["example-docs-README.md"], ["memo.md"]),
                task("t2", "translator", "Translate the memo into French.", ["memo.md"], ["memo.fr.md"],
                     ["t1"])]}
    delivered, messages = run(tmp_path, plan, "Write a memo and translate it into French.",
                              ["example-docs-README.md"])
    memo = next(m for m in messages if m["agentName"] == "writer")
    produced = delivered["memo.fr.md"].decode("utf-8")
    # The translation is of the writer's memo (its title and its material), not of the upload alone.
    assert "[FR] # MEMO" in produced and "EXAMPLE DOCS" in produced
    assert memo["documents"] and any(d["name"] == "memo" for d in memo["documents"])
