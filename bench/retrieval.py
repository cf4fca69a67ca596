"""Full-text index: build time per 100 pages and query time (p50/p99) over the corpus, against the
extraction time of the same files, all measured in this run.

    .venv/bin/python bench/retrieval.py

Extraction runs in this process (the library calls the service makes in its worker processes);
the index build is what the service adds per file: chunking and stemming (`agents.knowledge.indexed.chunk_rows`)
plus writing the chunks and their FTS5 entries to a real SQLite file. Queries run through the
service's `IndexRetriever` over every indexed document of the corpus at once; the digest of what every
question finds (names, scores, places, texts, in order) tells a change that keeps the rankings.
"""

from __future__ import annotations

import asyncio
import hashlib
import os
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from agents.base import DocumentText  # noqa: E402
from agents.knowledge.indexed import IndexRetriever, chunk_rows, text_items  # noqa: E402
from app.store.database import Database  # noqa: E402
from app.store.repository.chunks import ChunkStore  # noqa: E402
from app.store.search import INDEXED_STATUSES, IndexSearch  # noqa: E402
from extractors import extract  # noqa: E402
from tests.question_set import QUESTIONS  # noqa: E402

CORPUS = Path(os.environ.get("FOREMAN_CORPUS") or Path(__file__).resolve().parents[2] / "shared" / "corpus")
QUERIES_PER_QUESTION = 8


def pages_of(items) -> int:
    return max(1, sum(1 for i in items if i.metadata.get("page") or i.metadata.get("slide") or i.metadata.get("sheet")))


async def main() -> None:
    files = sorted(p for p in CORPUS.iterdir() if p.name not in ("manifest.json",) and p.is_file())
    with tempfile.TemporaryDirectory() as tmp:
        db = Database(f"sqlite+aiosqlite:///{Path(tmp) / 'bench.db'}")
        await db.migrate()
        store = ChunkStore(db)
        extract_s = index_s = 0.0
        pages = 0
        docs: list[DocumentText] = []
        for n, path in enumerate(files):
            data = path.read_bytes()
            t0 = time.perf_counter()
            result = extract(data, path.name)
            extract_s += time.perf_counter() - t0
            if result.status not in INDEXED_STATUSES or not text_items(result.items):
                continue
            t0 = time.perf_counter()
            rows = chunk_rows(result.items)
            await store.add(f"sha-{n}", rows)
            index_s += time.perf_counter() - t0
            pages += pages_of(result.items)
            docs.append(DocumentText(name=path.name, ext="", mime="", size=len(data), items=text_items(result.items),
                                     file_id=n, sha256=f"sha-{n}"))
        retriever = IndexRetriever(IndexSearch(store))
        await retriever.search("warm up the stemmers and stop word lists", docs, 6)  # loaded once per process
        ranked = hashlib.sha256()  # what every question finds, in order: a change that keeps the ranking keeps it
        for q in QUESTIONS:
            for p in await retriever.search(q.question, docs, 6):
                ranked.update(f"{p.name}|{p.score:.9f}|{p.page}|{p.sheet}|{p.section}|{p.method}|{p.text}\n".encode())
        timings = []
        for _ in range(QUERIES_PER_QUESTION):
            for q in QUESTIONS:
                t0 = time.perf_counter()
                await retriever.search(q.question, docs, 6)
                timings.append(time.perf_counter() - t0)
        await db.dispose()
    timings.sort()
    p50, p95, p99 = (timings[min(len(timings) - 1, int(len(timings) * q))] for q in (0.5, 0.95, 0.99))
    print(f"corpus: {len(files)} files, {len(docs)} indexed, {pages} pages/sheets/slides")
    print(f"extraction:  {extract_s:8.2f} s   ({extract_s / pages * 100:6.2f} s per 100 pages)")
    print(f"index build: {index_s:8.2f} s   ({index_s / pages * 100:6.2f} s per 100 pages)")
    print(f"index build / extraction: {index_s / extract_s:.1%}  (target: under 10%)")
    print(f"rankings of the {len(QUESTIONS)} questions: sha256 {ranked.hexdigest()[:16]}")
    print(f"query over all {len(docs)} documents: p50 {p50 * 1000:.1f} ms, p95 {p95 * 1000:.1f} ms, "
          f"p99 {p99 * 1000:.1f} ms "
          f"({len(timings)} queries)")


if __name__ == "__main__":
    asyncio.run(main())
