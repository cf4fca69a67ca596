"""A file's vectors as the index stores them and as it searches them, and the scan that finds the nearest.

Stored, a unit vector is float16 (`to_blob`): half the bytes of float32, and the same top-5 on the
question sets (cosines differ by < 1e-3). Searched, a file's vectors are `Rows`: int8 codes with one
scale a row, which a query scans (a quarter of float32's bytes), and the stored float16 rows, which
rescore the best of the scan. `nearest` finds; ranking what it finds is the agents' (`agents.knowledge`).

The scan of 100,000 rows of the local ensemble's 896 dimensions (bench/embedding.py, one thread):
float32 by OpenBLAS 28.8 ms of CPU, float16 by SimSIMD 20.7 ms, int8 by SimSIMD 9.7 ms (NumKong, its
successor, the same: 9.0 ms, but a 44 MB wheel against 2 MB). An int8 cosine is off by up to 2e-3, so
the RESCORED x `depth` best of the scan are scored again from the float16 rows: the order returned is
the float16 one, the stored vectors' own. On the question sets' 1,613 real passages as one matrix, the
top 50 of all 154 questions is the float16 product's.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import simsimd

# The chunks a search finds by vector: as many as the ranking fuses from each list
# (`agents.knowledge.embeddings.DEPTH`, reciprocal rank fusion's depth).
NEAREST = 50
RESCORED = 4  # rows rescored exactly per row wanted (4 x NEAREST): the int8 scan only picks them


def to_blob(vector: np.ndarray) -> bytes:
    """A unit vector as stored: float16."""
    return np.asarray(vector, dtype=np.float16).tobytes()


@dataclass(frozen=True, slots=True)
class Rows:
    """Stored unit vectors as they are searched: int8 codes with one scale a row, and the float16 rows."""

    codes: np.ndarray  # int8 (n, d): round(row / scale)
    scales: np.ndarray  # float32 (n,): a row's largest magnitude / 127
    exact: np.ndarray  # float16 (n, d): the stored form

    @property
    def nbytes(self) -> int:
        return int(self.codes.nbytes + self.scales.nbytes + self.exact.nbytes)

    def __len__(self) -> int:
        return int(self.codes.shape[0])

    @classmethod
    def of(cls, matrix: np.ndarray) -> Rows:
        """Vectors (one a row) in their search form, rescored as float16, the form they are stored in."""
        exact = np.ascontiguousarray(matrix, dtype=np.float16)
        codes, scales = _codes(exact.astype(np.float32))
        return cls(codes=codes, scales=scales, exact=exact)


def from_blobs(blobs: Sequence[bytes]) -> Rows:
    """Stored vectors (`to_blob`) in their search form, one row per blob."""
    if not blobs:  # no rows: searched as none, whatever their width
        return Rows.of(np.zeros((0, 0), dtype=np.float16))
    return Rows.of(np.frombuffer(b"".join(blobs), dtype=np.float16).reshape(len(blobs), -1))


def _codes(matrix: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    peak = np.abs(matrix).max(axis=-1) if matrix.size else np.zeros(matrix.shape[:-1], np.float32)
    scales = np.where(peak > 0, peak / 127, 1.0).astype(np.float32)
    return np.rint(matrix / scales[..., None]).astype(np.int8), scales


def nearest(parts: Sequence[Rows], query: np.ndarray, depth: int = NEAREST) -> list[tuple[int, float]]:
    """(row, cosine) of the `depth` rows nearest the query among the parts' rows end to end, nearest
    first: an int8 scan of every row, then the RESCORED x `depth` best scored from their float16 rows."""
    parts = [p for p in parts if len(p)]
    if not parts:
        return []
    q_codes, _ = _codes(np.asarray(query, dtype=np.float32))
    scan = np.concatenate([np.asarray(simsimd.cdist(p.codes, q_codes[None, :], metric="dot", threads=1),
                                      dtype=np.float32).ravel() * p.scales for p in parts])
    picked = _highest(scan, RESCORED * depth)
    rows = np.array([i for i, _ in picked], dtype=np.int64)
    starts = np.cumsum([0, *(len(p) for p in parts)])
    part = np.searchsorted(starts, rows, side="right") - 1
    exact = np.stack([parts[k].exact[r - starts[k]] for k, r in zip(part.tolist(), rows.tolist(), strict=True)])
    scores = exact.astype(np.float32) @ np.asarray(query, dtype=np.float32)
    return [(int(rows[i]), score) for i, score in _highest(scores, depth)]


def _highest(scores: np.ndarray, depth: int) -> list[tuple[int, float]]:
    """(index, score) of the `depth` highest scores, highest first."""
    depth = min(depth, len(scores))
    top = np.argpartition(-scores, depth - 1)[:depth]
    top = top[np.argsort(-scores[top], kind="stable")]
    return [(int(i), float(scores[i])) for i in top]
