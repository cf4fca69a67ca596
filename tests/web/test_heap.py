"""The served process's heap after start-up: its garbage freed, the rest out of the collector's full passes."""

from __future__ import annotations

import gc
import weakref

from app.web.server import settle_heap


class _Node:
    def __init__(self) -> None:
        self.me = self  # a cycle: only the collector frees it


def test_start_up_garbage_is_freed_and_what_lives_is_left_out_of_full_collections():
    thrown = _Node()
    gone = weakref.ref(thrown)
    del thrown
    kept = _Node()
    try:
        settle_heap()
        assert gone() is None, "start-up's garbage was frozen instead of freed"
        gc.collect()  # a full pass, as the collector makes while rounds run
        assert not any(o is kept for o in gc.get_objects(generation=2)), "a full pass still walks start-up's objects"
        assert kept.me is kept
    finally:
        gc.unfreeze()  # the rest of the test session collects as usual
