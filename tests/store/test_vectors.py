"""The chunk vectors of the search index (SQLite and PostgreSQL): made in the background once per
file, recorded with their model, made again (never mixed) when the model changes, removed with
the file's chunks; a search fuses them with BM25 once they exist."""

from __future__ import annotations

import asyncio
import hashlib
import threading
from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager

import numpy as np

from agents.base import DocumentText
from agents.knowledge.indexed import IndexRetriever, chunk_rows
from app.store import vectors
from app.store.database import Database
from app.store.repository.chunks import ChunkStore, delete_chunks_tx
from app.store.search import IndexSearch
from app.store.vectors import VectorIndex
from extractors.base import ContentItem


class HashEmbedder:
    """A stand-in model: a unit vector per text from its hash (the same text, the same vector)."""

    def __init__(self, name: str) -> None:
        self.name = name
        self.texts: list[str] = []

    def passages(self, texts: Sequence[str]) -> np.ndarray:
        self.texts += texts
        return np.stack([self.query(t) for t in texts])

    def query(self, text: str) -> np.ndarray:
        seed = int.from_bytes(hashlib.sha256(text.encode()).digest()[:8], "little")
        v = np.random.default_rng(seed).standard_normal(16).astype(np.float32)
        return v / np.linalg.norm(v)


TEXT = ("The tower was completed in 1874. Its lamp could be seen from far away.\n\n"
        "The last keeper left in 1961, when the light was automated.")


async def test_vectors_are_made_once_by_their_model_again_for_another_and_go_with_the_chunks(tmp_path, database_url):
    db = Database(database_url or f"sqlite+aiosqlite:///{tmp_path / 'v.db'}")
    await db.migrate()
    try:
        store = ChunkStore(db)
        items = [ContentItem(sequence_nr=1, name="text", ext="txt", content_type="text/plain", data=TEXT)]
        await store.add("sha-a", chunk_rows(items))
        first = HashEmbedder("model-a")
        index = VectorIndex(store, first)
        assert await index.ready(["sha-a"]) == set()  # none yet: scheduled, and the caller goes on
        await index.idle()
        assert await store.embedded(["sha-a"], "model-a") == {"sha-a"}
        assert await index.ready(["sha-a"]) == {"sha-a"}
        made = len(first.texts)
        assert made >= 1
        index.schedule(["sha-a"])  # done already: not made again
        await index.idle()
        assert len(first.texts) == made
        await index.close()

        # The operator changed the model: the file is embedded again by it, the old vectors replaced.
        second = HashEmbedder("model-b")
        index = VectorIndex(store, second)
        assert await index.ready(["sha-a"]) == set()
        await index.idle()
        assert await store.embedded(["sha-a"], "model-b") == {"sha-a"}
        assert await store.embedded(["sha-a"], "model-a") == set()
        assert [len(v) for _, v in await store.vectors("sha-a", "model-b")] == [16 * 2] * made  # float16

        # A search over a file with vectors fuses them with BM25 and says so.
        doc = DocumentText(name="tower.txt", ext="txt", mime="text/plain", size=len(TEXT), items=[("text", TEXT)],
                           file_id=1, sha256="sha-a")
        found = await IndexRetriever(IndexSearch(store, index)).search("When was the tower completed?", [doc], 3)
        assert found and {p.method for p in found} == {"hybrid"}
        assert "1874" in found[0].text
        assert {p.method for p in await IndexRetriever(IndexSearch(store)).search("tower", [doc], 3)} == {"keyword"}

        await db.run_write(delete_chunks_tx, ["sha-a"], db.is_sqlite)
        assert await store.vectors("sha-a", "model-b") == []
        await index.close()
    finally:
        await db.dispose()


async def test_the_nearness_of_a_files_vectors_is_computed_off_the_loop(tmp_path, monkeypatch):
    """A hundred books are 100,000 vectors: their product with the question runs in a worker thread."""
    import threading

    import app.store.vectors as search

    db = Database(f"sqlite+aiosqlite:///{tmp_path / 'n.db'}")
    await db.migrate()
    threads: list[int] = []
    computed = search._nearness

    def recorded(*args):
        threads.append(threading.get_ident())
        return computed(*args)

    monkeypatch.setattr(search, "_nearness", recorded)
    try:
        store = ChunkStore(db)
        items = [ContentItem(sequence_nr=1, name="text", ext="txt", content_type="text/plain", data=TEXT)]
        await store.add("sha-n", chunk_rows(items))
        index = VectorIndex(store, HashEmbedder("model-n"))
        await index.ready(["sha-n"])
        await index.idle()
        doc = DocumentText(name="tower.txt", ext="txt", mime="text/plain", size=len(TEXT), items=[("text", TEXT)],
                           file_id=1, sha256="sha-n")
        found = await IndexRetriever(IndexSearch(store, index)).search("When was the tower completed?", [doc], 3)
        assert found and found[0].method == "hybrid"
        assert threads and threading.get_ident() not in threads
        await index.close()
    finally:
        await db.dispose()


