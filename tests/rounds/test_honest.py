"""Honest about what a round could not read and could not do."""

from __future__ import annotations

import json

import pytest

from tests.harness import LiveServer, plan_of, settings_for, upload, wait_status
from tests.openai_stub import Reply, Status

UNREADABLE = {  # corpus file: what the answer must tell the user to do
    "libreoffice-writer-password.pdf": "encrypted",
    "testWORD_protected_passtika.docx": "encrypted",
    "testWORD_truncated.docx": "corrupt",
    "issue15590.pdf": "corrupt",
    "testWORD.doc": "unsupported",
}


def _round(client, prompt, files):
    wid = client.post("/api/workflows/start", json={"prompt": prompt,
                                                    "listFileId": [f["id"] for f in files]}).json()["id"]
    status = wait_status(client, wid, "completed", "failed", timeout=120)["status"]
    return wid, status, client.get(f"/api/workflows/{wid}/messages").json()["items"]


def test_every_unreadable_file_is_named_with_its_remedy_and_never_read_as_text(tmp_path):
    with LiveServer(settings_for(tmp_path)) as server, server.client() as client:
        files = upload(client, *UNREADABLE, "helloworld-bad.pdf")  # the last one is damaged but readable
        wid, status, messages = _round(client, "Summarize these documents.", files)
        assert status == "completed"
        ids = {f["name"]: f["id"] for f in files}
        answer = next(m for m in messages if m["agentName"] == "project_manager")["content"]
        assert "I could not read every file you sent" in answer
        for name, kind in UNREADABLE.items():
            line = next(line for line in answer.splitlines() if f"**{name}** (file {ids[name]})" in line)
            if kind == "encrypted":
                shape = {"prompt": "...", "listFileId": [ids[name]], "passwords": {str(ids[name]): "..."}}
                assert json.dumps(shape) in line and "password" in line
            elif kind == "corrupt":
                assert "damaged" in line and "Upload it again" in line
            else:
                assert "format that is not read" in line and "PDF, Word (.docx), Excel (.xlsx, .xls)" in line
        assert "**helloworld-bad.pdf**" not in answer  # read: it is summarised, not listed

        # The extractor's notices stay in the user's message; no assistant message quotes them.
        notices = [c["data"] for d in messages[0]["documents"] for c in d["contents"] if c["metadata"].get("status")]
        assert len(notices) >= 4
        said = " ".join(m["content"] for m in messages[1:])
        assert not any(n in said for n in notices) and "could not be extracted" not in said
        summary = next(m for m in messages if m["agentName"] == "summarizer")["content"]
        assert "Hello, world" in summary and "password" not in summary.lower()


@pytest.mark.parametrize("prompt, words", [
    ("Fasse dieses Dokument bitte zusammen.", ["verschlüsselt", "Passwort", "Datei"]),
    ("Résume ce document, s'il te plaît.", ["chiffré", "mot de passe", "fichier"]),
])
def test_the_remedy_is_given_in_the_users_language(tmp_path, prompt, words):
    with LiveServer(settings_for(tmp_path)) as server, server.client() as client:
        [locked] = upload(client, "libreoffice-writer-password.pdf")
        _, status, messages = _round(client, prompt, [locked])
        answer = messages[1]["content"]
        assert all(w in answer for w in words), answer
        assert f'"passwords": {{"{locked["id"]}": "..."}}' in answer

        # Sent with the password as the answer says, the file is read.
        wid = client.post("/api/workflows/start", json={
            "prompt": prompt, "listFileId": [locked["id"]], "passwords": {str(locked["id"]): "openpassword"}})
        wid = wid.json()["id"]
        assert wait_status(client, wid, "completed", "failed")["status"] == "completed"
        answer = client.get(f"/api/workflows/{wid}/messages").json()["items"][1]["content"]
        assert "passwords" not in answer


