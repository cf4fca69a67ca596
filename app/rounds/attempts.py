"""A round's attempts: one that ends in an error inside the round goes on where it stopped, after a pause.

Every step of a round is keyed in the journal, so running the round again writes nothing twice and
runs only what did not finish. ROUND_MAX_ATTEMPTS counts the attempts that failed by an error inside
the round (a bug, a write that failed); the database being unreachable is not counted (the round
waits for it, within MAX_ROUND_SECONDS), nor is a crash or a takeover (DBOS resumes the round then).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from typing import Any

from app.rounds.handle import installed
from app.rounds.journal import reason_of
from app.store.connections import unavailable
from app.store.ownership import ClaimLostError

log = logging.getLogger("foreman.rounds")

RETRY_PAUSE_SECONDS = 1.0  # before the second attempt; doubled each time, up to RETRY_PAUSE_MAX_SECONDS
RETRY_PAUSE_MAX_SECONDS = 15.0


async def run_attempts(engine: Any, workflow_id: str, round_no: int, run: Callable[[], Awaitable[None]]) -> None:
    """`run()` until it returns; the error of the last allowed attempt is raised. Nothing is tried again
    once this process is leaving: the next one resumes its rounds."""
    limit = engine.rt.settings.round_max_attempts
    failed, pause = 0, RETRY_PAUSE_SECONDS
    while True:
        try:
            return await run()
        except (TimeoutError, ClaimLostError):
            raise
        except Exception as exc:
            outage = unavailable(exc)
            failed += not outage
            if failed >= limit or engine.drain.draining or installed() is not engine:
                raise
            what = "the database is unreachable" if outage else f"attempt {failed} failed ({reason_of(exc, 'the round')})"
            log.warning("Round %s of workflow %s: %s; going on where it stopped in %g s%s.", round_no, workflow_id,
                        what, pause, "" if outage else f" (attempt {failed + 1} of {limit})")
        await asyncio.sleep(pause)
        pause = min(pause * 2, RETRY_PAUSE_MAX_SECONDS)
