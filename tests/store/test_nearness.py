"""The index's search form of stored vectors (`app.store.nearness`): the int8 scan returns the rows the
exact product of the stored float16 vectors ranks first, over several files end to end; the ranking of
passages embedded in memory (`agents.knowledge.embeddings.vector_order`) is that exact product."""

from __future__ import annotations

import numpy as np
import pytest

from agents.knowledge.embeddings import scores_order, vector_order
from app.store.nearness import Rows, from_blobs, nearest, to_blob


def unit_rows() -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(3)
    rows = rng.standard_normal((3000, 96)).astype(np.float32)
    rows /= np.linalg.norm(rows, axis=1, keepdims=True)
    question = rows[17] + 0.5 * rows[2500]
    return rows, question / np.linalg.norm(question)


def test_the_int8_scan_returns_the_nearest_rows_of_the_exact_product_over_several_files():
    rows, question = unit_rows()
    stored = rows.astype(np.float16)  # as the index keeps them, one file after another
    found = nearest([Rows.of(stored[:1000]), Rows.of(stored[1000:1001]), Rows.of(stored[1001:])], question)
    exact = scores_order(stored.astype(np.float32) @ question)
    assert [i for i, _ in found] == [i for i, _ in exact]
    assert [s for _, s in found] == pytest.approx([s for _, s in exact], abs=1e-6)
    assert found[0][0] == 17
    assert nearest([], question) == [] and nearest([Rows.of(stored[:0])], question) == []


def test_stored_vectors_are_searched_as_they_were_stored():
    rows, question = unit_rows()
    searched = from_blobs([to_blob(v) for v in rows[:100]])
    assert len(searched) == 100 and searched.exact.dtype == np.float16
    assert [i for i, _ in nearest([searched], question, depth=5)] == [i for i, _ in vector_order(question, rows[:100], 5)]
    assert len(from_blobs([])) == 0 and nearest([from_blobs([])], question) == []
