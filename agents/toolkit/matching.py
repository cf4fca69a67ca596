"""The blocks two texts share, as `difflib.SequenceMatcher` finds them, found by substring search. Pure.

`difflib.SequenceMatcher(None, a, b, autojunk=False).get_matching_blocks()` finds the longest block that
`a` and `b` share (the earliest in `a`, then in `b`), then recurses on both sides of it. Its search walks
every position of `b` holding each character of `a`, in Python: the plan's slip check
(`agents.planning.slips`) matched a task's instructions of 53 characters against the catalogue line of
every document a round lists, up to 49 of them late in a conversation, and took 19 ms of a round's
planning there (3 ms early on). Here the same block is found by extending, from each position of `a`,
the longest piece that `str.find` still finds in `b` (a piece one shorter than the one found from the
position before is found already), and a side whose longest block is shorter than `least` is not
searched further: what it holds is shorter still. The blocks of at least `least` characters are
difflib's (`tests/agents/toolkit/test_matching.py` compares them on corpus text).
"""

from __future__ import annotations


def longest_block(a: str, b: str, alo: int, ahi: int, blo: int, bhi: int) -> tuple[int, int, int]:
    """(i, j, k): the longest block `a[i:i+k] == b[j:j+k]` within `a[alo:ahi]` and `b[blo:bhi]`, the earliest
    in `a` among the longest, then the earliest in `b` (difflib's `find_longest_match` without junk);
    (alo, blo, 0) when they share nothing."""
    best_i, best_k, k, find = alo, 0, 0, b.find
    for i in range(alo, ahi):
        if k:
            k -= 1  # a[i-1:i-1+k] was found: its tail a[i:i-1+k] is there too
        while i + k < ahi and find(a[i:i + k + 1], blo, bhi) >= 0:
            k += 1
        if k > best_k:
            best_i, best_k = i, k
    if not best_k:
        return alo, blo, 0
    return best_i, b.find(a[best_i:best_i + best_k], blo, bhi), best_k


def matching_blocks(a: str, b: str, least: int = 1) -> list[tuple[int, int, int]]:
    """The blocks (i, j, k) of `difflib.SequenceMatcher(None, a, b, autojunk=False).get_matching_blocks()`
    at least `least` characters long, in order (without its closing empty block)."""
    queue, found = [(0, len(a), 0, len(b))], []
    while queue:
        alo, ahi, blo, bhi = queue.pop()
        i, j, k = block = longest_block(a, b, alo, ahi, blo, bhi)
        if k < max(least, 1):
            continue
        found.append(block)
        if alo < i and blo < j:
            queue.append((alo, i, blo, j))
        if i + k < ahi and j + k < bhi:
            queue.append((i + k, ahi, j + k, bhi))
    found.sort()
    return found
