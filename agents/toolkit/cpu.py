"""Long text work off the event loop, so one large document never stalls everyone's polls.

Counting the tokens of a book, chunking it or summarising it offline takes seconds of CPU. Run
on the event loop, that froze every request of every user for as long; in a worker thread the
loop keeps its turn (Python hands the GIL over every few milliseconds).
"""

from __future__ import annotations

import asyncio
import functools
from concurrent.futures import ThreadPoolExecutor
from typing import Any, Callable, Iterable, TypeVar

T = TypeVar("T")

# Text shorter than this is handled in place: the hop to a thread would cost more than the work.
LONG_TEXT = 20_000

# Its own threads: the loop's default pool is DBOS's, whose few threads record the rounds' steps.
_POOL = ThreadPoolExecutor(max_workers=2, thread_name_prefix="foreman-text")


async def off_loop(fn: Callable[..., T], /, *args: Any, **kwargs: Any) -> T:
    """`fn(*args, **kwargs)` in a worker thread."""
    return await asyncio.get_running_loop().run_in_executor(_POOL, functools.partial(fn, *args, **kwargs))


async def off_loop_if_long(size: int, fn: Callable[..., T], /, *args: Any, **kwargs: Any) -> T:
    """`fn(*args, **kwargs)` in a worker thread when it works on `size` >= LONG_TEXT characters, else here."""
    if size >= LONG_TEXT:
        return await off_loop(fn, *args, **kwargs)
    return fn(*args, **kwargs)


def text_size(items: Iterable[tuple[str, str]]) -> int:
    """Characters in a document's (name, text) items."""
    return sum(len(text) for _, text in items)
