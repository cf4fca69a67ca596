"""The fusion of keyword and vector rankings: a passage's keyword rank counts when it is in the
question's language; across languages its keyword matches are shared names and numbers, and the
vector ranking decides, whatever other languages the documents are in."""

from __future__ import annotations

import pytest

from agents.embeddings import fuse
from agents.retrieval import Candidate, hybrid

GERMAN = "Wie viele Mitarbeiter hatte die Firma am Ende des Jahres?"


def ranked(keys: list[str], language: dict[str, str]) -> list[tuple[float, Candidate]]:
    return [(1.0 / (i + 1), Candidate(key=k, terms=[], text=k, language=language[k])) for i, k in enumerate(keys)]


def test_among_documents_in_several_languages_the_vectors_rank_the_passages_in_another_language():
    # A German question over an English report, beside a German document: the report's keyword
    # ranks come from names and numbers it shares with the question, not from what was asked.
    language = {"report-names": "en", "report-staff": "en", "lease": "de"}
    keyword = ranked(["report-names", "lease", "report-staff"], language)
    nearest = ranked(["report-staff", "lease", "report-names"], language)
    order = [c.key for _, c in hybrid(GERMAN, [], keyword, nearest, ["en", "de"])]
    # Of the report's passages the one nearest the question comes first, not the one whose names
    # matched (both ranks counted, they tie, and the keyword rank put it first); the German lease
    # keeps both its ranks.
    assert order == ["lease", "report-staff", "report-names"]


def test_in_the_questions_language_both_rankings_count():
    language = {"a": "de", "b": "de", "c": "de"}
    keyword = ranked(["a", "b"], language)
    order = [c.key for _, c in hybrid(GERMAN, [], keyword, ranked(["b", "a"], language), ["de", "en"])]
    assert order == ["a", "b"]  # equal sums: the keyword rank breaks the tie
    keyword = ranked(["a", "b", "c"], language)
    nearest = ranked(["b", "c", "a"], language)
    assert [c.key for _, c in hybrid(GERMAN, [], keyword, nearest, ["de"])][0] == "b"


def test_a_passage_of_unknown_language_weighs_by_the_documents_languages():
    language = {"x": "", "y": ""}
    keyword, nearest = ranked(["x", "y"], language), ranked(["y", "x"], language)
    assert [c.key for _, c in hybrid(GERMAN, [], keyword, nearest, ["en"])] == ["y", "x"]  # vectors decide
    assert [c.key for _, c in hybrid(GERMAN, [], keyword, nearest, ["de"])] == ["x", "y"]  # a tie, keyword first


def test_fuse_weighs_each_keyword_entry_and_refuses_weights_that_do_not_match():
    fused = fuse(["a", "b"], ["b", "a"], keyword_weights=[1.0, 0.0])
    assert [key for _, key in fused] == ["a", "b"]
    assert fused[0][0] == pytest.approx(1 / 61 + 1 / 62)
    assert fused[1][0] == pytest.approx(1 / 61)
    with pytest.raises(ValueError, match="2 keyword weights for 3 keys"):
        fuse(["a", "b", "c"], [], keyword_weights=[1.0, 1.0])
