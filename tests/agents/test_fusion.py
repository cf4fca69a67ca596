"""The fusion of keyword and vector rankings (`agents.knowledge.retrieval.hybrid`, `agents.knowledge.embeddings.fuse`):
a passage's keyword rank counts when the passage is in the question's language; in another language
its matches are shared names and numbers, and the vector ranking decides. The local ensemble of
embedders (`agents.knowledge.embeddings.Ensemble`) scores the weighted mean of its parts' cosines."""

from __future__ import annotations

import numpy as np
import pytest

from agents.knowledge.embeddings import (
    Ensemble,
    InWorkers,
    LocalUSE,
    available,
    fuse,
    local_embedder,
    local_embeddings,
    local_passages,
    word_embedder,
)
from agents.knowledge.retrieval import CROSS_KEYWORD_WEIGHT, Candidate, hybrid

GERMAN = "Wie viele Mitarbeiter hatte die Firma am Ende des Jahres?"


def ranked(keys: list[str], languages: dict[str, str] | None = None) -> list[tuple[float, Candidate]]:
    return [(1.0 / (i + 1), Candidate(key=k, terms=[], text=k, language=(languages or {}).get(k, "")))
            for i, k in enumerate(keys)]


def test_a_question_in_none_of_the_documents_languages_is_ranked_by_its_vectors():
    # A German question over English reports: the passage whose names matched is not put first.
    order = [c.key for _, c in hybrid(GERMAN, ranked(["names", "staff", "other"]),
                                      ranked(["staff", "other", "names"]), ["en"])]
    assert order == ["staff", "other", "names"]


def test_a_question_in_a_documents_language_counts_both_rankings():
    keyword, nearest = ranked(["names", "staff", "other"]), ranked(["staff", "other", "names"])
    order = [c.key for _, c in hybrid(GERMAN, keyword, nearest, ["en", "de"])]
    # staff: ranks 2 and 1; names: 1 and 3; other: 3 and 2 (RRF, k=60)
    assert order == ["staff", "names", "other"]


def test_fuse_sums_weighted_reciprocal_ranks_and_breaks_ties_by_the_keyword_rank():
    fused = fuse(["a", "b"], ["b", "a"])
    assert [key for _, key in fused] == ["a", "b"]  # equal sums: keyword order
    assert fused[0][0] == pytest.approx(1 / 61 + 1 / 62)
    fused = fuse(["a", "b"], ["b", "a"], weights=(0.5, 1.0))
    assert [key for _, key in fused] == ["b", "a"]
    assert fuse(["a", "b", "c"], ["c"], depth=1) == [(pytest.approx(1 / 61), "a"), (pytest.approx(1 / 61), "c")]


def test_in_a_group_of_languages_a_keyword_match_counts_only_in_a_passage_of_the_questions_language():
    # A German question over an English report and a German contract: the report's passage that
    # shares a name with the question does not outrank the vectors' choice, nor does the contract's
    # passage that both lists rank lower than the vectors rank the report's.
    languages = {"names": "en", "staff": "en", "other": "en", "vertrag": "de"}
    keyword = ranked(["names", "vertrag", "staff", "other"], languages)
    nearest = ranked(["staff", "other", "vertrag", "names"], languages)
    fused = hybrid(GERMAN, keyword, nearest, ["en", "de"])
    assert CROSS_KEYWORD_WEIGHT == 0
    # staff and other: their vector ranks twice (2/61, 2/62); vertrag: 1/62 + 1/63; names: 2/64
    assert [c.key for _, c in fused] == ["staff", "other", "vertrag", "names"]
    assert fused[0][0] == pytest.approx(2 / 61)
    assert fused[2][0] == pytest.approx(1 / 62 + 1 / 63)


def test_a_passage_of_the_questions_language_counts_both_rankings():
    languages = {"names": "de", "staff": "de", "other": "de"}
    order = [c.key for _, c in hybrid(GERMAN, ranked(["names", "staff", "other"], languages),
                                      ranked(["staff", "other", "names"], languages), ["de", "en"])]
    assert order == ["staff", "names", "other"]


def test_fuse_scales_each_keys_weights():
    fused = fuse(["a", "b"], ["b", "a"], key_weights=lambda key: (0.0, 2.0) if key == "a" else (1.0, 1.0))
    assert fused == [(pytest.approx(1 / 61 + 1 / 62), "b"), (pytest.approx(2 / 62), "a")]


class Fixed:
    def __init__(self, name: str, vectors: dict[str, list[float]]) -> None:
        self.name = name
        self.vectors = {t: np.asarray(v, dtype=np.float32) / np.linalg.norm(v) for t, v in vectors.items()}

    def passages(self, texts):
        return np.stack([self.vectors[t] for t in texts])

    def query(self, text):
        return self.vectors[text]


def test_an_ensembles_vectors_score_the_weighted_mean_of_its_parts_cosines():
    a = Fixed("a", {"q": [1, 0], "p": [0.6, 0.8]})
    b = Fixed("b", {"q": [0, 1, 0], "p": [0, 0, 1]})
    ensemble = Ensemble([(a, 3.0), (b, 1.0)])
    assert ensemble.name == "a*0.75+b*0.25"
    vector = ensemble.passages(["p"])[0]
    assert np.linalg.norm(vector) == pytest.approx(1.0)
    assert float(vector @ ensemble.query("q")) == pytest.approx(0.75 * 0.6 + 0.25 * 0.0)
    assert ensemble.weighted() == [(a, 0.75), (b, 0.25)]


def test_the_local_embeddings_are_the_ensemble_its_worker_function_and_its_word_model():
    local = local_embeddings()
    if not available():
        assert local is None  # the service then embeds nothing (keywords alone)
        return
    assert local is not None and isinstance(local.embedder, InWorkers) and local.embedder.name == local_embedder().name
    assert local.embedder._passages is local_passages  # each worker process embeds with its own copy of the models
    assert isinstance(local.words, LocalUSE) and local.words is word_embedder(local.embedder.embedder)
