"""What keying the extraction cache per owner costs: a second tenant's read of the same bytes is
a real extraction instead of a cache hit.

    python bench/tenant_cache.py [--files testWORD_various.docx,testEXCEL.xlsx,...]

Starts `python -m app` (SQLite, offline model) with two API keys of different mandates. Tenant 1
reads the files in a round (misses), tenant 2 reads the same bytes (misses: before the per-owner
key these were hits), tenant 1 reads them again (hits). Prints the extraction seconds of each
phase from /metrics and the extraction cache's size per owner from the database.
"""

from __future__ import annotations

import argparse
import os
import sqlite3
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import httpx
from common import ROOT, free_port
from prometheus_client.parser import text_string_to_metric_families

CORPUS = Path(os.environ.get("FOREMAN_CORPUS") or ROOT.parent / "shared" / "corpus")
FILES = "testWORD_various.docx,testEXCEL.xlsx,testPPT_various.pptx,tracemonkey.pdf,sample-french-1.txt"


def extraction_seconds(base: str) -> dict[str, float]:
    out: dict[str, float] = {}
    for family in text_string_to_metric_families(httpx.get(base + "/metrics").text):
        for sample in family.samples:
            if sample.name == "foreman_extraction_duration_seconds_sum":
                key = "hit" if sample.labels["outcome"] == "cached" else "read"
                out[key] = out.get(key, 0.0) + sample.value
    return out


def phase(base: str, key: str, names: list[str]) -> tuple[float, float]:
    """(seconds extracting, seconds answering from the cache) of one round over `names`."""
    before = extraction_seconds(base)
    with httpx.Client(base_url=base, headers={"Authorization": f"Bearer {key}"}, timeout=120) as c:
        files = [("files", (n, (CORPUS / n).read_bytes())) for n in names]
        ids = [f["id"] for f in c.post("/api/files", files=files).json()]
        wid = c.post("/api/workflows/start", json={"prompt": "Summarise these.", "listFileId": ids}).json()["id"]
        while c.get(f"/api/workflows/{wid}/status").json()["status"] == "running":
            time.sleep(0.2)
    after = extraction_seconds(base)
    return tuple(after.get(k, 0.0) - before.get(k, 0.0) for k in ("read", "hit"))  # type: ignore[return-value]


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--files", default=FILES)
    names = parser.parse_args().files.split(",")
    port = free_port()
    with tempfile.TemporaryDirectory() as tmp:
        env = {**os.environ, "DATA_DIR": tmp, "PORT": str(port), "API_KEYS": "one:1:1,two:2:2"}
        for name in ("OPENAI_API_KEY", "OPENAI_BASE_URL", "DATABASE_URL"):
            env.pop(name, None)
        server = subprocess.Popen([sys.executable, "-m", "app"], cwd=ROOT, env=env, stdout=subprocess.DEVNULL,
                                  stderr=subprocess.DEVNULL)
        base = f"http://127.0.0.1:{port}"
        try:
            while True:
                try:
                    if httpx.get(base + "/ready", timeout=5).status_code == 200:
                        break
                except httpx.HTTPError:
                    pass
                if server.poll() is not None:
                    raise SystemExit("the server stopped")
                time.sleep(0.2)
            first = phase(base, "one", names)
            other = phase(base, "two", names)
            again = phase(base, "one", names)
            print(f"{len(names)} files: {', '.join(names)}")
            print(f"tenant 1, first read : {first[0]:7.2f} s extracting, {first[1]:6.3f} s from the cache")
            print(f"tenant 2, same bytes : {other[0]:7.2f} s extracting, {other[1]:6.3f} s from the cache"
                  "   (a shared key: all from the cache)")
            print(f"tenant 1, again      : {again[0]:7.2f} s extracting, {again[1]:6.3f} s from the cache")
            print(f"cost of the per-owner key for tenant 2: {other[0] + other[1] - again[1]:.2f} s more "
                  f"({(other[0] + other[1]) / max(again[1], 1e-6):.0f}x the cache's time)")
            with sqlite3.connect(Path(tmp) / "foreman.db") as db:
                for key, size in db.execute("SELECT substr(key, 66), sum(length(items)) FROM extractions GROUP BY 1"):
                    print(f"cache rows of owner {key or '(shared)'}: {size / 1024:.0f} KB")
        finally:
            server.terminate()
            server.wait(60)


if __name__ == "__main__":
    main()
