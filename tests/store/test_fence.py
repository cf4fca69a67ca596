"""Fencing on PostgreSQL: a round's write lands only while its execution owns the round's DBOS workflow."""

from __future__ import annotations

import asyncio

import pytest

from app.store.database import Database
from app.store.ownership import Claim, ClaimLostError
from app.store.records import NewLog
from app.store.repository import Repository
from tests.harness import LiveServer, pg_fetch, settings_for
from tests.openai_stub import Hold


def test_a_write_by_an_execution_that_lost_the_round_is_refused_whole(tmp_path, postgres_url, openai_stub):
    openai_stub.script([Hold()])
    settings = settings_for(tmp_path, postgres_url, openai_base_url=openai_stub.base_url, openai_api_key="test")
    with LiveServer(settings) as server, server.client() as client:
        wid = client.post("/api/workflows/start", json={"prompt": "Plan this"}).json()["id"]
        assert openai_stub.wait_requests(1, timeout=30)  # the round runs, waiting for its plan
        rid = f"{wid}:1"
        owner = pg_fetch(postgres_url, "SELECT owner_xid FROM dbos.workflow_status WHERE workflow_uuid = $1",
                         rid)[0]["owner_xid"]

        async def write(token: str):
            db = Database(postgres_url)
            try:
                probe = NewLog(f"{rid}:probe:{token}", f"Written by {token}", agent_name="system")
                return await Repository(db).workflows.append(wid, 1, logs=[probe], claim=Claim(rid, token))
            finally:
                await db.dispose()

        with pytest.raises(ClaimLostError):
            asyncio.run(write("a-token-another-replica-held"))
        assert asyncio.run(write(owner)) is not None
        logs = [entry["message"] for entry in client.get(f"/api/workflows/{wid}/logs").json()["items"]]
        assert f"Written by {owner}" in logs and "Written by a-token-another-replica-held" not in logs
        openai_stub.release()
