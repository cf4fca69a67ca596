"""A workflow is a conversation: later rounds see earlier rounds' documents, results and plans (offline model, HTTP)."""

from __future__ import annotations

import asyncio
import io
import sqlite3
import threading
from typing import Any

import docx
import httpx
import pytest
import sqlalchemy as sa

from agents.model import Model, ModelRequest, ModelResponse
from agents.offline import OfflineModel
from app.store.schema import sync_url
from tests.harness import LiveServer, settings_for, upload, wait_for, wait_status


def start(client: httpx.Client, prompt: str, files: list[int] | None = None, wid: str | None = None) -> str:
    response = client.post("/api/workflows/start", params={"id": wid} if wid else None,
                           json={"prompt": prompt, "listFileId": files or []})
    assert response.status_code == 200, response.text
    return response.json()["id"]


def finish(client: httpx.Client, wid: str) -> None:
    assert wait_status(client, wid, "completed", "failed", "stopped")["status"] == "completed"


def messages(client: httpx.Client, wid: str, round_no: int) -> list[dict[str, Any]]:
    items = client.get(f"/api/workflows/{wid}/messages").json()["items"]
    return [m for m in items if m["round"] == round_no]


def analyst_answer(client: httpx.Client, prompt: str, wid: str | None = None,
                   files: list[int] | None = None) -> tuple[str, dict[str, Any]]:
    """Run a round to its end: the workflow's id and the analyst's message of that round."""
    wid = start(client, prompt, files, wid)
    finish(client, wid)
    round_no = max(m["round"] for m in client.get(f"/api/workflows/{wid}/messages").json()["items"])
    [answer] = [m for m in messages(client, wid, round_no) if m["agentName"] == "analyst"]
    return wid, answer


def docx_text(client: httpx.Client, document: dict[str, Any]) -> str:
    data = client.get(f"/api/files/{document['fileId']}/content").content
    return "\n".join(p.text for p in docx.Document(io.BytesIO(data)).paragraphs)


def test_a_follow_up_without_files_quotes_and_cites_the_earlier_document_and_writes_it_up(tmp_path, database_url):
    with LiveServer(settings_for(tmp_path, database_url)) as server, server.client() as client:
        [doc] = upload(client, "docx_comments.docx")
        wid = start(client, "Summarize this document.", [doc["id"]])
        finish(client, wid)

        start(client, "What does the reviewer's comment say?", wid=wid)
        finish(client, wid)
        [answer] = [m for m in messages(client, wid, 2) if m["agentName"] == "analyst"]
        assert "This is a sample reviewer comment on the first paragraph." in answer["content"]
        assert "docx_comments.docx, comments" in answer["content"]  # the source, in the text
        first = answer["metadata"]["citations"][0]
        assert first == {"fileId": doc["id"], "name": "docx_comments.docx", "section": "comments",
                         "quote": "John Reviewer: This is a sample reviewer comment on the first paragraph."}

        start(client, "Write that as a Word document.", wid=wid)
        finish(client, wid)
        last = messages(client, wid, 3)[-1]
        [report] = [d for d in last["documents"] if d["ext"] == "docx"]
        text = docx_text(client, report)
        assert "This is the first paragraph that has a comment attached to it." in text
        assert "This is a sample reviewer comment on the first paragraph." in text


def test_the_excel_from_before_is_the_workbook_of_an_earlier_round(tmp_path):
    with LiveServer(settings_for(tmp_path)) as server, server.client() as client:
        sheet, tsv = upload(client, "testEXCEL.xlsx", "stanley-cups.tsv")
        wid = start(client, "Summarize these files.", [sheet["id"], tsv["id"]])
        finish(client, wid)
        [pdf] = upload(client, "google-doc-document.pdf")
        start(client, "Extract the tables of the Excel from before.", [pdf["id"]], wid)
        finish(client, wid)
        plan = next(m for m in messages(client, wid, 2) if "plan" in m["metadata"])["metadata"]["plan"]
        inputs = {t["agent"]: t["inputs"] for t in plan["tasks"]}
        assert inputs["data_extractor"] == ["testEXCEL.xlsx"]

        # By file name, with no files posted: the name picks the document among all of the workflow's.
        start(client, "Summarize stanley-cups.tsv again.", wid=wid)
        finish(client, wid)
        plan = next(m for m in messages(client, wid, 3) if "plan" in m["metadata"])["metadata"]["plan"]
        assert [t["inputs"] for t in plan["tasks"]] == [["stanley-cups.tsv"]]


