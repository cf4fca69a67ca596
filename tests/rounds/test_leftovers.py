"""The leftovers collector: uploads no workflow used are removed after UNATTACHED_UPLOAD_TTL_SECONDS,
bytes without a file row (what a kill between storing the bytes and writing the row leaves) are
removed, and everything a workflow holds stays; on both databases and both file stores."""

from __future__ import annotations

import asyncio
import os
import time
from pathlib import Path

import pytest

from app.rounds.leftovers import Collector
from app.store.database import Database
from app.store.filestore import DatabaseBlobs, LocalBlobs, open_store
from app.store.repository import Repository
from tests.harness import LiveServer, settings_for, upload, wait_status

pytestmark = pytest.mark.heavy


def run_collector(settings, grace: float = 0.0) -> list:
    """Two passes of a collector of a fresh process on the same database and files (as after a restart)."""
    async def go() -> list:
        db = Database(settings.app_database_url)
        try:
            repo = Repository(db)
            storage = open_store(settings.file_store_kind, db, settings.data_dir / "files")
            collector = Collector(repo.leftovers, repo.files, storage, settings.unattached_upload_ttl_seconds, grace)
            return [await collector.collect(), await collector.collect()]
        finally:
            await db.dispose()

    return asyncio.run(go())


def stored(settings, sha: str) -> bool:
    async def go() -> bool:
        db = Database(settings.app_database_url)
        try:
            storage = open_store(settings.file_store_kind, db, settings.data_dir / "files")
            if isinstance(storage, DatabaseBlobs):
                return bool(await storage.rows.read(sha))
            return storage.path(sha).exists()
        finally:
            await db.dispose()

    return asyncio.run(go())


def orphan(settings, data: bytes) -> str:
    """Bytes stored with no file row, as a kill after the store's write and before the row's leaves them."""
    async def go() -> str:
        db = Database(settings.app_database_url)
        try:
            storage = open_store(settings.file_store_kind, db, settings.data_dir / "files")
            sha = await storage.put(data)
            if isinstance(storage, LocalBlobs):
                os.utime(storage.path(sha), (time.time() - 7200, time.time() - 7200))
            return sha
        finally:
            await db.dispose()

    return asyncio.run(go())


def rows(settings, ids: list[int]) -> set[int]:
    async def go() -> set[int]:
        db = Database(settings.app_database_url)
        try:
            return set(await Repository(db).files.files_by_id(ids))
        finally:
            await db.dispose()

    return asyncio.run(go())


TTL = 20.0


@pytest.mark.parametrize("store", ["local", "database"])
def test_unattached_uploads_and_bytes_without_a_row_are_collected_and_the_rest_stays(tmp_path: Path, database_url,
                                                                                    store):
    settings = settings_for(tmp_path, database_url, file_store=store, unattached_upload_ttl_seconds=TTL)
    with LiveServer(settings) as server, server.client() as client:
        made = time.monotonic()
        used, unused = upload(client, "testCSV.csv", "stanley-cups.tsv")
        response = client.post("/api/workflows/start", json={"prompt": "Look.", "listFileId": [used["id"]]})
        wait_status(client, response.json()["id"], "completed", timeout=600)
        time.sleep(max(0.0, made + TTL + 0.5 - time.monotonic()))  # both uploads are older than the TTL now
        [late] = upload(client, "testEXCEL.xlsx")  # younger than the TTL: stays
    lost = orphan(settings, b"bytes whose row a kill never wrote")
    first, second = run_collector(settings)
    assert first.uploads == 1 and second.uploads == 0
    assert first.blobs + second.blobs == 1  # the database store removes what two passes found unnamed
    assert rows(settings, [used["id"], unused["id"], late["id"]]) == {used["id"], late["id"]}
    assert not stored(settings, lost)
    with LiveServer(settings) as server, server.client() as client:
        assert client.get(f"/api/files/{unused['id']}").status_code == 404
        assert client.get(f"/api/files/{used['id']}/content").status_code == 200


def test_a_collector_pass_at_start_up_cleans_what_a_kill_left(tmp_path: Path):
    settings = settings_for(tmp_path, "", unattached_upload_ttl_seconds=1)
    with LiveServer(settings) as server, server.client() as client:
        [unused] = upload(client, "testCSV.csv")
    lost = orphan(settings, b"left by a kill")
    time.sleep(1.5)
    with LiveServer(settings) as server, server.client() as client:  # the engine's start-up pass
        deadline = time.monotonic() + 60
        while client.get(f"/api/files/{unused['id']}").status_code != 404 and time.monotonic() < deadline:
            time.sleep(0.2)
        assert client.get(f"/api/files/{unused['id']}").status_code == 404
    assert not stored(settings, lost)
