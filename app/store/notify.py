"""Keeps the cursor caches of several processes on one PostgreSQL database in step.

Every append announces its workflow's last ids with NOTIFY in its own transaction (in the
statement that writes them, see `announcing`), so the
announcement is delivered exactly when the rows are visible. Each process LISTENs and
advances its cache. While the listening connection is down the cache is switched off (every
poll reads the database), so a missed announcement can never leave a poller waiting.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from typing import Any

from sqlalchemy import bindparam, func, literal_column, select
from sqlalchemy.engine import Connection

from app.store.cursors import CursorCache

log = logging.getLogger("foreman.notify")

CHANNEL = "foreman_cursors"
STOP_CHANNEL = "foreman_stop"  # a round was stopped: whichever process runs it cancels it at once
DRAFT_CHANNEL = "foreman_drafts"  # the text of drafts being written, in batches (app.rounds.drafts)
STEER_CHANNEL = "foreman_steers"  # a user's post joined a running round: whichever process runs it looks
_NOTIFY_MANY = "SELECT pg_notify($1, payload) FROM unnest($2::text[]) AS payload"
# Built once, bound per call: every append sends one, and building the statement cost more than sending it.
_NOTIFY = select(func.pg_notify(bindparam("channel"), bindparam("message")))


def _notify(conn: Connection, is_sqlite: bool, channel: str, message: str) -> None:
    # Sent in the writing transaction: PostgreSQL delivers it when the rows become visible.
    # SQLite serves one process, whose cache the writer advances itself.
    if not is_sqlite:
        conn.execute(_NOTIFY, {"channel": channel, "message": message})


def cursors_announcement(workflow_id: str, last_message_id: int, last_log_id: int) -> dict[str, str]:
    """The parameters of an `announcing` statement that tells the workflow's new last ids."""
    return {"channel": CHANNEL, "message": f"{workflow_id} {last_message_id} {last_log_id}"}


def announcing(statement: Any) -> Any:
    """An UPDATE and its announcement as one statement, one round trip (PostgreSQL); bound with the
    update's parameters and `cursors_announcement`'s. Nothing is announced when it updates no row."""
    return _NOTIFY.select_from(statement.returning(literal_column("1")).cte("updated"))


def announce_deleted(conn: Connection, is_sqlite: bool, workflow_id: str) -> None:
    """Tell every process the workflow is gone."""
    _notify(conn, is_sqlite, CHANNEL, f"{workflow_id} deleted")


def announce_stop(conn: Connection, is_sqlite: bool, workflow_id: str) -> None:
    """Tell every process the workflow's round was stopped (the one running it cancels it)."""
    _notify(conn, is_sqlite, STOP_CHANNEL, workflow_id)


def announce_steer(conn: Connection, is_sqlite: bool, workflow_id: str) -> None:
    """Tell every process a steering post joined the workflow's running round (app.rounds.steering)."""
    _notify(conn, is_sqlite, STEER_CHANNEL, workflow_id)


def apply(cache: CursorCache, message: str) -> None:
    """Advance (or, for a deleted workflow, drop) the cache entry a notification names."""
    parts = message.split()
    if len(parts) == 2 and parts[1] == "deleted":
        cache.drop(parts[0])
    elif len(parts) == 3 and parts[1].isdigit() and parts[2].isdigit():
        cache.advance(parts[0], int(parts[1]), int(parts[2]))


class Listener:
    """A LISTEN connection feeding the cache; reconnects, and keeps the cache off while down."""

    def __init__(self, database_url: str, cache: CursorCache, on_stop: Callable[[str], None],
                 application_name: str = "foreman", on_draft: Callable[[str], None] | None = None,
                 on_steer: Callable[[str], None] | None = None) -> None:
        self.dsn = database_url.replace("postgresql+asyncpg://", "postgresql://", 1)
        self.application_name = application_name[:63]
        self.cache = cache
        self.on_stop = on_stop
        self.on_draft = on_draft
        self.on_steer = on_steer
        self._conn: Any = None
        self._task: asyncio.Task[None] | None = None
        self.connected = asyncio.Event()

    def start(self) -> None:
        self.cache.enabled = False
        self._task = asyncio.create_task(self._run())

    async def stop(self) -> None:
        if self._task is not None:
            self._task.cancel()
            await asyncio.gather(self._task, return_exceptions=True)

    async def send_drafts(self, payloads: list[str]) -> None:
        """Announce draft text on the listening connection: one round trip, no table written. Lost
        while the connection is down (the copies elsewhere see the gap and wait for the message)."""
        conn = self._conn
        if conn is not None and not conn.is_closed():
            await conn.execute(_NOTIFY_MANY, DRAFT_CHANNEL, payloads)

    async def _run(self) -> None:
        import asyncpg

        while True:
            conn = None
            try:
                conn = await asyncpg.connect(self.dsn, server_settings={"application_name": self.application_name})
                lost = asyncio.Event()
                conn.add_termination_listener(lambda _c, lost=lost: lost.set())
                await conn.add_listener(CHANNEL, lambda _c, _pid, _ch, msg: apply(self.cache, msg))
                await conn.add_listener(STOP_CHANNEL, lambda _c, _pid, _ch, msg: self.on_stop(msg))
                if self.on_draft is not None:
                    on_draft = self.on_draft
                    await conn.add_listener(DRAFT_CHANNEL, lambda _c, _pid, _ch, msg, on_draft=on_draft: on_draft(msg))
                if self.on_steer is not None:
                    on_steer = self.on_steer
                    await conn.add_listener(STEER_CHANNEL, lambda _c, _pid, _ch, msg, on_steer=on_steer: on_steer(msg))
                self._conn = conn
                self.cache.clear()  # whatever happened while we were deaf is read afresh
                self.cache.enabled = True
                self.connected.set()
                await lost.wait()
            except asyncio.CancelledError:
                raise
            except Exception as exc:
                log.warning("Cursor notifications unavailable (%s); polls read the database meanwhile.", exc)
            finally:
                self._conn = None
                self.cache.enabled = False
                self.connected.clear()
                if conn is not None and not conn.is_closed():
                    await conn.close()
            await asyncio.sleep(1.0)
