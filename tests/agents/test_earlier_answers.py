"""Earlier answers are things one can refer to: every earlier step's text is an input the planner
can name like a document, listed in its catalogue; "that" is the last step's text and "the second
one" the second upload, in the order the user sent them (never a produced file)."""

from __future__ import annotations

from agents.knowledge.memory import PriorRound, PriorTask, answer_documents
from agents.language import ANSWER, resolve_references
from tests.harness import LiveServer, settings_for, upload, wait_status


def _facts():
    return [{"name": "a.pdf", "origin": "uploaded", "round": 1}, {"name": "b.docx", "origin": "uploaded", "round": 1},
            {"name": "b-tables.xlsx", "origin": "produced", "round": 1},
            {"name": "summary-round-1.md", "origin": ANSWER, "round": 1}]


def test_that_and_the_second_one_resolve_against_what_the_user_saw():
    assert resolve_references("Now translate that to German.", _facts()) == ["summary-round-1.md"]
    assert resolve_references("Übersetze das ins Französische.", _facts()) == ["summary-round-1.md"]
    assert resolve_references("Summarise the second one only.", _facts()) == ["b.docx"]
    assert resolve_references("Fasse nur das zweite zusammen.", _facts()) == ["b.docx"]
    assert resolve_references("Résume seulement le premier.", _facts()) == ["a.pdf"]
    assert resolve_references("Translate the summary of round 1 into French.", _facts()) == ["summary-round-1.md"]
    assert resolve_references("What is the second largest city?", _facts()) == []


def test_every_delivered_step_is_a_named_document():
    r = PriorRound(round=2, request="x", finished=True, tasks=[
        PriorTask(id="t1", agent="summarizer", instructions="", inputs=[], outputs=[], depends_on=[], delivered=True,
                  text="The report is amber."),
        PriorTask(id="t2", agent="translator", instructions="", inputs=[], outputs=[], depends_on=[],
                  delivered=False, text="")])
    docs = answer_documents([r])
    assert [d.name for d in docs] == ["summary-round-2.md"]
    assert docs[0].origin == ANSWER and docs[0].text == "The report is amber." and not docs[0].new


def _round(client, prompt, ids, wid=None):
    url = "/api/workflows/start" + (f"?id={wid}" if wid else "")
    wid = client.post(url, json={"prompt": prompt, "listFileId": ids}).json()["id"]
    assert wait_status(client, wid, "completed", "failed", timeout=180)["status"] in ("completed", "failed")
    return wid


def test_the_second_one_and_that_name_the_right_inputs_over_http(tmp_path, database_url):
    with LiveServer(settings_for(tmp_path, database_url)) as server, server.client() as client:
        files = upload(client, "sample-french-1.txt", "google-doc-document.pdf")
        wid = _round(client, "Summarise each document.", [f["id"] for f in files])
        _round(client, "Summarise the second one only.", [], wid)
        messages = client.get(f"/api/workflows/{wid}/messages").json()["items"]
        plan = next(m for m in messages if m["round"] == 2 and m["agentName"] == "project_manager")
        tasks = plan["metadata"]["plan"]["tasks"]
        assert [t["inputs"] for t in tasks] == [["google-doc-document.pdf"]]
        assert tasks[0]["instructions"] == "Summarise the second one only."  # not the step plus the prompt

        _round(client, "Now translate that to German.", [], wid)
        messages = client.get(f"/api/workflows/{wid}/messages").json()["items"]
        plan = next(m for m in messages if m["round"] == 3 and m["agentName"] == "project_manager")
        assert [t["inputs"] for t in plan["metadata"]["plan"]["tasks"]] == [["summary-round-2.md"]]
        assert "summary-round-2.md" in plan["content"]