def test_a_removed_file_and_a_deleted_message_leave_the_conversation_and_delete_drops_the_index(tmp_path):
    with LiveServer(settings_for(tmp_path)) as server, server.client() as client:
        comments, french = upload(client, "docx_comments.docx", "sample-french-1.txt")
        wid = start(client, "Summarize these.", [comments["id"], french["id"]])
        finish(client, wid)
        [user] = [m for m in messages(client, wid, 1) if m["status"] == "first"]
        removed = client.delete(f"/api/workflows/{wid}/messages/{user['id']}/files/{french['id']}")
        assert removed.status_code in (200, 204), removed.text

        start(client, "Summarize the documents again.", wid=wid)
        finish(client, wid)
        plan = next(m for m in messages(client, wid, 2) if "plan" in m["metadata"])["metadata"]["plan"]
        assert [t["inputs"] for t in plan["tasks"]] == [["docx_comments.docx"]]

        assert client.delete(f"/api/workflows/{wid}/messages/{user['id']}").status_code in (200, 204)
        start(client, "What does the reviewer's comment say?", wid=wid)
        finish(client, wid)
        round3 = messages(client, wid, 3)
        # The uploads are gone; what is left to ask are the earlier rounds' answers the user saw.
        plans = [m["metadata"]["plan"] for m in round3 if "plan" in m["metadata"]]
        inputs = {i for plan in plans for task in plan["tasks"] for i in task["inputs"]}
        assert not inputs & {"docx_comments.docx", "sample-french-1.txt"}, inputs

        database = tmp_path / "data" / "foreman.db"
        with sqlite3.connect(database) as conn:
            assert conn.execute("SELECT count(*) FROM chunks").fetchone()[0] > 0
        assert client.delete(f"/api/workflows/{wid}").status_code in (200, 204)
        with sqlite3.connect(database) as conn:
            assert conn.execute("SELECT count(*) FROM chunks").fetchone()[0] == 0
            assert conn.execute("SELECT count(*) FROM chunks_fts").fetchone()[0] == 0


class HoldingWriter(Model):
    """The offline model, except that the first writer call waits until the round is stopped."""

    name = "offline"
    offline = True
    extractive = True
    can_call_tools = False

    def __init__(self) -> None:
        self.inner = OfflineModel()
        self.calls: list[str] = []
        self.held = threading.Event()

    async def complete(self, request: ModelRequest) -> ModelResponse:
        self.calls.append(request.agent or request.purpose)
        if request.agent == "writer" and not self.held.is_set():
            self.held.set()
            await asyncio.Event().wait()  # until the stop cancels the round
        return await self.inner.complete(request)


@pytest.mark.parametrize("prompt", ["continue", "weiter", "continue là où tu t'es arrêté"])
def test_continue_after_a_stop_runs_only_what_was_not_delivered(tmp_path, prompt):
    model = HoldingWriter()
    with LiveServer(settings_for(tmp_path), model) as server, server.client() as client:
        [doc] = upload(client, "docx_comments.docx")
        wid = start(client, "Summarize the document and write a report about it.", [doc["id"]])
        wait_for(model.held.is_set, 60, "the writer's call to be held")
        assert client.post(f"/api/workflows/{wid}/stop").status_code == 200
        summary = next(m for m in messages(client, wid, 1) if m["agentName"] == "summarizer")

        calls_before = len(model.calls)
        start(client, prompt, wid=wid)
        finish(client, wid)
        agents_called = model.calls[calls_before:]
        assert "summarizer" not in agents_called and "writer" in agents_called
        logs = [entry for entry in client.get(f"/api/workflows/{wid}/logs").json()["items"] if entry["round"] == 2]
        assert [e["agentName"] for e in logs if e["message"].startswith("Running task")] == ["writer"]
        assert any("reused" in e["message"] and e["agentName"] == "summarizer" for e in logs)

        last = messages(client, wid, 2)[-1]
        assert "t1 (summarizer)" in last["content"] and "t2 (writer)" in last["content"]
        [report] = [d for d in last["documents"] if d["ext"] == "docx"]
        first_point = next(line[2:] for line in summary["content"].splitlines() if line.startswith("> "))
        assert first_point in docx_text(client, report)  # round 1's summary is the report's material


