"""How to keep file bytes in PostgreSQL: one bytea row, bytea rows of 1 MB, or a large object.

Writes then reads 1 MB and 50 MB through SQLAlchemy on asyncpg (as the service does), each
layout and size in its own process so each peak RSS is its own; prints seconds (median of 3)
and the peak RSS above the process's footprint before the write, as ratios to the file size:

    FOREMAN_BENCH_PG_URL=postgresql+asyncpg://postgres@127.0.0.1/postgres .venv/bin/python bench/blob_layouts.py
"""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
import time
import uuid

import sqlalchemy as sa
from sqlalchemy.ext.asyncio import create_async_engine

CHUNK = 1 << 20
LAYOUTS = ("bytea", "bytea_chunks", "large_object")
SIZES = (1 << 20, 50 << 20)


def rss_kb(field: str) -> int:
    with open("/proc/self/status") as status:
        return next(int(line.split()[1]) for line in status if line.startswith(field))


async def write(conn, layout: str, key: str, data: bytes) -> None:  # type: ignore[no-untyped-def]
    view = memoryview(data)
    if layout == "bytea":
        await conn.execute(sa.text("INSERT INTO blob_one VALUES (:k, :d)"), {"k": key, "d": data})
    elif layout == "bytea_chunks":
        for seq, start in enumerate(range(0, len(data), CHUNK)):
            await conn.execute(sa.text("INSERT INTO blob_chunks VALUES (:k, :s, :d)"),
                               {"k": key, "s": seq, "d": bytes(view[start:start + CHUNK])})
    else:
        oid = (await conn.execute(sa.text("SELECT lo_create(0)"))).scalar_one()
        for start in range(0, len(data), CHUNK):
            await conn.execute(sa.text("SELECT lo_put(:o, :off, :d)"),
                               {"o": oid, "off": start, "d": bytes(view[start:start + CHUNK])})
        await conn.execute(sa.text("INSERT INTO blob_lo VALUES (:k, :o, :n)"), {"k": key, "o": oid, "n": len(data)})


async def read(conn, layout: str, key: str) -> bytes:  # type: ignore[no-untyped-def]
    if layout == "bytea":
        return (await conn.execute(sa.text("SELECT d FROM blob_one WHERE k = :k"), {"k": key})).scalar_one()
    parts: list[bytes] = []
    if layout == "bytea_chunks":
        seq = 0
        while True:
            rows = (await conn.execute(sa.text("SELECT d FROM blob_chunks WHERE k = :k AND s >= :a AND s < :b "
                                               "ORDER BY s"), {"k": key, "a": seq, "b": seq + 8})).scalars().all()
            parts += rows
            if len(rows) < 8:
                break
            seq += 8
    else:
        oid, size = (await conn.execute(sa.text("SELECT o, n FROM blob_lo WHERE k = :k"), {"k": key})).one()
        for start in range(0, size, CHUNK):
            parts.append((await conn.execute(sa.text("SELECT lo_get(:o, :off, :n)"),
                                             {"o": oid, "off": start, "n": CHUNK})).scalar_one())
    return b"".join(parts)


async def one(url: str, layout: str, size: int) -> tuple[float, float]:
    engine = create_async_engine(url)
    data = os.urandom(size)
    times = []
    peak = 0
    for _ in range(3):
        key = uuid.uuid4().hex
        before = rss_kb("VmRSS:")
        t0 = time.perf_counter()
        async with engine.begin() as conn:
            await write(conn, layout, key, data)
        async with engine.connect() as conn:
            back = await read(conn, layout, key)
        times.append(time.perf_counter() - t0)
        assert back == data
        del back
        peak = max(peak, rss_kb("VmHWM:") - before)
    await engine.dispose()
    return sorted(times)[1], peak * 1024 / size


async def schema(url: str, create: bool) -> None:
    engine = create_async_engine(url)
    async with engine.begin() as conn:
        if create:
            await conn.execute(sa.text("CREATE TABLE blob_one (k text PRIMARY KEY, d bytea)"))
            await conn.execute(sa.text("CREATE TABLE blob_chunks (k text, s int, d bytea, PRIMARY KEY (k, s))"))
            await conn.execute(sa.text("CREATE TABLE blob_lo (k text PRIMARY KEY, o oid, n bigint)"))
    await engine.dispose()


def main() -> None:
    admin = os.environ.get("FOREMAN_BENCH_PG_URL") or os.environ.get("FOREMAN_TEST_PG_URL")
    if not admin:
        sys.exit("Set FOREMAN_BENCH_PG_URL to a PostgreSQL server, e.g. postgresql+asyncpg://postgres@127.0.0.1/postgres")
    name = "foreman_bench_blobs_" + uuid.uuid4().hex[:8]
    plain = admin.replace("+asyncpg", "")
    subprocess.run(["psql", plain, "-qc", f"CREATE DATABASE {name}"], check=True)
    url = f"{admin.rsplit('/', 1)[0]}/{name}"
    try:
        asyncio.run(schema(url, True))
        print(f"{'layout':<14}{'size':>7}{'write+read s':>14}{'peak RSS / size':>17}")
        results = {}
        for size in SIZES:
            for layout in LAYOUTS:
                out = subprocess.run([sys.executable, __file__, "--one", url, layout, str(size)], check=True,
                                     capture_output=True, text=True).stdout.split()
                seconds, ratio = float(out[0]), float(out[1])
                results[(layout, size)] = seconds
                print(f"{layout:<14}{size >> 20:>5}MB{seconds:>14.3f}{ratio:>17.2f}")
        for size in SIZES:
            base = results[("bytea", size)]
            print(f"{size >> 20} MB, time relative to one bytea row: "
                  + ", ".join(f"{layout} {results[(layout, size)] / base:.2f}" for layout in LAYOUTS))
    finally:
        subprocess.run(["psql", plain, "-qc", f"DROP DATABASE {name} WITH (FORCE)"], check=True)


if __name__ == "__main__":
    if sys.argv[1:2] == ["--one"]:
        seconds, ratio = asyncio.run(one(sys.argv[2], sys.argv[3], int(sys.argv[4])))
        print(seconds, ratio)
    else:
        main()