def test_a_plan_none_of_whose_tasks_finished_ends_failed_and_says_so(tmp_path, openai_stub):
    openai_stub.script([Reply(plan_of(2, chain=True)), Status(400, message="context length exceeded")])
    openai_stub.default = lambda body: "A review."
    settings = settings_for(tmp_path, openai_base_url=openai_stub.base_url, openai_api_key="test",
                            max_replans=0)  # no revision runs t2 without t1 (see the tests with re-planning on below)
    with LiveServer(settings) as server, server.client() as client:
        wid = client.post("/api/workflows/start", json={"prompt": "Two parts"}).json()["id"]
        status = wait_status(client, wid, "completed", "failed")
        assert status["status"] == "failed" and status["progress"] == 100
        messages = client.get(f"/api/workflows/{wid}/messages").json()["items"]
        failed, skipped = messages[2], messages[3]
        assert failed["status"] == "step" and "failed" in failed["content"] and failed["metadata"]["failed"]
        assert skipped["status"] == "step" and skipped["metadata"]["skipped"] and "t2" in skipped["content"]
        last = messages[-1]
        assert last["status"] == "last" and last["content"].startswith("Nothing that was planned was delivered")
        assert "context length exceeded" in last["content"]  # why t1 failed
        logs = client.get(f"/api/workflows/{wid}/logs").json()["items"]
        assert logs[-1]["type"] == "error" and logs[-1]["status"] == "failed"
        assert not any("completed successfully" in e["message"] for e in logs)


def test_an_internal_error_is_a_sentence_and_its_details_go_to_the_server_log(caplog):
    from sqlalchemy.exc import StatementError

    from agents.errors import UnknownAgentError
    from app.rounds.journal import reason_of

    raw = StatementError("Encoding objects of type TextStringObject is unsupported",
                         "INSERT INTO extractions (key) VALUES (?)", {}, TypeError("boom"))
    with caplog.at_level("INFO", logger="foreman.failures"):
        for exc in (raw, AttributeError("'int' object has no attribute 'sha256'")):
            said = reason_of(exc, "the writer agent")
            assert said == "the writer agent stopped on an internal error (the details are in the server log)"
    assert "INSERT INTO" in caplog.text and "sha256" in caplog.text
    assert reason_of(RuntimeError("disk full"), "the summarizer agent") == "disk full"  # a plug-in's own words
    assert reason_of(UnknownAgentError("no agent named 'x'"), "the round") == "no agent named 'x'"



def _ended(client, wid):
    status = wait_status(client, wid, "completed", "failed")
    return (status, client.get(f"/api/workflows/{wid}/messages").json()["items"],
            client.get(f"/api/workflows/{wid}/logs").json()["items"])


def test_with_replanning_on_a_round_whose_planned_tasks_all_failed_ends_failed(tmp_path, openai_stub):
    # Re-planning on (MAX_REPLANS 2): t1 fails, t2 is skipped, and the model's revision plans nothing
    # more. The last plan has no task left; the round must not read as completed for it.
    openai_stub.script([Reply(plan_of(2, chain=True)), Status(400, message="context length exceeded"),
                        Reply(plan_of(0))])
    openai_stub.default = lambda body: "A review."
    settings = settings_for(tmp_path, openai_base_url=openai_stub.base_url, openai_api_key="test")
    assert settings.max_replans == 2
    with LiveServer(settings) as server, server.client() as client:
        wid = client.post("/api/workflows/start", json={"prompt": "Two parts"}).json()["id"]
        status, messages, logs = _ended(client, wid)
        assert [m for m in messages if m["metadata"].get("revision")]  # it was re-planned
        assert status["status"] == "failed" and status["progress"] == 100
        last = messages[-1]
        assert last["status"] == "last" and last["content"].startswith("Nothing that was planned was delivered")
        assert "context length exceeded" in last["content"] and "t2" in last["content"]
        assert logs[-1]["type"] == "error" and logs[-1]["status"] == "failed"
        assert "none of the 2 planned task(s)" in logs[-1]["message"]
        assert not any("completed" in e["message"].lower() for e in logs)


def test_with_replanning_on_a_task_a_revision_dropped_counts_as_not_delivered(tmp_path, openai_stub):
    # t1 fails; the revision drops it and runs t2 without it, which delivers: completed, 1 of 2, never
    # "successfully", and the final message names t1 and why it failed.
    openai_stub.script([Reply(plan_of(2, chain=True)), Status(400, message="context length exceeded")])
    openai_stub.default = lambda body: "A review."
    settings = settings_for(tmp_path, openai_base_url=openai_stub.base_url, openai_api_key="test")
    with LiveServer(settings) as server, server.client() as client:
        wid = client.post("/api/workflows/start", json={"prompt": "Two parts"}).json()["id"]
        status, messages, logs = _ended(client, wid)
        assert status["status"] == "completed"
        revision = next(m for m in messages if m["metadata"].get("revision"))
        assert revision["metadata"]["revision"]["dropped"] == ["t1"]
        last = messages[-1]
        assert "t1 (analyst)" in last["content"] and "context length exceeded" in last["content"]
        assert logs[-1]["message"] == "Workflow completed: 1 of 2 planned tasks delivered"
        assert not any("completed successfully" in e["message"] for e in logs)