def test_deleting_a_workflow_forgets_the_text_extracted_from_files_only_it_used(tmp_path, database_url):
    # Also what a password opened; a document another workflow still uses keeps its cached text.
    with LiveServer(settings_for(tmp_path, database_url)) as server, server.client() as client:
        locked, french = upload(client, "libreoffice-writer-password.pdf", "sample-french-1.txt")
        [kept] = upload(client, "sample-french-1.txt")  # the same bytes, in a workflow that stays
        response = client.post("/api/workflows/start", json={
            "prompt": "Summarize these.", "listFileId": [locked["id"], french["id"]],
            "passwords": {str(locked["id"]): "openpassword"}})
        assert response.status_code == 200, response.text
        gone = response.json()["id"]
        finish(client, gone)
        stays = start(client, "Summarize this.", [kept["id"]])
        finish(client, stays)

        url = database_url or f"sqlite:///{tmp_path / 'data' / 'foreman.db'}"

        def extracted() -> dict[str, str]:
            engine = sa.create_engine(sync_url(url))
            try:
                with engine.connect() as conn:
                    return {key: str(items) for key, items in conn.execute(sa.text("SELECT key, items FROM extractions"))}
            finally:
                engine.dispose()

        before = extracted()
        assert any("Molière" in items for items in before.values())
        # sha256:owner, and what the password opened under its own key (sha256:owner:password hash)
        assert any(key.count(":") == 2 for key in before) and any(key.count(":") == 1 for key in before)
        assert client.delete(f"/api/workflows/{gone}").status_code in (200, 204)
        [left] = extracted().values()  # the French text, which the other workflow uses
        assert "Molière" in left
        assert client.delete(f"/api/workflows/{stays}").status_code in (200, 204)
        assert extracted() == {}


def test_a_follow_up_question_leans_on_the_questions_before_it(tmp_path):
    with LiveServer(settings_for(tmp_path)) as server, server.client() as client:
        # (The superlatives it asked, "the most Stanley Cups", "And which has the fewest?", "Und welche
        # hat die meisten?", went with the superlative word lists, issue 32: docs/benchmarks.md.)
        [squares] = upload(client, "testEXCEL.xlsx")

        def first_quote(prompt: str, wid: str | None = None, files: list[int] | None = None) -> tuple[str, str]:
            wid, answer = analyst_answer(client, prompt, wid, files)
            citations = answer["metadata"].get("citations", [])
            return wid, citations[0]["quote"] if citations else answer["content"]

        wid, quote = first_quote("What is the square of 7?", files=[squares["id"]])
        assert quote == "Number: 7; Square: 49"
        assert first_quote("And of 9?", wid)[1] == "Number: 9; Square: 81"


EXTRACT_AND_ASK = "Extract the tables of this workbook as CSV and tell me the total {} of the first half-year."