async def test_a_question_is_embedded_off_the_loop_once_while_the_database_matches_its_words(tmp_path):
    """The question's vector is made in a worker thread, kept for the next search with the same
    words; the database's matches and the vector ranking are fused as before."""
    import threading

    db = Database(f"sqlite+aiosqlite:///{tmp_path / 'q.db'}")
    await db.migrate()
    try:
        store = ChunkStore(db)
        items = [ContentItem(sequence_nr=1, name="text", ext="txt", content_type="text/plain", data=TEXT)]
        await store.add("sha-q", chunk_rows(items))
        asked: list[tuple[str, int]] = []

        class Counting(HashEmbedder):
            def passages(self, texts: Sequence[str]) -> np.ndarray:
                return np.stack([HashEmbedder.query(self, t) for t in texts])

            def query(self, text: str) -> np.ndarray:
                asked.append((text, threading.get_ident()))
                return HashEmbedder.query(self, text)

        index = VectorIndex(store, Counting("model-q"))
        await index.ready(["sha-q"])
        await index.idle()
        doc = DocumentText(name="tower.txt", ext="txt", mime="text/plain", size=len(TEXT), items=[("text", TEXT)],
                           file_id=1, sha256="sha-q")
        retriever = IndexRetriever(IndexSearch(store, index))
        for _ in range(2):
            found = await retriever.search("When was the tower completed?", [doc], 3)
            assert found and found[0].method == "hybrid" and "1874" in found[0].text
        assert [text for text, _ in asked] == ["When was the tower completed?"]  # once: kept
        assert threading.get_ident() not in {thread for _, thread in asked}
        await index.close()
    finally:
        await db.dispose()


class GatedEmbedder(HashEmbedder):
    """A model that embeds passages only once its gate opens: vectors still being made, for as long as a test needs."""

    def __init__(self, name: str) -> None:
        super().__init__(name)
        self.gate = threading.Event()

    def passages(self, texts: Sequence[str]) -> np.ndarray:
        self.gate.wait(600)
        return super().passages(texts)


TURM = ("Der Turm wurde 1874 fertiggestellt. Sein Licht war weit über das Meer zu sehen.\n\n"
        "Der letzte Wärter ging 1961, als das Feuer automatisiert wurde.")


@asynccontextmanager
async def turm_index(tmp_path) -> AsyncIterator[tuple[ChunkStore, VectorIndex, GatedEmbedder]]:
    """TURM's chunks stored as the file `sha-de`, its vectors held back until the embedder's gate opens."""
    db = Database(f"sqlite+aiosqlite:///{tmp_path / 'v.db'}")
    await db.migrate()
    embedder = GatedEmbedder("model-a")
    store = ChunkStore(db)
    index = VectorIndex(store, embedder)
    try:
        items = [ContentItem(sequence_nr=1, name="text", ext="txt", content_type="text/plain", data=TURM)]
        await store.add("sha-de", chunk_rows(items))
        yield store, index, embedder
    finally:
        embedder.gate.set()
        await index.close()
        await db.dispose()


async def test_a_question_in_another_language_waits_for_the_files_vectors_and_one_in_their_language_does_not(
        tmp_path, monkeypatch):
    # Issue 50, item 12: right after an upload, a cross-language question was answered from keywords
    # (which it does not share with the file) while the vectors were being made, and missed.
    monkeypatch.setattr(vectors, "CROSS_LANGUAGE_WAIT", 600.0)
    async with turm_index(tmp_path) as (store, index, embedder):
        doc = DocumentText(name="turm.txt", ext="txt", mime="text/plain", size=len(TURM), items=[("text", TURM)],
                           file_id=1, sha256="sha-de")
        retriever = IndexRetriever(IndexSearch(store, index))
        english = asyncio.create_task(retriever.search("When was the lighthouse finished?", [doc], 3))
        german = await retriever.search("Wann wurde der Turm fertiggestellt?", [doc], 3)
        assert {p.method for p in german} == {"keyword"} and "1874" in german[0].text  # at once, from its words
        assert not english.done() and embedder.texts == []  # the English one waits for the vectors
        embedder.gate.set()
        found = await english
        assert found and {p.method for p in found} == {"hybrid"}


