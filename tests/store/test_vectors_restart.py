"""Vectors and repeated crashes (issue 51, item 11): a start killed while it embeds a file leaves what
it made to the next one, and a round resumed after a crash waits for no file's vectors."""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
import threading
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from agents.base import DocumentText
from agents.knowledge.embeddings import InWorkers
from agents.knowledge.indexed import IndexRetriever, chunk_rows
from agents.model import CallScope
from app.store import vectors
from app.store.database import Database
from app.store.repository.chunks import ChunkStore
from app.store.search import IndexSearch
from app.store.vectors import VectorIndex
from extractors.base import ContentItem
from tests.harness import wait_for
from tests.store.test_vectors import TEXT, TURM, HashEmbedder, turm_index

ROOT = Path(__file__).resolve().parents[2]

PARAGRAPHS = "\n\n".join(f"Paragraph {n} tells of the lighthouse keeper's year {1900 + n}, its storms and its "
                         f"ships, at length, so that it makes a chunk of its own. " * 12 for n in range(6))


class Killed(HashEmbedder):
    """A model whose process is killed after `batches` batches: it embeds no more."""

    def __init__(self, name: str, batches: int) -> None:
        super().__init__(name)
        self.batches = batches

    def passages(self, texts: Sequence[str]) -> np.ndarray:
        if self.batches == 0:
            raise RuntimeError("killed")
        self.batches -= 1
        return super().passages(texts)


async def test_the_vectors_a_killed_start_made_are_kept_and_the_next_start_makes_only_the_rest(tmp_path, monkeypatch):
    monkeypatch.setattr(vectors, "BATCH", 2)
    db = Database(f"sqlite+aiosqlite:///{tmp_path / 'k.db'}")
    await db.migrate()
    try:
        store = ChunkStore(db)
        items = [ContentItem(sequence_nr=1, name="text", ext="txt", content_type="text/plain", data=PARAGRAPHS)]
        await store.add("sha-k", chunk_rows(items))
        chunks = len(await store.texts("sha-k"))
        assert chunks >= 5, chunks

        first = VectorIndex(store, Killed("model-k", batches=2))
        await first.ready(["sha-k"])
        await first.idle()  # the third batch failed: the start was "killed"
        await first.close()
        assert len(await store.vector_ids("sha-k", "model-k")) == 4  # two batches kept
        assert await store.embedded(["sha-k"], "model-k") == set()

        again = HashEmbedder("model-k")
        second = VectorIndex(store, again)
        await second.ready(["sha-k"])
        await second.idle()
        await second.close()
        assert len(again.texts) == chunks - 4  # only what the killed start had not made
        assert await store.embedded(["sha-k"], "model-k") == {"sha-k"}
        assert len(await store.vectors("sha-k", "model-k")) == chunks
    finally:
        await db.dispose()


async def test_a_round_resumed_after_a_crash_does_not_wait_for_the_vectors_of_a_file_in_another_language(
        tmp_path, monkeypatch):
    # The wait of issue 50, item 12, begun anew by each start: under kills seconds apart, no round got on.
    monkeypatch.setattr(vectors, "CROSS_LANGUAGE_WAIT", 600.0)
    async with turm_index(tmp_path) as (store, index, _):
        doc = DocumentText(name="turm.txt", ext="txt", mime="text/plain", size=len(TURM), items=[("text", TURM)],
                           file_id=1, sha256="sha-de")
        retriever = IndexRetriever(IndexSearch(store, index))
        with CallScope.entered(workflow="w", round_no=1, resumed=True):
            search = asyncio.create_task(retriever.search("When was the Turm of the lighthouse finished?", [doc], 3))
        while not search.done() and "sha-de" not in index._waits:
            await asyncio.sleep(0.01)
        assert "sha-de" not in index._waits  # no wait begun
        found = await search
        assert found and {p.method for p in found} == {"keyword"} and "1874" in found[0].text  # from its words


class SlowToLoad(HashEmbedder):
    """A model whose question side loads, on first use, only once its gate opens (tens of seconds on a
    loaded machine for the local models)."""

    def __init__(self, name: str) -> None:
        super().__init__(name)
        self.gate = threading.Event()
        self.loaded = False

    def passages(self, texts: Sequence[str]) -> np.ndarray:  # the passage side is another model's copy
        return np.stack([HashEmbedder.query(self, t) for t in texts])

    def query(self, text: str) -> np.ndarray:
        if not self.loaded:
            self.gate.wait(600)
            self.loaded = True
        return super().query(text)

    def query_ready(self) -> bool:
        return self.loaded


