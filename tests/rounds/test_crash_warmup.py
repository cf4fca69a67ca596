"""A restart makes progress on its rounds before its optional warm-ups (issue 51, item 11): with local
embeddings on, the round killed mid-task is asked again, without waiting for /ready, while the
document it reads is still being embedded in the background, and completes."""

from __future__ import annotations

import json
import subprocess
import sys

import httpx
import sqlalchemy as sa

from tests.harness import upload, wait_for, wait_status
from tests.openai_stub import Hold, Reply, request_schema
from tests.rounds.test_crash import ROOT, START_SECONDS, service  # noqa: F401 - the fixture

BOOK = "tracemonkey.pdf"  # 14 pages: half a minute of CPU and more to embed, niced below the rounds


def plan_over_the_book() -> dict:
    return {"userLanguage": "en", "objUserResponse": "Here is the plan.", "objFinalDocuments": [],
            "objWorkplan": [{"id": "t1", "agent": "analyst", "instructions": "Say what the paper proposes.",
                             "inputs": [BOOK], "outputs": [], "dependsOn": []}]}


def vectors_of_the_book(service) -> int:
    """How many of the book's passages have vectors (read from the database beside the service)."""
    url = service.env["DATABASE_URL"].replace("+asyncpg", "+psycopg", 1) or \
        f"sqlite:///{service.env['DATA_DIR']}/foreman.db"
    engine = sa.create_engine(url)
    try:
        with engine.connect() as conn:
            return conn.execute(sa.text("SELECT count(*) FROM chunk_vectors")).scalar() or 0
    finally:
        engine.dispose()


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
    assert resumed and "Question: Say what the paper proposes" in json.dumps(resumed[0].body)
    assert vectors_of_the_book(service) == 0  # the round did not wait for its document's vectors

    status = wait_status(client, wid, "completed", "failed", timeout=START_SECONDS)
    assert status["status"] == "completed", client.get(f"/api/workflows/{wid}/logs").json()["items"][-3:]
    restart_log = log_path.read_bytes()[log_before:].decode(errors="replace")
    assert "rounds resumed" in restart_log  # start-up says each part's time
    with httpx.Client(base_url=service.url, timeout=10) as probe:
        wait_for(lambda: probe.get("/ready").status_code == 200, START_SECONDS, "the restarted service to be ready")
