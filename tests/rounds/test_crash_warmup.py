"""A restart makes progress on its rounds before its optional warm-ups (issue 51, item 11): with local
embeddings on, the round killed mid-task is asked again, without waiting for /ready, while the
document it reads is still being embedded in the background, and completes. Its task asks in another
language than the document's, which a new round's search waits for the document's vectors for (issue
50, item 12): a resumed one does not, or every start would wait again. The start-up log names each
part of the start as it ends, in their order."""

from __future__ import annotations

import json
import re
import subprocess
import sys

import httpx
import pytest

from tests.harness import upload, wait_for, wait_status
from tests.openai_stub import Hold, Reply, request_schema
from tests.rounds.test_crash import ROOT, START_SECONDS, service  # noqa: F401 - the fixture

pytestmark = pytest.mark.heavy

PARTS = ["code imported", "the service wired", "MCP tools", "schema", "rounds resumed", "reconciled"]
BOOK = "tracemonkey.pdf"  # 14 pages: half a minute of CPU and more to embed, niced below the rounds


def plan_over_the_book() -> dict:
    return {"userLanguage": "en", "objUserResponse": "Here is the plan.", "objFinalDocuments": [],
            "objWorkplan": [{"id": "t1", "agent": "analyst", "instructions": "Sag, was der Artikel vorschlägt.",
                             "inputs": [BOOK], "outputs": [], "dependsOn": []}]}


def test_a_round_killed_mid_task_is_resumed_before_the_restart_has_warmed_up(service, openai_stub, tmp_path):
    service.env["EMBEDDINGS"] = "local"
    openai_stub.script([Reply(plan_over_the_book()), Hold(then="lost")])
    service.start()
    client = service.client()
    (book,) = upload(client, BOOK)
    wid = client.post("/api/workflows/start", json={"prompt": "What does the paper propose?",
                                                     "listFileId": [book["id"]]}).json()["id"]
    assert openai_stub.wait_requests(2, timeout=START_SECONDS), "the task never called the model"
    service.kill()
    openai_stub.release()
    openai_stub.script([Reply("It proposes trace-based compilation."), Reply("All done.")])

    log_path = tmp_path / "service.log"
    log_before = log_path.stat().st_size
    # Launched, not waited for: the resumed round must not wait for /ready, which waits for the readers.
    service.proc = subprocess.Popen([sys.executable, "-m", "app"], cwd=ROOT, env=service.env, stdout=service.log,
                                    stderr=subprocess.STDOUT)
    assert openai_stub.wait_requests(3, timeout=START_SECONDS), "the round was not resumed after the restart"
    resumed = [r for r in openai_stub.records[2:] if not request_schema(r.body)]
    assert resumed and "Question: Sag, was der Artikel vorschl" in json.dumps(resumed[0].body)
    restart_log = log_path.read_bytes()[log_before:].decode(errors="replace")
    assert "waiting up to" not in restart_log  # the resumed round did not wait for its document's vectors

    status = wait_status(client, wid, "completed", "failed", timeout=START_SECONDS)
    assert status["status"] == "completed", client.get(f"/api/workflows/{wid}/logs").json()["items"][-3:]
    restart_log = log_path.read_bytes()[log_before:].decode(errors="replace")
    parts = [re.search(r"Start-up: (.*) in [0-9.]+ s\.$", line) for line in restart_log.splitlines()]
    assert [p.group(1) for p in parts if p] == PARTS, restart_log[:3000]
    assert restart_log.index("Start-up: reconciled") < restart_log.index("Started in ")
    with httpx.Client(base_url=service.url, timeout=10) as probe:
        wait_for(lambda: probe.get("/ready").status_code == 200, START_SECONDS, "the restarted service to be ready")