async def test_a_file_still_being_embedded_is_waited_for_once_in_all(tmp_path):
    # A round searches several times (a question's parts, its sources): the wait is the file's, not each search's.
    async with turm_index(tmp_path) as (store, index, embedder):
        assert await index.wait_ready(["sha-de"], 0.05) == set()  # the gate is shut: waited, then given up
        waited = index._waits["sha-de"]
        assert await index.wait_ready(["sha-de"], 600.0) == set()  # not waited again, whatever the timeout
        assert index._waits["sha-de"] == waited
        embedder.gate.set()
        await index.idle()
        assert await index.wait_ready(["sha-de"], 600.0) == {"sha-de"} and "sha-de" not in index._waits


class SteppedEmbedder(HashEmbedder):
    """A model that embeds one batch per step the test allows, recording which file each came from."""

    def __init__(self, name: str, texts: dict[str, str]) -> None:
        super().__init__(name)
        self.files = texts
        self.order: list[str] = []
        self.steps = threading.Semaphore(0)

    def passages(self, texts: Sequence[str]) -> np.ndarray:
        self.order += [name for name, text in self.files.items() if any(t.startswith(text) for t in texts)]
        self.steps.acquire(timeout=600)
        return super().passages(texts)


async def test_a_file_a_question_waits_for_is_embedded_before_the_files_queued_ahead_of_it(tmp_path):
    # Right after a book's round, a question in another language waited up to 30 s for its file's vectors behind
    # the book's (seen in bench/heldout.py on a loaded machine: answered from keywords; bench/waited_first.py).
    db = Database(f"sqlite+aiosqlite:///{tmp_path / 'v.db'}")
    await db.migrate()
    texts = {"book": "Chapter", **{f"note-{n}": f"Note number {n} of its own file." for n in range(3)}}
    embedder = SteppedEmbedder("model-a", texts)
    store = ChunkStore(db)
    index = VectorIndex(store, embedder)
    try:
        pages = [ContentItem(sequence_nr=n, name=f"page {n}", ext="txt", content_type="text/plain",
                             data=f"Chapter {n}. " + "A page of the book about nothing a question asks. " * 4)
                 for n in range(1, 3 * vectors.BATCH + 1)]
        await store.add("book", chunk_rows(pages))
        for name, text in list(texts.items())[1:]:
            await store.add(name, chunk_rows([ContentItem(sequence_nr=1, name="text", ext="txt",
                                                          content_type="text/plain", data=text)]))
        assert len(await store.texts("book")) > 2 * vectors.BATCH  # three batches at least
        index.schedule(list(texts))  # in upload order; the book's first batch is taken at once, held
        while not embedder.order:
            await asyncio.sleep(0.01)
        waited = asyncio.create_task(index.wait_ready(["note-2"], 600.0))
        await asyncio.sleep(0.05)
        for _ in range(2):  # the book's batch under way, then the waited-for file: no more of the book
            embedder.steps.release()
        assert await waited == {"note-2"}
        assert embedder.order == ["book", "note-2"]
        for _ in range(20):
            embedder.steps.release()
        await index.idle()
        # The book goes on where it stopped, before the files queued after it; each chunk embedded once.
        assert embedder.order == ["book", "note-2", "book", "book", "note-0", "note-1"], embedder.order
        assert len(await store.vector_ids("book", "model-a")) == len(await store.texts("book"))
    finally:
        for _ in range(20):
            embedder.steps.release()
        await index.close()
        await db.dispose()


async def test_a_question_that_waits_for_a_file_in_another_language_waits_for_the_other_files_searched_too(tmp_path):
    # A file in the question's own language without vectors has only its keyword vote in the fused ranking:
    # once the waited-for German file was embedded first, an English question lost its English answer to it.
    db = Database(f"sqlite+aiosqlite:///{tmp_path / 'v.db'}")
    await db.migrate()
    texts = {"notes-de": "Der Turm wurde 1874 fertiggestellt.", "report-en": "The tower was completed in 1874."}
    embedder = SteppedEmbedder("model-a", texts)
    store = ChunkStore(db)
    index = VectorIndex(store, embedder)
    try:
        for sha, text in texts.items():
            await store.add(sha, chunk_rows([ContentItem(sequence_nr=1, name="text", ext="txt",
                                                         content_type="text/plain", data=text)]))
        near = asyncio.create_task(index.nearest("When was the tower completed?", list(texts), ["notes-de"]))
        while not embedder.order:
            await asyncio.sleep(0.01)
        embedder.steps.release()  # one file's vectors made
        await asyncio.sleep(0.2)
        assert not near.done()  # still waiting for the other
        embedder.steps.release()
        found = await near
        assert found is not None and len(found) == 2 and sorted(embedder.order) == sorted(texts)
    finally:
        for _ in range(5):
            embedder.steps.release()
        await index.close()
        await db.dispose()
