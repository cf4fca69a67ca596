"""A stop while a file is being read never breaks that file for the conversation: the next round
that needs it reads it again, and the cache never holds a cut reading as the file's contents.
Stopped before the reading starts, in the middle of it (the extraction done, not yet stored),
and after it was stored but before the round's message was filled in."""

from __future__ import annotations

import asyncio
import threading

import pytest

import app.rounds.documents
import app.rounds.journal
from tests.harness import LiveServer, settings_for, upload, wait_status

pytestmark = pytest.mark.heavy

NAME = "tracemonkey.pdf"


class Gate:
    """Holds the reading at one point until released, and says when it got there."""

    def __init__(self) -> None:
        self.reached = threading.Event()
        self.open = threading.Event()

    async def wait(self) -> None:
        self.reached.set()
        while not self.open.is_set():
            await asyncio.sleep(0.02)


@pytest.mark.parametrize("point", ["before", "after", "attach"])
def test_a_file_whose_reading_was_stopped_is_read_again_by_the_next_round(tmp_path, database_url, monkeypatch,
                                                                        point):
    gate = Gate()
    real_extract, real_attach = app.rounds.documents.extract_isolated, app.rounds.journal.Journal.attach
    held = {"done": False}

    async def extract(*args, **kwargs):
        if point == "before" and not held["done"]:
            held["done"] = True
            await gate.wait()
        result = await real_extract(*args, **kwargs)
        if point == "after" and not held["done"]:
            held["done"] = True
            await gate.wait()
        return result

    async def attach(self, *args, **kwargs):
        if point == "attach" and not held["done"]:
            held["done"] = True
            await gate.wait()
        return await real_attach(self, *args, **kwargs)

    monkeypatch.setattr(app.rounds.documents, "extract_isolated", extract)
    monkeypatch.setattr(app.rounds.journal.Journal, "attach", attach)
    with LiveServer(settings_for(tmp_path, database_url)) as server, server.client() as client:
        files = upload(client, NAME)
        wid = client.post("/api/workflows/start", json={
            "prompt": "What speedup does the tracing VM achieve over SpiderMonkey?",
            "listFileId": [files[0]["id"]]}).json()["id"]
        assert gate.reached.wait(300), "the reading never got to the point"
        assert client.post(f"/api/workflows/{wid}/stop").json()["status"] == "stopped"
        gate.open.set()

        # The next round, without files: the document of round 1 is read for it and answers.
        client.post(f"/api/workflows/start?id={wid}", json={"prompt": "continue"})
        try:
            ended = wait_status(client, wid, "completed", "failed", timeout=400)["status"]
        except AssertionError:
            logs = [(e["round"], e["message"]) for e in client.get(f"/api/workflows/{wid}/logs").json()["items"]]
            raise AssertionError(f"round 2 did not end; logs: {logs}") from None
        assert ended == "completed"
        messages = client.get(f"/api/workflows/{wid}/messages").json()["items"]
        said = " ".join(m["content"] for m in messages if m["round"] == 2 and m["role"] == "assistant")
        # Answered from the document's text (which passage ranks first is retrieval's business).
        assert "tracemonkey.pdf, page" in said and "speedup" in said.lower(), said
        assert "no text" not in said and "could not read" not in said.lower()
        # Round 1's message now holds the file's contents, for every later round.
        contents = messages[0]["documents"][0]["contents"]
        assert contents and not any(c["metadata"].get("status") for c in contents)

        # A third round reads it as it is now stored (no new reading needed) and answers again.
        client.post(f"/api/workflows/start?id={wid}", json={"prompt": "Which browser embeds SpiderMonkey?"})
        assert wait_status(client, wid, "completed", "failed", timeout=120)["status"] == "completed"
        messages = client.get(f"/api/workflows/{wid}/messages").json()["items"]
        said = " ".join(m["content"] for m in messages if m["round"] == 3 and m["role"] == "assistant")
        assert "Firefox" in said, said
        logs = [e["message"] for e in client.get(f"/api/workflows/{wid}/logs").json()["items"]]
        assert any(line.startswith(f"Read {NAME}") for line in logs), logs
