"""EXECUTOR_ID: fixed on SQLite (a restart resumes its own rounds), unique per process on PostgreSQL."""

from __future__ import annotations

import os
import socket

import sqlalchemy as sa

from app.config import from_env
from app.store.schema import sync_url
from tests.harness import LiveServer, plan_of, wait_status
from tests.scripted import ScriptedModel

PG = "postgresql+asyncpg://db.example/foreman"


def test_sqlite_keeps_its_fixed_id_so_a_restart_resumes_its_own_rounds():
    assert from_env({}).executor_id == "local"
    assert from_env({"DATABASE_URL": "sqlite+aiosqlite:///x.db"}).executor_id == "local"


def test_on_postgresql_each_process_gets_its_own_id():
    first, second = from_env({"DATABASE_URL": PG}).executor_id, from_env({"DATABASE_URL": PG}).executor_id
    assert first != second  # two replicas on one host (or one pid reused) never share one
    assert first.startswith(f"{socket.gethostname()}-{os.getpid()}-")
    assert from_env({"DATABASE_URL": PG, "EXECUTOR_ID": "pinned"}).executor_id == "pinned"


def test_dbos_runs_the_round_under_the_process_own_id(tmp_path, postgres_url):
    settings = from_env({"DATABASE_URL": postgres_url, "DATA_DIR": str(tmp_path)})
    with LiveServer(settings, ScriptedModel(plan=plan_of(1))) as server, server.client() as client:
        wid = client.post("/api/workflows/start", json={"prompt": "One part"}).json()["id"]
        assert wait_status(client, wid, "completed", "failed")["status"] == "completed"
    engine = sa.create_engine(sync_url(postgres_url))
    try:
        with engine.connect() as conn:
            executors = conn.execute(sa.text("SELECT DISTINCT executor_id FROM dbos.workflow_status")).scalars().all()
    finally:
        engine.dispose()
    assert executors == [settings.executor_id] and settings.executor_id != "local"