def test_asked_again_after_its_tables_were_extracted_the_answer_quotes_the_users_workbook_once(tmp_path):
    with LiveServer(settings_for(tmp_path)) as server, server.client() as client:
        [sales] = upload(client, "2023-half-year-analyses-by-segment.xlsx")
        wid, _ = analyst_answer(client, EXTRACT_AND_ASK.format("sales"), files=[sales["id"]])
        _, answer = analyst_answer(client, "And what were total sales in the same half of 2022?", wid)
        quoted = [line for line in answer["content"].splitlines() if line.startswith("> ")]
        # The row of the workbook the user gave, not the copy the first round made of it ("45580"),
        # and that row once: the copy's rows that read the same are not quoted beside it.
        assert quoted[0].startswith("> In millions of CHF, January–June 2022 — Total; Sales: 45,580;")
        assert answer["metadata"]["citations"][0]["fileId"] == sales["id"]
        said = [" ".join(line.replace(",", "").split()) for line in quoted]
        assert len(said) == len(set(said)), quoted

        # A follow-up in a few words leans on both requests before it, and still quotes the user's workbook
        # first, not a CSV of the first round whose name and text echo that round's request.
        _, answer = analyst_answer(client, "And in Zone NA?", wid)
        first = answer["metadata"]["citations"][0]
        assert first["quote"].startswith("In millions of CHF, January–June 2022 — Zone NA; Sales (a): 12,138;"), first
        assert first["fileId"] == sales["id"]


def test_follow_ups_that_name_only_the_year_or_a_row_find_the_row_the_question_before_asked_for(tmp_path, database_url):
    # In the workbook's own word ("Sales"): a question in other words ("revenue", "Umsatz", "ventes")
    # is the vectors' to match (issue 32 removed the hand-made list of same-meaning stems; test
    # servers run without embeddings, see tests/store/test_hybrid_search.py for questions answered by them).
    with LiveServer(settings_for(tmp_path, database_url)) as server, server.client() as client:
        [sales] = upload(client, "2023-half-year-analyses-by-segment.xlsx")
        wid = None
        # A question, then a follow-up that names only the year and points back by a pronoun.
        asked = [("What were the total sales in the first half of 2023?", "2023 — Total; Sales: 46,293;"),
                 ("And what was it in the same half of 2022?", "2022 — Total; Sales: 45,580;"),
                 # Leaning on the follow-up before it, and so on the question that named the sales.
                 ("And in Zone NA?", "2022 — Zone NA; Sales (a): 12,138;")]
        for prompt, row in asked:
            wid, answer = analyst_answer(client, prompt, wid, None if wid else [sales["id"]])
            first = answer["metadata"]["citations"][0]
            assert first["quote"].startswith(f"In millions of CHF, January–June {row}"), (prompt, first["quote"])
            assert first["fileId"] == sales["id"]


def test_follow_ups_that_point_back_after_an_extraction_quote_the_users_rows_not_its_copies(tmp_path):
    with LiveServer(settings_for(tmp_path)) as server, server.client() as client:
        [sales] = upload(client, "2023-half-year-analyses-by-segment.xlsx")
        wid, _ = analyst_answer(client, EXTRACT_AND_ASK.format("sales"), files=[sales["id"]])
        # The second leans on the first request, whose words ("extract", "tables", "CSV") the copies echo;
        # the third on both: the row it names, from the user's workbook, not the total the one before asked.
        for prompt, row in (("And what was it in the same half of 2022?", "Total; Sales: 45,580;"),
                            ("And in Zone NA?", "Zone NA; Sales (a): 12,138;")):
            _, answer = analyst_answer(client, prompt, wid)
            first = answer["metadata"]["citations"][0]
            assert first["quote"].startswith(f"In millions of CHF, January–June 2022 — {row}"), (prompt, first)
            assert first["fileId"] == sales["id"]


def test_a_question_of_its_own_that_begins_with_et_is_not_read_as_a_follow_up(tmp_path):
    with LiveServer(settings_for(tmp_path)) as server, server.client() as client:
        [text] = upload(client, "sample-french-1.txt")
        wid, _ = analyst_answer(client, "Qui a publié l'édition de ses œuvres en 1682 ?", files=[text["id"]])
        _, answer = analyst_answer(client, "Et en quelle année Molière est-il mort ?", wid)
        assert "MORT LE 17 FÉVRIER 1673" in answer["metadata"]["citations"][0]["quote"]
