"""Work visible from the first second: the user's message at once, then a log per file and its progress."""

from __future__ import annotations

import json

from tests.harness import LiveServer, settings_for, upload, wait_for, wait_status


def _logs(client, wid):
    return client.get(f"/api/workflows/{wid}/logs").json()["items"]


def test_the_users_message_is_in_the_first_poll_and_reading_progress_comes_before_the_plan(tmp_path):
    with LiveServer(settings_for(tmp_path)) as server, server.client() as client:
        [big] = upload(client, "freeculture.pdf")
        started = client.post("/api/workflows/start", json={"prompt": "Summarize this book.",
                                                            "listFileId": [big["id"]]})
        assert started.status_code == 200
        wid = started.json()["id"]

        first = client.get(f"/api/workflows/{wid}/messages").json()["items"]
        assert len(first) == 1, "the user's message must be pollable as soon as the start answered"
        [mine] = first
        assert (mine["status"], mine["role"], mine["content"]) == ("first", "user", "Summarize this book.")
        [doc] = mine["documents"]
        assert (doc["fileId"], doc["name"], doc["ext"]) == (big["id"], "freeculture", "pdf")
        assert doc["mimeType"] == "application/pdf" and doc["size"] == big["size"]

        assert wait_status(client, wid, "completed", "failed", timeout=300)["status"] == "completed"
        logs = _logs(client, wid)
        texts = [e["message"] for e in logs]
        plan_at = next(i for i, t in enumerate(texts) if t.startswith("Work plan created"))
        reading = [e for e in logs[:plan_at] if e["agentName"] == "extractor"]
        assert reading[0]["message"].startswith("Reading freeculture.pdf (file 1 of 1")
        pages = [e for e in reading if " of 352 done" in e["message"]]
        assert pages, "a 352-page PDF reports the pages it has read while it reads"
        done = next(e for e in reading if e["message"].startswith("Read freeculture.pdf: 352 pages in "))
        progress = [e["progress"] for e in reading]
        assert progress == sorted(progress) and progress[0] >= 1 and done["progress"] == 9
        assert all(1 <= p <= 9 for p in progress)

        # The message now carries the extracted pages; the status endpoint went through 1-9 too.
        [mine] = client.get(f"/api/workflows/{wid}/messages?limit=1").json()["items"]
        contents = mine["documents"][0]["contents"]
        assert len(contents) == 352 and "This PDF version of Free Culture is licensed" in contents[0]["data"] + \
            contents[1]["data"] + contents[2]["data"] + contents[3]["data"]

        # A second round over the same file reads it from the cache, and says so.
        client.post(f"/api/workflows/start?id={wid}", json={"prompt": "Summarize it again.",
                                                              "listFileId": [big["id"]]})
        assert wait_status(client, wid, "completed", "failed", timeout=300)["status"] == "completed"
        again = [e["message"] for e in _logs(client, wid) if e["round"] == 2]
        assert "Read freeculture.pdf: 352 pages from the cache" in again


def test_stop_during_extraction_keeps_the_users_message_and_says_which_files_were_read(tmp_path):
    with LiveServer(settings_for(tmp_path)) as server, server.client() as client:
        small, big = upload(client, "minimal-document.pdf", "freeculture.pdf")
        wid = client.post("/api/workflows/start", json={
            "prompt": "Compare them.", "listFileId": [small["id"], big["id"]]}).json()["id"]
        wait_for(lambda: any(e["message"].startswith("Reading freeculture.pdf") for e in _logs(client, wid)),
                 120, "the big file to be read")
        assert client.post(f"/api/workflows/{wid}/stop").json()["status"] == "stopped"

        [mine] = client.get(f"/api/workflows/{wid}/messages").json()["items"]
        assert (mine["status"], mine["content"]) == ("first", "Compare them.")
        assert [d["name"] for d in mine["documents"]] == ["minimal-document", "freeculture"]
        assert "Lorem ipsum" in json.dumps(mine["documents"][0]["contents"])
        texts = [e["message"] for e in _logs(client, wid)]
        assert any(t.startswith("Read minimal-document.pdf: 1 page") for t in texts)
        assert not any(t.startswith("Read freeculture.pdf") for t in texts)
        assert texts[-1] == "Workflow stopped by user"


def test_pdfs_with_embedded_files_complete_with_their_text_and_attachments(tmp_path, database_url):
    with LiveServer(settings_for(tmp_path, database_url)) as server, server.client() as client:
        files = upload(client, "with-attachment.pdf", "attachment.pdf")
        wid = client.post("/api/workflows/start", json={
            "prompt": "Summarize these documents.", "listFileId": [f["id"] for f in files]}).json()["id"]
        assert wait_status(client, wid, "completed", "failed")["status"] == "completed"
        messages = client.get(f"/api/workflows/{wid}/messages").json()["items"]
        outer, inner = messages[0]["documents"]
        names = [c["name"] for c in inner["contents"]]
        assert "page 1" in names and any(n.startswith("attachment foo.txt") for n in names)
        assert "This document contains one attachment" in inner["contents"][0]["data"]
        assert any(c["metadata"].get("attachment") == "foo.txt" for c in inner["contents"])
        assert "Lorem ipsum" in outer["contents"][0]["data"]
        assert any(c["name"].startswith("attachment image.png") for c in outer["contents"])
        everything = json.dumps(messages) + json.dumps(_logs(client, wid))
        assert "TextStringObject" not in everything and "INSERT" not in everything
