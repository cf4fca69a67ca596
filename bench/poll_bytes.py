"""Bytes on the wire of the first poll of a workflow over a 352-page book (freeculture.pdf).

    python bench/poll_bytes.py [--root DIR]

Starts `python -m app` (SQLite, offline model) from this checkout, or from DIR to measure
another version with the same requests; uploads the book, runs a round over it and prints the
size of the first page of messages (`limit=1` and the default) as sent, without and with
`Accept-Encoding` (gzip, br), and with `includeData=true`; then the ratios against the
uncompressed answer, all measured in this one run.
"""

from __future__ import annotations

import argparse
import os
import tempfile
import time
from pathlib import Path

import httpx
from common import ROOT, service, wait

BOOK = ROOT.parent / "shared" / "corpus" / "freeculture.pdf"


def wire_bytes(client: httpx.Client, path: str, encoding: str | None) -> int:
    """The body's length as sent (before any decompression)."""
    headers = {"Accept-Encoding": encoding or "identity"}
    with client.stream("GET", path, headers=headers) as response:
        response.raise_for_status()
        return sum(len(chunk) for chunk in response.iter_raw())


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--root", type=Path, default=ROOT, help="checkout whose `python -m app` is measured")
    args = parser.parse_args()
    port = 19000 + os.getpid() % 1000
    with tempfile.TemporaryDirectory() as tmp, service(tmp, port, root=args.root, ready_within=120) as base, \
            httpx.Client(base_url=base, timeout=120) as client:
        file_id = client.post("/api/files", files={"files": (BOOK.name, BOOK.read_bytes())}).json()[0]["id"]
        wid = client.post("/api/workflows/start", json={"prompt": "Summarise this book.",
                                                        "listFileId": [file_id]}).json()["id"]
        started = time.monotonic()
        wait(lambda: client.get(f"/api/workflows/{wid}/status").json()["status"] != "running", 600, "the round")
        print(f"{args.root}: round over {BOOK.name} done in {time.monotonic() - started:.0f} s")
        rows = []
        for label, query in (("limit=1", "?limit=1"), ("default (100)", "")):
            path = f"/api/workflows/{wid}/messages{query}"
            plain = wire_bytes(client, path, None)
            gz, br = wire_bytes(client, path, "gzip"), wire_bytes(client, path, "br")
            data = wire_bytes(client, path + ("&" if query else "?") + "includeData=true", None)
            rows.append((label, plain, gz, br, data))
    print(f"{'first page':<15}{'identity':>12}{'gzip':>12}{'br':>12}{'includeData':>14}  gzip/identity  br/identity")
    for label, plain, gz, br, data in rows:
        print(f"{label:<15}{plain:>12,}{gz:>12,}{br:>12,}{data:>14,}  {gz / plain:>13.3f}  {br / plain:>11.3f}")


if __name__ == "__main__":
    main()
