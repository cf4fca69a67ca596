"""Alembic owns the schema: the migrations make what the models describe, on SQLite and
PostgreSQL, and a database written before migrations existed is upgraded in place."""

from __future__ import annotations

import asyncio
import hashlib
import sqlite3
import subprocess
import sys
import threading
from pathlib import Path

import sqlalchemy as sa
from alembic.autogenerate import compare_metadata
from alembic.runtime.migration import MigrationContext

from app.store import schema
from tests.harness import CORPUS, ROOT, LiveServer, settings_for, wait_status

HERE = Path(__file__).resolve().parent
# The dumps hold two rounds made by `python -m app` of main before migrations (make_dumps.py):
# round 1 summarised these two uploads, round 2 asked which team won.
UPLOADS = ("minimal-document.pdf", "stanley-cups.tsv")


def url_of(tmp: Path, database_url: str) -> str:
    return settings_for(tmp, database_url).app_database_url


def differences(url: str, metadata: sa.MetaData = schema.METADATA) -> list:
    """What autogenerate would write into a new revision: nothing when models and migrations agree."""
    engine = schema.sync_engine(url)
    try:
        with engine.connect() as conn:
            context = MigrationContext.configure(conn, opts={"include_name": schema.include_name,
                                                             "compare_type": True})
            return compare_metadata(context, metadata)
    finally:
        engine.dispose()


def revision_of(url: str) -> str | None:
    engine = schema.sync_engine(url)
    try:
        with engine.connect() as conn:
            return schema.current(conn)
    finally:
        engine.dispose()


def test_the_migrations_make_exactly_what_the_models_describe(tmp_path, database_url):
    (tmp_path / "data").mkdir()
    url = url_of(tmp_path, database_url)
    assert schema.upgrade(url) == schema.head()
    assert revision_of(url) == schema.head()
    assert differences(url) == []
    assert schema.upgrade(url) == schema.head()  # a second start changes nothing


def test_a_model_change_without_a_revision_is_found(tmp_path, database_url):
    (tmp_path / "data").mkdir()
    url = url_of(tmp_path, database_url)
    schema.upgrade(url)
    changed = sa.MetaData()
    for table in schema.METADATA.sorted_tables:
        table.to_metadata(changed)
    changed.tables["files"].append_column(sa.Column("forgotten", sa.Integer, nullable=True))
    found = differences(url, changed)
    assert [d[0] for d in found] == ["add_column"] and found[0][3].name == "forgotten"


def test_replicas_starting_together_migrate_once(tmp_path, postgres_url):
    results: list[str] = []
    threads = [threading.Thread(target=lambda: results.append(schema.upgrade(postgres_url))) for _ in range(3)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(120)
    assert results == [schema.head()] * 3
    assert differences(postgres_url) == []


def load_dump(tmp: Path, database_url: str) -> None:
    """The pre-migration database and its stored uploads, as `main` left them in DATA_DIR."""
    data = tmp / "data"
    for name in UPLOADS:
        raw = (CORPUS / name).read_bytes()
        sha = hashlib.sha256(raw).hexdigest()
        (data / "files" / sha[:2]).mkdir(parents=True, exist_ok=True)
        (data / "files" / sha[:2] / sha).write_bytes(raw)
    if not database_url:
        with sqlite3.connect(data / "foreman.db") as conn:
            conn.executescript((HERE / "pre_alembic_sqlite.sql").read_text())
        return
    import asyncpg

    async def load() -> None:
        conn = await asyncpg.connect(database_url.replace("postgresql+asyncpg://", "postgresql://"))
        try:
            await conn.execute((HERE / "pre_alembic_postgres.sql").read_text())
        finally:
            await conn.close()

    asyncio.run(load())


def test_a_database_made_before_migrations_is_upgraded_in_place(tmp_path, database_url):
    load_dump(tmp_path, database_url)
    url = url_of(tmp_path, database_url)
    assert revision_of(url) is None

    with LiveServer(settings_for(tmp_path, database_url)) as live, live.client() as client:
        assert revision_of(url) == schema.head()
        [workflow] = client.get("/api/workflows").json()["items"]
        assert (workflow["status"], workflow["currentRound"]) == ("completed", 2)
        messages = client.get(f"/api/workflows/{workflow['id']}/messages").json()["items"]
        first = messages[0]
        assert (first["role"], first["content"]) == ("user", "Summarise the documents.")
        assert sorted(d["name"] for d in first["documents"]) == ["minimal-document", "stanley-cups"]
        assert all(d["contents"] for d in first["documents"])  # the extracted contents survived
        assert [m["content"] for m in messages if m["role"] == "user"][1] == "Which team won in 1990?"
        assert messages[-1]["status"] == "last"
        logs = client.get(f"/api/workflows/{workflow['id']}/logs").json()["items"]
        assert logs[0]["message"] == "Workflow initialized" and logs[-1]["progress"] == 100
        for document in first["documents"]:
            body = client.get(f"/api/files/{document['fileId']}/content").content
            assert body == (CORPUS / f"{document['name']}.{document['ext']}").read_bytes()

        # The old rows take part in a new round. The full-text index cut from the flattened sheet was
        # dropped (0004) and is built again: the answer quotes the row, with its headings.
        started = client.post(f"/api/workflows/start?id={workflow['id']}",
                              json={"prompt": "Which team is located in Toronto?"})
        assert started.status_code == 200, started.text
        assert wait_status(client, workflow["id"], "completed", "failed")["status"] == "completed"
        answer = client.get(f"/api/workflows/{workflow['id']}/messages?id={messages[-1]['id']}").json()["items"]
        citations = [c for m in answer for c in m["metadata"].get("citations", [])]
        assert any("stanley-cups" in str(c) and "Location: TOR" in str(c) for c in citations)
    assert differences(url) == []


def test_python_m_app_migrate_migrates_and_exits(tmp_path):
    env = {"DATA_DIR": str(tmp_path / "data"), "PATH": "/usr/bin:/bin"}
    for _ in range(2):  # the second run finds nothing to do
        done = subprocess.run([sys.executable, "-m", "app", "migrate"], cwd=ROOT, env=env, capture_output=True,
                              text=True, timeout=120)
        assert done.returncode == 0, done.stderr
        assert f"schema is at revision {schema.head()}" in done.stderr
    assert revision_of(url_of(tmp_path, "")) == schema.head()
    helped = subprocess.run([sys.executable, "-m", "app", "--help"], cwd=ROOT, env=env, capture_output=True,
                            text=True, timeout=60)
    assert "python -m app migrate" in helped.stdout
