"""Write the pre-migration dumps the upgrade test loads (kept for the record; run once).

Runs `python -m app` from a checkout of main made before Alembic (commit 89c1f67), offline,
on a fresh SQLite file and a fresh PostgreSQL database, does two rounds over real documents
through HTTP, and dumps the application's tables as SQL:

    .venv/bin/python tests/store/migrations/make_dumps.py /path/to/old/checkout postgresql://postgres@127.0.0.1/postgres
"""

from __future__ import annotations

import os
import re
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import httpx

HERE = Path(__file__).resolve().parent
CORPUS = HERE.parents[3] / "shared" / "corpus"
DB_NAME = "foreman_pre_alembic_dump"


def port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def rounds(checkout: Path, env: dict[str, str]) -> None:
    env = {**os.environ, **env, "PORT": str(p := port())}
    for name in ("OPENAI_API_KEY", "OPENAI_BASE_URL", "API_KEYS"):
        env.pop(name, None)
    server = subprocess.Popen([sys.executable, "-m", "app"], cwd=checkout, env=env)
    try:
        with httpx.Client(base_url=f"http://127.0.0.1:{p}", timeout=60) as client:
            for _ in range(600):
                try:
                    if client.get("/ready").status_code == 200:
                        break
                except httpx.HTTPError:
                    pass
                time.sleep(0.1)
            files = [("files", (n, (CORPUS / n).read_bytes())) for n in ("minimal-document.pdf", "stanley-cups.tsv")]
            ids = [f["id"] for f in client.post("/api/files", files=files).json()]
            wf = client.post("/api/workflows/start", json={"prompt": "Summarise the documents.",
                                                            "listFileId": ids}).json()["id"]
            wait(client, wf)
            client.post(f"/api/workflows/start?id={wf}", json={"prompt": "Which team won in 1990?"})
            wait(client, wf)
    finally:
        server.terminate()
        server.wait(30)


def wait(client: httpx.Client, wf: str) -> None:
    for _ in range(1200):
        if client.get(f"/api/workflows/{wf}/status").json()["status"] != "running":
            return
        time.sleep(0.1)
    raise SystemExit("the round did not finish")


def main(checkout: Path, admin_url: str) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        rounds(checkout, {"DATA_DIR": tmp})
        dump = subprocess.run(["sqlite3", f"{tmp}/foreman.db", ".dump"], check=True, capture_output=True, text=True)
        (HERE / "pre_alembic_sqlite.sql").write_text(dump.stdout)
    base = admin_url.rsplit("/", 1)[0]
    subprocess.run(["psql", admin_url, "-c", f"DROP DATABASE IF EXISTS {DB_NAME}", "-c", f"CREATE DATABASE {DB_NAME}"],
                   check=True)
    try:
        with tempfile.TemporaryDirectory() as tmp:
            rounds(checkout, {"DATA_DIR": tmp, "DATABASE_URL": f"{base}/{DB_NAME}".replace("postgresql://",
                                                                                         "postgresql+asyncpg://")})
        dump = subprocess.run(["pg_dump", "--inserts", "--no-owner", "--no-privileges", "--schema=public",
                               f"{base}/{DB_NAME}"], check=True, capture_output=True, text=True)
        # Loadable by any client into an existing database: no psql meta-commands, no CREATE SCHEMA public.
        text = re.sub(r"^\\(un)?restrict .*\n", "", dump.stdout, flags=re.M)
        text = text.replace("CREATE SCHEMA public;\n", "").replace(
            "COMMENT ON SCHEMA public IS 'standard public schema';\n", "")
        (HERE / "pre_alembic_postgres.sql").write_text(text)
    finally:
        subprocess.run(["psql", admin_url, "-c", f"DROP DATABASE IF EXISTS {DB_NAME} WITH (FORCE)"], check=True)


if __name__ == "__main__":
    main(Path(sys.argv[1]), sys.argv[2])