async def test_a_search_does_not_wait_for_the_question_models_to_load_and_uses_them_once_loaded(tmp_path):
    # A resumed round's first search waited for the local models' load in the service process.
    db = Database(f"sqlite+aiosqlite:///{tmp_path / 'l.db'}")
    await db.migrate()
    embedder = SlowToLoad("model-l")
    store = ChunkStore(db)
    index = VectorIndex(store, embedder)
    try:
        items = [ContentItem(sequence_nr=1, name="text", ext="txt", content_type="text/plain", data=TEXT)]
        await store.add("sha-l", chunk_rows(items))
        await index.ready(["sha-l"])
        await index.idle()  # the file's vectors exist; the question side is not loaded
        doc = DocumentText(name="tower.txt", ext="txt", mime="text/plain", size=len(TEXT), items=[("text", TEXT)],
                           file_id=1, sha256="sha-l")
        retriever = IndexRetriever(IndexSearch(store, index))
        # A guard, not a measure: the search answers while the load is held back (else it never would).
        found = await asyncio.wait_for(retriever.search("When was the tower completed?", [doc], 3), 120)
        assert found and {p.method for p in found} == {"keyword"} and "1874" in found[0].text
        embedder.gate.set()
        assert index._loading is not None
        await index._loading
        found = await retriever.search("When was the tower completed?", [doc], 3)
        assert found and {p.method for p in found} == {"hybrid"}
    finally:
        embedder.gate.set()
        await index.close()
        await db.dispose()


def held_passages(texts: list[str]) -> np.ndarray:
    """In an embedding process: writes its pid where the text says, then embeds for good."""
    Path(texts[0]).write_text(str(os.getpid()))
    threading.Event().wait()
    raise AssertionError("unreachable")


class OneChunk:
    """The chunk store as `embed_now` reads it: one chunk, whose text is a path."""

    def __init__(self, text: str) -> None:
        self.text = text

    async def vector_ids(self, sha256: str, model: str) -> set[int]:
        return set()

    async def texts(self, sha256: str) -> list[tuple[int, str]]:
        return [(1, self.text)]


SERVICE = """
import asyncio, sys
from agents.knowledge.embeddings import InWorkers
from app.store.vectors import VectorIndex
from tests.store.test_vectors_restart import HashEmbedder, OneChunk, held_passages

async def main():
    index = VectorIndex(OneChunk(sys.argv[1]), InWorkers(HashEmbedder("m"), 1, held_passages))
    index.schedule(["sha"])
    await asyncio.Event().wait()

asyncio.run(main())
"""


def test_an_embedding_process_ends_with_a_killed_service(tmp_path):
    # Each SIGKILL of a service with local embeddings left its embedding process (270 MB) for good.
    pid_file = tmp_path / "worker.pid"
    service = subprocess.Popen([sys.executable, "-c", SERVICE, str(pid_file)], cwd=ROOT)
    worker = 0
    try:
        wait_for(lambda: pid_file.exists() and pid_file.read_text(), 120, "the embedding process to start")
        worker = int(pid_file.read_text())
        service.kill()
        service.wait(30)
        wait_for(lambda: not Path(f"/proc/{worker}").exists() or "Z" in Path(f"/proc/{worker}/stat").read_text().split()[2],
                 60, "the embedding process to end")  # a guard: it checks its service every second
    finally:
        service.kill()
        if worker and Path(f"/proc/{worker}").exists():
            os.kill(worker, signal.SIGKILL)


def niced_passages(texts: list[str]) -> np.ndarray:
    """In an embedding process: its niceness as the first number of each vector."""
    return np.array([[os.nice(0), *HashEmbedder("m").query(t)[1:]] for t in texts], dtype=np.float32)


async def test_the_local_models_passages_are_embedded_in_a_niced_process_that_close_ends(tmp_path):
    """The index embeds through the embedder; `InWorkers` makes its passages in a worker process of its own,
    niced below the service, and the index's `close` ends it."""
    db = Database(f"sqlite+aiosqlite:///{tmp_path / 'w.db'}")
    await db.migrate()
    try:
        store = ChunkStore(db)
        items = [ContentItem(sequence_nr=1, name="text", ext="txt", content_type="text/plain", data=TEXT)]
        await store.add("sha-w", chunk_rows(items))
        workers = InWorkers(HashEmbedder("model-w"), 1, niced_passages)
        index = VectorIndex(store, workers)
        assert await index.wait_ready(["sha-w"], 120) == {"sha-w"}
        [(_, blob), *_] = await store.vectors("sha-w", "model-w")
        assert float(np.frombuffer(blob, dtype=np.float16)[0]) >= os.nice(0) + 10  # not in this process
        assert workers._pool is not None
        processes = list(workers._pool._processes.values())
        assert processes and all(p.is_alive() for p in processes)
        await index.close()
        assert not any(p.is_alive() for p in processes) and workers._pool is None
    finally:
        await db.dispose()
