"""The file store: FILE_STORE=local|database, bytes checked on read, shared by replicas on PostgreSQL."""

from __future__ import annotations

import hashlib

import pytest
import sqlalchemy as sa

from app.config import SettingsError, from_env
from app.store.schema import sync_url
from tests.harness import CORPUS, LiveServer, other_process, settings_for, upload, wait_status


def execute(url: str, statement: str, **params: object) -> None:
    engine = sa.create_engine(sync_url(url))
    try:
        with engine.begin() as conn:
            conn.execute(sa.text(statement), params)
    finally:
        engine.dispose()


def test_the_default_store_is_the_database_on_postgresql_and_the_directory_on_sqlite():
    assert from_env({}).file_store_kind == "local"
    assert from_env({"DATABASE_URL": "postgresql+asyncpg://db/x"}).file_store_kind == "database"
    assert from_env({"DATABASE_URL": "postgresql+asyncpg://db/x", "FILE_STORE": "local"}).file_store_kind == "local"
    assert from_env({"FILE_STORE": "Database"}).file_store_kind == "database"
    with pytest.raises(SettingsError, match="FILE_STORE must be local or database"):
        from_env({"FILE_STORE": "s3"})


def test_an_upload_on_one_replica_is_downloaded_and_used_in_a_round_on_another(tmp_path, postgres_url):
    raw = (CORPUS / "stanley-cups.tsv").read_bytes()
    with LiveServer(settings_for(tmp_path / "a", postgres_url)) as a, a.client() as client_a:
        assert a.app.state.runtime.storage.kind == "database"
        [file] = upload(client_a, "stanley-cups.tsv")
        with other_process(tmp_path, postgres_url) as client_b:  # its own DATA_DIR: nothing shared but the database
            assert client_b.get(f"/api/files/{file['id']}/content").content == raw
            wid = client_b.post("/api/workflows/start", json={"prompt": "Which team is located in Toronto?",
                                                               "listFileId": [file["id"]]}).json()["id"]
            assert wait_status(client_b, wid, "completed", "failed")["status"] == "completed"
            [document] = client_b.get(f"/api/workflows/{wid}/messages").json()["items"][0]["documents"]
            assert "Maple Leafs" in " ".join(c["data"] for c in document["contents"])
    assert not list((tmp_path / "a").rglob("files/*/*"))  # no bytes went to the directory


@pytest.mark.parametrize("kind", ["local", "database"])
def test_damaged_bytes_are_refused_with_a_reason_never_served(tmp_path, database_url, kind):
    settings = settings_for(tmp_path, database_url, file_store=kind)
    with LiveServer(settings) as server, server.client() as client:
        [file] = upload(client, "stanley-cups.tsv")
        sha = hashlib.sha256((CORPUS / "stanley-cups.tsv").read_bytes()).hexdigest()
        store = server.app.state.runtime.storage
        if kind == "local":
            store.path(sha).write_bytes(b"Team\tLocation\nBlues\tSTL\n")  # a disk that changed the bytes
        else:
            execute(settings.app_database_url, "UPDATE file_chunks SET data = :d WHERE sha256 = :s",
                    d=b"Team\tLocation\nBlues\tSTL\n", s=sha)
        answer = client.get(f"/api/files/{file['id']}/content")
        assert answer.status_code == 500
        assert answer.json()["code"] == "stored_file_damaged" and "Upload the file again" in answer.json()["detail"]

        # A round given the file reads it as unreadable, says so, and goes on.
        wid = client.post("/api/workflows/start", json={"prompt": "Summarise it", "listFileId": [file["id"]]}).json()["id"]
        assert wait_status(client, wid, "completed", "failed")["status"] == "completed"
        logs = [e["message"] for e in client.get(f"/api/workflows/{wid}/logs").json()["items"]]
        assert any(m.startswith("Could not read stanley-cups.tsv") for m in logs)
        data = client.get(f"/api/workflows/{wid}/messages?includeData=true")
        assert data.json()["code"] == "stored_file_damaged"

        if kind == "local":
            store.path(sha).unlink()
        else:
            execute(settings.app_database_url, "DELETE FROM file_chunks WHERE sha256 = :s", s=sha)
        assert client.get(f"/api/files/{file['id']}/content").json()["code"] == "stored_file_missing"


def test_files_stored_in_data_dir_before_are_served_and_moved_into_the_database(tmp_path, postgres_url):
    raw = (CORPUS / "minimal-document.pdf").read_bytes()
    with LiveServer(settings_for(tmp_path, postgres_url, file_store="local")) as server, server.client() as client:
        [file] = upload(client, "minimal-document.pdf")
    with LiveServer(settings_for(tmp_path, postgres_url)) as server, server.client() as client:
        assert client.get(f"/api/files/{file['id']}/content").content == raw
    with LiveServer(settings_for(tmp_path / "elsewhere", postgres_url)) as server, server.client() as client:
        assert client.get(f"/api/files/{file['id']}/content").content == raw  # from the database now


def test_downloads_go_out_as_stored_not_compressed(tmp_path):
    raw = (CORPUS / "stanley-cups.tsv").read_bytes() * 20  # text, well over the 1 KB compression threshold
    with LiveServer(settings_for(tmp_path)) as server, server.client() as client:
        [file] = client.post("/api/files", files=[("files", ("cups.tsv", raw))]).json()
        answer = client.get(f"/api/files/{file['id']}/content", headers={"Accept-Encoding": "br, gzip"})
        assert answer.content == raw and "content-encoding" not in answer.headers
        assert answer.headers["content-length"] == str(len(raw))


async def test_hashing_and_joining_50_mb_leave_the_event_loop_free(tmp_path, database_url):
    from app.store.database import Database
    from app.store.filestore import open_store
    from tests.agents.test_off_loop import ticker

    db = Database(settings_for(tmp_path, database_url).app_database_url)
    (tmp_path / "data").mkdir()
    await db.migrate()
    data = bytes(range(256)) * (50 * 4096)
    try:
        for kind in ("local", "database"):
            store = open_store(kind, db, tmp_path / "files")
            async with ticker() as ticks:
                sha = await store.put(data)
            assert ticks[0] > 0  # the loop turned while 50 MB were hashed (and written)
            async with ticker() as ticks:
                assert await store.get(sha) == data
            assert ticks[0] > 0  # ... and while they were read, joined and checked
    finally:
        await db.dispose()
