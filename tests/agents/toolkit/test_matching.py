"""The blocks two texts share: difflib's, found by substring search (`agents.toolkit.matching`)."""

import difflib
import random

import pytest

from agents.toolkit.matching import longest_block, matching_blocks
from tests import corpus


def difflib_blocks(a: str, b: str, least: int) -> list[tuple[int, int, int]]:
    matcher = difflib.SequenceMatcher(None, a, b, autojunk=False)
    return [(i, j, k) for i, j, k in matcher.get_matching_blocks() if k and k >= least]


@pytest.fixture(scope="module")
def texts() -> list[str]:
    return [corpus.text("sample-french-1.txt", "cp1252"), corpus.text("ideas-page.html"),
            corpus.text("UDHR_first_article_all.txt")]


def test_the_blocks_are_difflibs_on_corpus_text(texts: list[str]) -> None:
    # Pieces of real text against each other, half of them with a piece of the other copied in (what the
    # plan's slip check looks for), and texts of two letters, where every block ties with many others.
    rnd = random.Random(7)
    for _ in range(600):
        s, t = rnd.choice(texts), rnd.choice(texts)
        i, j = rnd.randrange(len(s) - 600), rnd.randrange(len(t) - 600)  # each text is longer than that
        a, b = s[i:i + rnd.randrange(0, 400)].casefold(), t[j:j + rnd.randrange(0, 600)].casefold()
        if b and rnd.random() < 0.5:
            at = rnd.randrange(len(b))
            a = a[:len(a) // 2] + b[at:at + rnd.randrange(5, 60)] + a[len(a) // 2:]
        if rnd.random() < 0.2:
            a = "".join(rnd.choice("ab ") for _ in range(rnd.randrange(60)))
            b = "".join(rnd.choice("ab ") for _ in range(rnd.randrange(80)))
        for least in (1, 4):
            assert matching_blocks(a, b, least) == difflib_blocks(a, b, least), (a, b, least)


def test_the_longest_block_is_the_earliest_in_a_then_in_b() -> None:
    assert longest_block("xabcyabc", "abcabc", 0, 8, 0, 6) == (1, 0, 3)
    assert longest_block("xabcyabc", "abcabc", 4, 8, 1, 6) == (5, 3, 3)
    assert longest_block("abc", "xyz", 0, 3, 0, 3) == (0, 0, 0)
    assert matching_blocks("", "abc") == [] and matching_blocks("abc", "") == []
