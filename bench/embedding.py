"""Hybrid retrieval's costs, measured in one run on this machine:

    .venv/bin/python bench/embedding.py [--only query]

- passages per second per core: the local ensemble (`agents.knowledge.embeddings.local_embedder`: e5 and USE,
  one thread each in turn) over real passages
  of the corpus (freeculture.pdf cut as the index cuts it, about 90 words each);
- a 50-page upload fully embedded: the first 50 pages of freeculture.pdf, chunks stored in a
  real SQLite index, then embedded by the service's `VectorIndex` (one worker), wall time;
- query p99 with 100,000 passages in reach: the service's `IndexRetriever` (FTS5 BM25 + vectors
  fused) over 100,000 stored chunks in one SQLite file. Their text is the corpus's passages
  repeated; their vectors are random unit vectors (the scan costs the same whatever the values;
  embedding 100,000 passages here would take hours). Every question is embedded (the service's
  cache of question vectors is emptied before each query). Printed: p50 and p99 wall, the
  process's CPU per query (all threads: SQLite, the embedder, the scan), which the machine's load
  does not change, and the load average at the start and the end, which moves the wall times;
  beside the same queries, interleaved, with the vectors scored as before (OpenBLAS's float32
  product over every row, `before_nearness`), and the ratio of the two;
- start-up: the model is loaded on first use (the first file to embed), not at start; its load
  time is what the first embedding pays once.
"""

from __future__ import annotations

import argparse
import asyncio
import logging
import os
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from functools import lru_cache
from pathlib import Path

import numpy as np
from threadpoolctl import ThreadpoolController

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from agents.base import DocumentText  # noqa: E402
from agents.knowledge.embeddings import local_embedder, scores_order  # noqa: E402
from agents.knowledge.indexed import IndexRetriever, chunk_rows  # noqa: E402
from app.store import vectors as vector_index  # noqa: E402
from app.store.database import Database  # noqa: E402
from app.store.nearness import Rows, to_blob  # noqa: E402
from app.store.repository.chunks import ChunkStore  # noqa: E402
from app.store.search import IndexSearch  # noqa: E402
from app.store.vectors import VectorIndex  # noqa: E402
from extractors import extract  # noqa: E402
from tests.corpus import CORPUS  # noqa: E402
from tests.question_set import HELDOUT, QUESTIONS  # noqa: E402

PASSAGES = 100_000
QUERIES = 200


def book_pages() -> list:
    items = extract((CORPUS / "freeculture.pdf").read_bytes(), "freeculture.pdf").items
    return [i for i in items if i.is_text and i.data.strip()]


def load_time() -> float:
    t0 = time.perf_counter()
    model = local_embedder()
    model.query("warm")
    return time.perf_counter() - t0


def per_core(texts: list[str]) -> tuple[float, float]:
    """(passages per CPU second of the one embedding thread, per wall second): on a shared machine
    the CPU figure is the model's, the wall figure what the load left of a core."""
    model = local_embedder()
    model.passages(texts[:2])
    t0, c0 = time.perf_counter(), time.thread_time()
    model.passages(texts)
    return len(texts) / (time.thread_time() - c0), len(texts) / (time.perf_counter() - t0)


async def fifty_pages(pages: list, tmp: Path) -> tuple[int, float]:
    db = Database(f"sqlite+aiosqlite:///{tmp / 'fifty.db'}")
    await db.migrate()
    store = ChunkStore(db)
    rows = chunk_rows(pages[:50])
    await store.add("book", rows)
    index = VectorIndex(store, local_embedder())
    index.embedder.query("warm")  # the model loaded: what a running service has
    t0 = time.perf_counter()
    index.schedule(["book"])
    await asyncio.sleep(0)
    await index.idle()
    seconds = time.perf_counter() - t0
    assert await store.embedded(["book"], index.model) == {"book"}
    await index.close()
    await db.dispose()
    return len(rows), seconds


@lru_cache(maxsize=1)
def _blas() -> ThreadpoolController:
    return ThreadpoolController()  # the BLAS libraries found once, as the service did


def before_nearness(matrices: Sequence[tuple[np.ndarray, Rows]], question: np.ndarray,
                    float32: dict[int, np.ndarray]) -> tuple[np.ndarray, list[tuple[int, float]]]:
    """The vectors scored as before the int8 scan: each file's float32 matrix times the question
    on one BLAS thread, end to end, the best 50 sorted (`float32` keeps the matrices, as the
    service's cache did)."""
    for _, rows in matrices:
        if id(rows) not in float32:
            float32[id(rows)] = rows.exact.astype(np.float32)
    parts = [float32[id(rows)] for _, rows in matrices]
    with _blas().limit(limits=1, user_api="blas"):
        scores = np.concatenate([m @ question for m in parts])
    return np.concatenate([ids for ids, _ in matrices]), scores_order(scores)


