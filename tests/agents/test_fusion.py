"""The fusion of keyword and vector rankings (`agents.retrieval.hybrid`, `agents.embeddings.fuse`):
for a question in one of the documents' languages both rankings count; for a question in none of
them the keyword list's matches are shared names and numbers, and the vector ranking decides."""

from __future__ import annotations

import pytest

from agents.embeddings import fuse
from agents.retrieval import Candidate, hybrid

GERMAN = "Wie viele Mitarbeiter hatte die Firma am Ende des Jahres?"


def ranked(keys: list[str]) -> list[tuple[float, Candidate]]:
    return [(1.0 / (i + 1), Candidate(key=k, terms=[], text=k)) for i, k in enumerate(keys)]


def test_a_question_in_none_of_the_documents_languages_is_ranked_by_its_vectors():
    # A German question over English reports: the passage whose names matched is not put first.
    order = [c.key for _, c in hybrid(GERMAN, [], ranked(["names", "staff", "other"]),
                                      ranked(["staff", "other", "names"]), ["en"])]
    assert order == ["staff", "other", "names"]


def test_a_question_in_a_documents_language_counts_both_rankings():
    keyword, nearest = ranked(["names", "staff", "other"]), ranked(["staff", "other", "names"])
    order = [c.key for _, c in hybrid(GERMAN, [], keyword, nearest, ["en", "de"])]
    # staff: ranks 2 and 1; names: 1 and 3; other: 3 and 2 (RRF, k=60)
    assert order == ["staff", "names", "other"]


def test_fuse_sums_weighted_reciprocal_ranks_and_breaks_ties_by_the_keyword_rank():
    fused = fuse(["a", "b"], ["b", "a"])
    assert [key for _, key in fused] == ["a", "b"]  # equal sums: keyword order
    assert fused[0][0] == pytest.approx(1 / 61 + 1 / 62)
    fused = fuse(["a", "b"], ["b", "a"], weights=(0.5, 1.0))
    assert [key for _, key in fused] == ["b", "a"]
    assert fuse(["a", "b", "c"], ["c"], depth=1) == [(pytest.approx(1 / 61), "a"), (pytest.approx(1 / 61), "c")]
