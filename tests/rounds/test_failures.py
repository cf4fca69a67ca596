"""Failures stay where they happen: a broken file fails its item, a failed task fails the task."""

from __future__ import annotations

from agents.model import Usage
from tests.harness import LiveServer, plan_of, settings_for, upload, wait_status
from tests.openai_stub import Hold, Reply, Status
from tests.scripted import ScriptedModel


def test_a_broken_and_a_locked_pdf_do_not_break_the_round(tmp_path):
    with LiveServer(settings_for(tmp_path), ScriptedModel(plan=plan_of(1))) as server, server.client() as client:
        files = upload(client, "helloworld-bad.pdf", "libreoffice-writer-password.pdf", "minimal-document.pdf")
        wid = client.post("/api/workflows/start", json={"prompt": "Read these", "listFileId": [f["id"] for f in files]})
        wid = wid.json()["id"]
        assert wait_status(client, wid, "completed", "failed")["status"] == "completed"
        first = client.get(f"/api/workflows/{wid}/messages").json()["items"][0]
        by_name = {d["name"] + "." + d["ext"]: d for d in first["documents"]}
        assert "Lorem ipsum" in " ".join(c["data"] for c in by_name["minimal-document.pdf"]["contents"])
        locked = by_name["libreoffice-writer-password.pdf"]["contents"]
        assert [c["metadata"].get("status") for c in locked] == ["encrypted"]
        warnings = [e["message"] for e in client.get(f"/api/workflows/{wid}/logs").json()["items"]
                    if e["type"] == "warning"]
        assert any("libreoffice-writer-password.pdf" in w and "password" in w.lower() for w in warnings)
        for file in files:  # every upload stays downloadable
            assert client.get(f"/api/files/{file['id']}/content").status_code == 200


def test_the_password_given_at_start_opens_the_pdf(tmp_path):
    with LiveServer(settings_for(tmp_path), ScriptedModel(plan=plan_of(0))) as server, server.client() as client:
        [locked] = upload(client, "libreoffice-writer-password.pdf")
        wid = client.post("/api/workflows/start", json={"prompt": "Read it", "listFileId": [locked["id"]],
                                                        "passwords": {str(locked["id"]): "openpassword"}})
        wid = wid.json()["id"]
        wait_status(client, wid, "completed")
        first = client.get(f"/api/workflows/{wid}/messages").json()["items"][0]
        contents = first["documents"][0]["contents"]
        assert contents and all(c["metadata"].get("status") != "encrypted" for c in contents)


def test_a_failed_task_fails_only_itself_and_skips_its_dependents(tmp_path, openai_stub):
    plan = plan_of(3, chain=True)  # t1 -> t2 -> t3: t2 fails, so t3 cannot run
    openai_stub.script([Reply(plan), Reply("Part one done."), Status(400, message="context length exceeded")])
    openai_stub.default = lambda body: "Fine."
    settings = settings_for(tmp_path, openai_base_url=openai_stub.base_url, openai_api_key="test")
    with LiveServer(settings) as server, server.client() as client:
        wid = client.post("/api/workflows/start", json={"prompt": "Four parts"}).json()["id"]
        assert wait_status(client, wid, "completed", "failed")["status"] == "completed"
        messages = client.get(f"/api/workflows/{wid}/messages").json()["items"]
        failed = [m for m in messages if m["metadata"].get("failed")]
        assert len(failed) == 1 and "failed" in failed[0]["content"] and failed[0]["status"] == "step"
        logs = client.get(f"/api/workflows/{wid}/logs").json()["items"]
        # One error log for the failed task (the re-planning's own warning names it too).
        assert [e["type"] for e in logs if "(analyst) failed" in e["message"]
                and not e["message"].startswith("Work plan revised")] == ["error"]
        skipped = [e for e in logs if "skipped" in e["message"]]
        assert [e["type"] for e in skipped] == ["warning"] and "t3" in skipped[0]["message"]
        texts = [e["message"] for e in logs]  # the final answer is begun once, after the skip
        assert texts.count("Creating final response") == 1 and texts.index(skipped[0]["message"]) < texts.index(
            "Creating final response")
        assert messages[-1]["status"] == "last" and "t3" in messages[-1]["content"]
        assert "Part one done." in " ".join(m["content"] for m in messages)


def test_a_round_past_its_time_limit_fails_with_a_reason(tmp_path, openai_stub):
    openai_stub.script([Hold()])
    settings = settings_for(tmp_path, openai_base_url=openai_stub.base_url, openai_api_key="test",
                            max_round_seconds=1.0)
    with LiveServer(settings) as server, server.client() as client:
        wid = client.post("/api/workflows/start", json={"prompt": "Take your time"}).json()["id"]
        status = wait_status(client, wid, "failed", timeout=60)
        assert status["progress"] == 100
        last = client.get(f"/api/workflows/{wid}/logs").json()["items"][-1]
        assert last["type"] == "error" and "MAX_ROUND_SECONDS" in last["message"]
        assert openai_stub.wait_disconnected(timeout=10)
        openai_stub.release()


def test_a_spent_token_budget_skips_the_remaining_tasks(tmp_path):
    model = ScriptedModel(plan=plan_of(3, chain=True), usage=Usage(7, 7, calls=1))  # every call costs 14 tokens
    with LiveServer(settings_for(tmp_path, max_round_tokens=20), model) as server, server.client() as client:
        wid = client.post("/api/workflows/start", json={"prompt": "Three steps"}).json()["id"]
        assert wait_status(client, wid, "completed", "failed")["status"] == "completed"
        logs = client.get(f"/api/workflows/{wid}/logs").json()["items"]
        skipped = [e["message"] for e in logs if e["type"] == "warning" and "skipped" in e["message"]]
        assert len(skipped) == 2 and "MAX_ROUND_TOKENS" in skipped[0]  # t1 ran (28 > 20), t2 and t3 did not
        messages = client.get(f"/api/workflows/{wid}/messages").json()["items"]
        ran = [m for m in messages if m["agentName"] == "analyst" and not m["metadata"].get("skipped")]
        assert len(ran) == 1
        told = [m for m in messages if m["metadata"].get("skipped")]  # a skipped task says so, as a failed one
        assert [m["status"] for m in told] == ["step", "step"] and "MAX_ROUND_TOKENS" in told[0]["content"]


def test_the_same_bytes_uploaded_twice_are_extracted_once(tmp_path):
    import sqlite3

    with LiveServer(settings_for(tmp_path), ScriptedModel(plan=plan_of(0))) as server, server.client() as client:
        first, second = upload(client, "multicolumn.pdf", "multicolumn.pdf")
        assert first["id"] != second["id"]
        wid = client.post("/api/workflows/start", json={"prompt": "Both", "listFileId": [first["id"], second["id"]]})
        wait_status(client, wid.json()["id"], "completed")
        docs = client.get(f"/api/workflows/{wid.json()['id']}/messages").json()["items"][0]["documents"]
        assert len(docs) == 2 and docs[0]["contents"] == docs[1]["contents"]
    with sqlite3.connect(tmp_path / "data" / "foreman.db") as db:
        assert db.execute("SELECT count(*) FROM extractions").fetchone()[0] == 1
