"""The chunk vectors of the search index: built in the background, read into memory once per file.

A file's chunks are embedded once per content hash, after its full-text rows are stored, by
`workers` background threads of the index's own, each calling the embedder's `passages` (an endpoint's
waits on the network; the local models' run in worker processes of their own, niced below the service,
`agents.knowledge.embeddings.InWorkers`). A round never waits for them: `IndexRetriever` ranks a
file by BM25 alone until its vectors exist, and says so in the answer's `retrieval` metadata.
Vectors carry the model that made them; a file whose vectors were made by another model (the
operator changed it) is embedded again the first time it is searched, never mixed.

Read back, a file's vectors are kept in memory in their search form (`app.store.nearness.Rows`:
int8 codes scanned, float16 rows rescoring the best; they never change once complete), so a query
costs one int8 scan over the files in reach, not a table scan. The index's work beside the loop (a
file's matrix read back, a question embedded, the scan) runs in threads of its own (`SEARCH_THREADS`),
not behind the agents' long text work.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import itertools
import logging
from collections import OrderedDict
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any, TypeVar

import numpy as np

from agents.knowledge.embeddings import Embedder
from app.store.nearness import Rows, from_blobs, nearest, to_blob
from app.store.repository.chunks import ChunkStore

log = logging.getLogger(__name__)
T = TypeVar("T")
BATCH = 16  # chunks per embedding call: short enough that a shutdown or a delete is not held up
# Vectors kept in memory at most, in bytes: 600 MB, about 220,000 rows of the local ensemble's 896
# dimensions in their search form (2,692 bytes a row: int8, its scale, float16), 520,000 of e5's 384.
CACHED_BYTES = 600 * 10**6
CACHED_QUESTIONS = 256  # question vectors kept: a round's agents search again with the same words


# A question in another language than a file's is matched by that file's vectors, not its words (issue 50,
# item 12: asked right after the upload, 5 of 12 cross-language questions were found from keywords while
# the vectors were being made, 7 of 12 once they were): such a question waits for them, this long at most
# per file. A question in the files' own language answers at once, from keywords until the vectors exist.
CROSS_LANGUAGE_WAIT = 30.0
WAITED, LATER = 0, 1  # a file a question waits for is embedded first, the rest in the order they came
# Threads for the index's work off the loop: a question embedded (e5 in C, the GIL released) beside a scan.
SEARCH_THREADS = 2


def _matrix(rows: Sequence[tuple[int, bytes]]) -> tuple[np.ndarray, Rows]:
    return np.array([i for i, _ in rows], dtype=np.int64), from_blobs([b for _, b in rows])


def _nearness(matrices: Sequence[tuple[np.ndarray, Rows]], question: np.ndarray) -> tuple[np.ndarray, list[tuple[int, float]]]:
    """The chunk ids of these files and (position, cosine) of the nearest, nearest first."""
    ids = np.concatenate([m[0] for m in matrices])
    return ids, nearest([m[1] for m in matrices], question)


class VectorIndex:
    """Embeds files' chunks in the background and answers which files have vectors, and their matrices."""

    def __init__(self, store: ChunkStore, embedder: Embedder, workers: int = 1, words: Embedder | None = None) -> None:
        self.store = store
        self.embedder = embedder
        self.words = words  # the model that tells single words apart (the local ensemble's USE); None: none
        self.workers = workers
        self._pool: ThreadPoolExecutor | None = None  # the background embedding's threads
        self._queue: asyncio.PriorityQueue[tuple[int, int, str]] | None = None  # (WAITED or LATER, order, sha)
        self._queued: set[str] = set()  # scheduled and not done: in the queue or being embedded
        self._pending: dict[str, int] = {}  # in the queue, not taken yet: its best priority
        self._order = itertools.count()
        self._tasks: list[asyncio.Task[None]] = []
        self._ready: set[str] = set()  # files whose vectors by this model are complete
        self._matrices: OrderedDict[str, tuple[np.ndarray, Rows]] = OrderedDict()
        self._bytes = 0
        self._questions: OrderedDict[str, np.ndarray] = OrderedDict()
        self._made: asyncio.Event | None = None  # set (and replaced) each time a file's vectors are complete
        self._waits: dict[str, float] = {}  # until when a file still being embedded is waited for (loop time)
        self._loading: asyncio.Future[np.ndarray] | None = None  # the question models' load under way
        self._threads: ThreadPoolExecutor | None = None  # SEARCH_THREADS, started on first use

    async def _off_loop(self, fn: Callable[..., T], /, *args: Any, **kwargs: Any) -> T:
        """`fn(*args, **kwargs)` in one of the index's own threads."""
        if self._threads is None:
            self._threads = ThreadPoolExecutor(SEARCH_THREADS, thread_name_prefix="foreman-vectors")
        return await asyncio.get_running_loop().run_in_executor(self._threads, functools.partial(fn, *args, **kwargs))

    @property
    def model(self) -> str:
        return self.embedder.name

    def schedule(self, shas: Sequence[str], priority: int = LATER) -> None:
        """Embed these files' chunks in the background (those not done or queued already); a file a
        question waits for (`WAITED`) is taken before the rest, moved ahead if it was queued already."""
        if self._queue is None:
            self._queue = asyncio.PriorityQueue()
            self._pool = ThreadPoolExecutor(max_workers=self.workers, thread_name_prefix="foreman-embed")
            self._tasks = [asyncio.create_task(self._work(), name=f"embed-{n}") for n in range(self.workers)]
        for sha in shas:
            fresh = sha and sha not in self._queued and sha not in self._ready
            if fresh or priority < self._pending.get(sha, priority):  # an entry it had stays, skipped when taken
                self._queued.add(sha)
                self._pending[sha] = priority
                self._queue.put_nowait((priority, next(self._order), sha))

    async def ready(self, shas: Sequence[str], priority: int = LATER) -> set[str]:
        """The files among `shas` whose vectors exist; the others are scheduled (at `priority`)."""
        unknown = [s for s in shas if s not in self._ready]
        if unknown:
            self._ready |= await self.store.embedded(unknown, self.model)
        missing = [s for s in shas if s not in self._ready]
        if missing:
            self.schedule(missing, priority)
        return {s for s in shas if s in self._ready}

    async def wait_ready(self, shas: Sequence[str], timeout: float) -> set[str]:
        """`ready`, after waiting up to `timeout` seconds for the files among `shas` still being embedded
        (scheduled first when they are not): what a question that needs them can wait for. A file is
        waited for `timeout` in all, from the first wait: a round's later searches (a question's parts,
        its sources) do not wait for it again."""
        loop = asyncio.get_running_loop()
        ready = await self.ready(shas, WAITED)
        for sha in shas:
            if sha not in ready:
                self._waits.setdefault(sha, loop.time() + timeout)
        while (left := max((self._waits.get(s, 0.0) for s in shas if s not in ready), default=0.0) - loop.time()) > 0:
            if self._made is None:
                self._made = asyncio.Event()
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._made.wait(), left)
            ready = await self.ready(shas)
        return ready

    async def matrix(self, sha: str) -> tuple[np.ndarray, Rows]:
        """(chunk ids, vectors in their search form) of a file whose vectors are ready."""
        found = self._matrices.get(sha)
        if found is None:
            rows = await self.store.vectors(sha, self.model)
            found = await self._off_loop(_matrix, rows)  # a book's 1,000 rows: milliseconds of copying
            if sha in self._matrices:  # read meanwhile by another search
                return self._matrices[sha]
            self._matrices[sha] = found
            self._bytes += found[1].nbytes
            while self._bytes > CACHED_BYTES and len(self._matrices) > 1:
                _, (_, evicted) = self._matrices.popitem(last=False)
                self._bytes -= evicted.nbytes
        else:
            self._matrices.move_to_end(sha)
        return found

    async def question(self, text: str) -> np.ndarray:
        """The question's vector, embedded in a worker thread (the last CACHED_QUESTIONS kept)."""
        found = self._questions.get(text)
        if found is None:
            found = self._questions[text] = await self._off_loop(self.embedder.query, text)
            while len(self._questions) > CACHED_QUESTIONS:
                self._questions.popitem(last=False)
        else:
            self._questions.move_to_end(text)
        return found

    async def likeness(self, texts: Sequence[str], others: Sequence[str]) -> list[list[float]] | None:
        """The cosine of each of `texts` with each of `others` (short texts: a question's words, a table's
        headings), by the model that tells words apart (`words`); None without one."""
        words = self.words
        if words is None or not texts or not others:
            return None
        vectors = await self._off_loop(words.passages, [*texts, *others])
        cosines = vectors[:len(texts)] @ vectors[len(texts):].T
        return [[float(c) for c in row] for row in cosines]

    async def nearest(self, query: str, shas: Sequence[str], wait_for: Sequence[str] = ()) -> list[tuple[int, float]] | None:
        """(chunk id, cosine) of the chunks nearest the question among the files whose vectors
        exist, or None when none has vectors yet (they are being made: BM25 alone answers meanwhile).
        When a file of `wait_for` is still being embedded, all of `shas` are waited for, up to CROSS_LANGUAGE_WAIT."""
        ready = await self.ready(shas)
        if any(sha not in ready for sha in wait_for):
            # Then the other files searched are waited for too: a passage of a file without vectors has only its
            # keyword vote in the fused ranking, and a file in the question's own language would lose to the
            # other language's (a tuning case lost its answer once the waited-for file was embedded first).
            log.info("waiting up to %.0f s for the vectors of %d file(s), %d in another language than the question",
                     CROSS_LANGUAGE_WAIT, sum(sha not in ready for sha in shas),
                     sum(sha not in ready for sha in wait_for))
            await self.wait_ready(shas, CROSS_LANGUAGE_WAIT)
            ready = await self.ready(shas)
        if not ready or not await self._query_model(wait=bool(wait_for)):
            return None
        matrices = [await self.matrix(sha) for sha in shas if sha in ready]
        try:
            question = await self.question(query)
        except Exception:  # noqa: BLE001 - an embeddings endpoint that fails leaves BM25 to answer
            log.warning("the question could not be embedded; BM25 alone answers", exc_info=True)
            return None
        # A hundred books are 100,000 rows: the int8 scan and the sort are 15 ms of CPU, off the loop.
        ids, order = await self._off_loop(_nearness, matrices, question)
        return [(int(ids[i]), score) for i, score in order]

    async def _query_model(self, wait: bool) -> bool:
        """Whether questions can be embedded now. The local models load on first use, in this process, in
        seconds, tens of them on a loaded machine (USE's first pass: 16 s at load 11): loaded in the
        background, once, while searches answer from keywords, as before a file's vectors exist (issue
        51, item 11: a resumed round's first search waited for them). `wait`: the search waits for
        vectors (a question in another language than a file's), and so for the models."""
        is_ready = getattr(self.embedder, "query_ready", None)
        if is_ready is None or is_ready():
            return True
        if self._loading is None:
            began = asyncio.get_running_loop().time()
            self._loading = asyncio.ensure_future(self._off_loop(self.embedder.query, "warm-up"))

            def loaded(done: asyncio.Future[np.ndarray]) -> None:
                if done.cancelled() or done.exception() is not None:
                    self._loading = None  # tried again at the next search
                    if not done.cancelled():
                        log.warning("The embedding models could not be loaded for questions (%s); BM25 answers.",
                                    done.exception())
                    return
                log.info("The embedding models were loaded for questions in %.2f s (searches used keywords "
                         "meanwhile).", asyncio.get_running_loop().time() - began)

            self._loading.add_done_callback(loaded)
        if not wait:
            return False
        try:
            await asyncio.shield(self._loading)
        except Exception:  # noqa: BLE001 - models that cannot load leave BM25 to answer (logged above)
            return False
        return True

    def forget(self, shas: Sequence[str]) -> None:
        """Drop what is known of files whose chunks were removed."""
        for sha in shas:
            self._ready.discard(sha)
            self._waits.pop(sha, None)
            if (gone := self._matrices.pop(sha, None)) is not None:
                self._bytes -= gone[1].nbytes

    async def embed_now(self, sha: str) -> bool:
        """Embed one file's chunks (what a worker does per file): those without a vector by this model,
        stored a batch at a time, so a start killed meanwhile leaves what it made to the next one (issue
        51, item 11: under kills seconds apart a book's vectors, made whole or not at all, were never made).
        False when it stopped between batches for a file a question waits for (the rest is made later)."""
        done = await self.store.vector_ids(sha, self.model)
        chunks = [(i, t) for i, t in await self.store.texts(sha) if i not in done]
        loop = asyncio.get_running_loop()
        passages = self.embedder.passages
        for start in range(0, len(chunks), BATCH):
            if start and WAITED in self._pending.values() and sha not in self._waits:
                return False  # a book's batches do not hold up the file a question is waiting for
            batch = chunks[start:start + BATCH]
            vectors = await loop.run_in_executor(self._pool, passages, [t for _, t in batch])
            rows = [(i, to_blob(v)) for (i, _), v in zip(batch, vectors, strict=True)]
            await self.store.add_vectors(sha, self.model, rows)
        self._ready.add(sha)
        self._matrices.pop(sha, None)
        self._waits.pop(sha, None)
        if self._made is not None:  # wakes every `wait_ready`; the next ones wait on a new event
            self._made.set()
            self._made = None
        return True

    async def _work(self) -> None:
        assert self._queue is not None
        while True:
            priority, _, sha = await self._queue.get()
            if self._pending.get(sha) != priority:
                continue  # taken before at a better priority: this entry is stale
            del self._pending[sha]
            try:
                finished = await self.embed_now(sha)
            except asyncio.CancelledError:
                self._queued.discard(sha)
                raise
            except Exception:  # noqa: BLE001 - vectors are an aid: the file stays searchable by BM25
                log.exception("the vectors of file %s could not be made", sha[:12])
                finished = True
            if finished:
                self._queued.discard(sha)
            else:  # put back ahead of the files that came after it
                self._pending[sha] = LATER
                self._queue.put_nowait((LATER, -next(self._order), sha))

    async def idle(self) -> None:
        """Wait until every scheduled file is embedded (tests, benchmarks)."""
        while self._queued:
            await asyncio.sleep(0.05)

    async def close(self) -> None:
        if self._loading is not None:
            self._loading.cancel()
        for task in self._tasks:
            task.cancel()
        for task in self._tasks:
            with contextlib.suppress(asyncio.CancelledError):
                await task
        self._tasks = []
        self._queue = None
        self._queued.clear()
        self._pending.clear()
        if self._pool is not None:  # a batch under way is not waited for (an endpoint's answer, a worker's)
            pool, self._pool = self._pool, None
            pool.shutdown(wait=False, cancel_futures=True)
        if (close := getattr(self.embedder, "close", None)) is not None:
            # In the index's threads: the local models' workers are waited for (`InWorkers.close`), and the
            # loop's default pool is DBOS's, closed before this.
            await self._off_loop(close)
        if self._threads is not None:  # a question's embedding under way (a model's load: seconds) is not waited for
            threads, self._threads = self._threads, None
            threads.shutdown(wait=False, cancel_futures=True)