async def hundred_thousand(pages: list, tmp: Path) -> dict[str, tuple[float, float, float]]:
    db = Database(f"sqlite+aiosqlite:///{tmp / 'big.db'}")
    await db.migrate()
    store = ChunkStore(db)
    base = chunk_rows(pages)
    rng = np.random.default_rng(7)
    files, per_file = 100, PASSAGES // 100
    embedder = local_embedder()
    dimensions = len(embedder.query("warm"))
    docs = []
    for f in range(files):
        rows = [dict(base[i % len(base)], seq=i) for i in range(per_file)]
        sha = f"sha-{f}"
        await store.add(sha, rows)
        ids = [i for i, _ in await store.texts(sha)]
        vectors = rng.standard_normal((len(ids), dimensions)).astype(np.float32)
        vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
        await store.add_vectors(sha, embedder.name, [(i, to_blob(v)) for i, v in zip(ids, vectors, strict=True)])
        docs.append(DocumentText(name=f"book-{f}.pdf", ext="pdf", mime="application/pdf", size=1, items=[],
                                 file_id=f, sha256=sha))
    index = VectorIndex(store, embedder)
    retriever = IndexRetriever(IndexSearch(store, index))
    questions = [q.question for q in [*QUESTIONS, *HELDOUT]]
    found = await retriever.search(questions[0], docs, 6)  # warm: the matrices read once, the model loaded
    assert found and found[0].method == "hybrid"
    service = vector_index._nearness
    float32: dict[int, np.ndarray] = {}
    ways: dict[str, Callable[..., tuple[np.ndarray, list[tuple[int, float]]]]] = {
        "the service (int8 scan, float16 rescoring)": service,
        "before (float32 product)": lambda matrices, question: before_nearness(matrices, question, float32)}
    # Interleaved, so both see the same load; the question embedded either way.
    runs: dict[str, tuple[list[float], list[float]]] = {way: ([], []) for way in ways}
    for n in range(QUERIES):
        for way, (timings, cpu) in runs.items():
            vector_index._nearness = ways[way]
            index._questions.clear()  # every question embedded, as a new one is
            t0, c0 = time.perf_counter(), time.process_time()
            await retriever.search(questions[n % len(questions)], docs, 6)
            timings.append(time.perf_counter() - t0)
            cpu.append(time.process_time() - c0)
    vector_index._nearness = service
    await index.close()
    await db.dispose()
    return {way: _figures(timings, cpu) for way, (timings, cpu) in runs.items()}


def _figures(timings: list[float], cpu: list[float]) -> tuple[float, float, float]:
    """(p50, p99, mean CPU) in seconds."""
    timings = sorted(timings)
    return timings[len(timings) // 2], timings[min(len(timings) - 1, int(len(timings) * 0.99))], sum(cpu) / len(cpu)


async def main(only: str) -> None:
    logging.disable(logging.WARNING)  # pypdf's font warnings over the book
    pages = book_pages()
    with tempfile.TemporaryDirectory() as tmp:
        if only != "query":
            texts = [r["text"] for r in chunk_rows(pages[:20])][:48]
            print(f"model load (lazy, on the first file embedded, not at start-up): {load_time():.2f} s")
            rate, wall = per_core(texts)
            print(f"passages per second per core: {rate:.1f} per CPU second ({1000 / rate:.0f} ms of CPU a passage), "
                  f"{wall:.1f} per wall second on this machine now ({len(texts)} passages of ~90 words, one thread)")
            chunks, seconds = await fifty_pages(pages, Path(tmp))
            print(f"50-page upload (freeculture.pdf pages 1-50, {chunks} passages) fully embedded in {seconds:.1f} s "
                  f"by one background worker")
        start = os.getloadavg()[0]
        figures = await hundred_thousand(pages, Path(tmp))
        print(f"query with {PASSAGES:,} passages in reach (hybrid: FTS5 BM25 + vectors, question embedded), "
              f"{QUERIES} queries each way, interleaved; load average {start:.1f} at the start, "
              f"{os.getloadavg()[0]:.1f} at the end, on {os.cpu_count()} cores:")
        for way, (p50, p99, cpu) in figures.items():
            print(f"  {way:44s} p50 {p50 * 1000:4.0f} ms, p99 {p99 * 1000:4.0f} ms wall, "
                  f"{cpu * 1000:5.1f} ms of CPU per query")
        now, before = figures.values()
        print(f"  now / before: CPU {now[2] / before[2]:.2f}x, p50 {now[0] / before[0]:.2f}x, p99 {now[1] / before[1]:.2f}x "
              f"(target p99 < 100 ms)")


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--only", choices=["query"], default="")
    asyncio.run(main(parser.parse_args().only))
