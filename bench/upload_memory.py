"""Peak memory of one 50 MB upload and its download, per file store, as multiples of the file.

Starts `python -m app` (offline) for each store: the directory on SQLite, the database and the
directory on PostgreSQL (when FOREMAN_BENCH_PG_URL names a server); reads the server's resident
memory, then its peak (VmHWM, restarted before each step) during the upload and each download:

    FOREMAN_BENCH_PG_URL=postgresql+asyncpg://postgres@127.0.0.1/postgres .venv/bin/python bench/upload_memory.py
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import tempfile
import time
import uuid

import httpx

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from bench.common import ROOT, wait  # noqa: E402

SIZE = 50 << 20


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def kb(pid: int, field: str) -> int:
    with open(f"/proc/{pid}/status") as status:
        return next(int(line.split()[1]) for line in status if line.startswith(field))


def reset_peak(pid: int) -> int:
    """Start a new peak (VmHWM) from the process's present footprint, which is returned (kB)."""
    with open(f"/proc/{pid}/clear_refs", "w") as refs:
        refs.write("5")
    return kb(pid, "VmRSS:")


def measure(env: dict[str, str]) -> tuple[float, ...]:
    port = free_port()
    env = {**os.environ, **env, "PORT": str(port)}
    for name in ("OPENAI_API_KEY", "OPENAI_BASE_URL", "API_KEYS"):
        env.pop(name, None)
    server = subprocess.Popen([sys.executable, "-m", "app"], cwd=ROOT, env=env, stdout=subprocess.DEVNULL,
                              stderr=subprocess.DEVNULL)
    base = f"http://127.0.0.1:{port}"
    try:
        wait(lambda: httpx.get(base + "/ready").status_code == 200, 120, "the server")
        time.sleep(2)  # the extraction workers' warm-up is over
        data = os.urandom(SIZE)
        with httpx.Client(base_url=base, timeout=300) as client:
            idle = reset_peak(server.pid)
            answer = client.post("/api/files", files=[("files", ("big.bin", data))])
            assert answer.status_code == 201, answer.text
            upload = kb(server.pid, "VmHWM:") - idle
            url = f"/api/files/{answer.json()[0]['id']}/content"
            before = reset_peak(server.pid)
            assert client.get(url, headers={"Accept-Encoding": "identity"}).content == data
            download = kb(server.pid, "VmHWM:") - before
            before = reset_peak(server.pid)
            assert client.get(url).content == data  # as a browser asks: brotli or gzip accepted
            compressed = kb(server.pid, "VmHWM:") - before
        return (idle / 1024, *(peak * 1024 / SIZE for peak in (upload, download, compressed)))
    finally:
        server.terminate()
        server.wait(30)


def main() -> None:
    cases = [("local on SQLite", {})]
    admin = os.environ.get("FOREMAN_BENCH_PG_URL") or os.environ.get("FOREMAN_TEST_PG_URL")
    name = "foreman_bench_upload_" + uuid.uuid4().hex[:8]
    if admin:
        url = f"{admin.rsplit('/', 1)[0]}/{name}"
        cases += [("database on PostgreSQL", {"DATABASE_URL": url, "FILE_STORE": "database"}),
                  ("local on PostgreSQL", {"DATABASE_URL": url, "FILE_STORE": "local"})]
        subprocess.run(["psql", admin.replace("+asyncpg", ""), "-qc", f"CREATE DATABASE {name}"], check=True)
    print(f"one {SIZE >> 20} MB upload, then its download; the server's peak resident memory above its footprint "
          "before each step, in multiples of the file")
    print(f"{'store':<24}{'idle MB':>9}{'upload peak':>13}{'download peak':>15}{'compressed download':>21}")
    try:
        for label, env in cases:
            with tempfile.TemporaryDirectory() as tmp:
                idle, up, down, packed = measure({**env, "DATA_DIR": tmp})
            print(f"{label:<24}{idle:>9.0f}{up:>12.2f}x{down:>14.2f}x{packed:>20.2f}x")
    finally:
        if admin:
            subprocess.run(["psql", admin.replace("+asyncpg", ""), "-qc", f"DROP DATABASE {name} WITH (FORCE)"],
                           check=True)


if __name__ == "__main__":
    main()
