"""The memory row of a round that ends (its turns shortened, their tokens counted: milliseconds of CPU)
is made in a worker thread, not on the event loop."""

from __future__ import annotations

import threading

from agents.knowledge import recall
from agents.round import PriorRound
from app.rounds.memory import Memory


async def test_the_ending_rounds_memory_row_is_made_off_the_loop(monkeypatch):
    threads: list[int] = []
    made = recall.remembered

    def recorded(*args):
        threads.append(threading.get_ident())
        return made(*args)

    monkeypatch.setattr(recall, "remembered", recorded)
    write = await Memory(repo=None).remembering(  # type: ignore[arg-type]
        "w", PriorRound(round=1, request="Summarise the report.", final="Done.", finished=True))
    assert callable(write)
    assert threads and threading.get_ident() not in threads
