"""Nothing delivered is not success: a task that produced nothing of what it was asked is not
"done", a round whose only file was unreadable does not complete "successfully", and a wrong
password is told apart from a missing one, without asking the user to upload documents."""

from __future__ import annotations

from tests.harness import LiveServer, settings_for, upload, wait_status

LOCKED = "libreoffice-writer-password.pdf"


def _round(client, prompt, ids, wid=None, passwords=None):
    url = "/api/workflows/start" + (f"?id={wid}" if wid else "")
    body = {"prompt": prompt, "listFileId": ids, **({"passwords": passwords} if passwords else {})}
    wid = client.post(url, json=body).json()["id"]
    status = wait_status(client, wid, "completed", "failed", timeout=120)["status"]
    return wid, status


def _said(client, wid, round_no):
    messages = client.get(f"/api/workflows/{wid}/messages").json()["items"]
    return [m for m in messages if m["round"] == round_no and m["role"] == "assistant"]


def _logs(client, wid, round_no):
    return [e for e in client.get(f"/api/workflows/{wid}/logs").json()["items"] if e["round"] == round_no]


def test_a_translation_the_offline_model_cannot_make_is_not_reported_done(tmp_path, database_url):
    with LiveServer(settings_for(tmp_path, database_url)) as server, server.client() as client:
        doc = upload(client, "sample-french-1.txt")[0]["id"]
        wid, status = _round(client, "Translate this document into German.", [doc])
        final = _said(client, wid, 1)[-1]["content"]
        logs = _logs(client, wid, 1)
        assert status == "failed"
        assert "The planned step is done" not in final and "Nothing that was planned was delivered" in final
        assert not any(e["message"] == "Workflow completed successfully" for e in logs)
        assert any("delivered nothing of what it was asked: translator" in e["message"] for e in logs)


def test_a_missing_and_a_wrong_password_are_told_apart_and_nobody_is_asked_to_upload(tmp_path, database_url):
    with LiveServer(settings_for(tmp_path, database_url)) as server, server.client() as client:
        locked = upload(client, LOCKED)[0]["id"]
        wid, status = _round(client, "Summarize this document.", [locked])
        answer = _said(client, wid, 1)[0]["content"]
        assert "no password was given" in answer and "does not open it" not in answer
        assert "upload documents" not in answer.lower() and "without documents" not in answer.lower()
        logs = _logs(client, wid, 1)
        assert "Workflow completed successfully" not in [e["message"] for e in logs]
        assert any(e["message"].startswith("Workflow completed without a readable file") and e["type"] == "warning"
                   for e in logs)

        _round(client, "Summarize this document.", [locked], wid, passwords={str(locked): "not-the-password"})
        answer = _said(client, wid, 2)[0]["content"]
        assert "the password given does not open it" in answer and "no password was given" not in answer
        assert "upload documents" not in answer.lower()
        assert any(e["message"] == f"Could not read {LOCKED}: the password given does not open it."
                   for e in _logs(client, wid, 2))

        _, status = _round(client, "Summarize this document.", [locked], wid, passwords={str(locked): "openpassword"})
        assert status == "completed"
        third = _said(client, wid, 3)[0]["content"]
        assert "no password was given" not in third and "does not open it" not in third
