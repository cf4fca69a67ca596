"""Idempotency keys: a claim per key, the first answer kept for retries."""

from __future__ import annotations

from typing import Any

from sqlalchemy import delete, select, update
from sqlalchemy.engine import Connection

from app.clock import aware, now
from app.store.database import Database
from app.store.tables import IdempotencyRow, table_of

CLAIM_SECONDS = 120.0


class KeyReusedError(Exception):
    """An Idempotency-Key already used for a different request."""


class IdempotencyStore:
    """Claims and answers of idempotency keys."""

    def __init__(self, db: Database) -> None:
        self.db = db

    async def claim(self, key: str, fingerprint: str = "") -> tuple[bool, dict[str, Any] | None]:
        """(True, None) when this caller may carry out the request for `key`; else (False, the first
        answer, or None while another process is still working on it). A claim left unanswered for
        CLAIM_SECONDS (its process died) passes to the next caller. KeyReusedError when the key was
        first used for a request with another `fingerprint`."""
        return await self.db.run_write(self._claim_tx, key, fingerprint)

    def _claim_tx(self, conn: Connection, key: str, fingerprint: str) -> tuple[bool, dict[str, Any] | None]:
        stamp = now()
        t = table_of(IdempotencyRow)
        claimed = conn.execute(
            self.db.insert(t).values(key=key, response={}, created_at=stamp, fingerprint=fingerprint)
            .on_conflict_do_nothing(index_elements=["key"]).returning(t.c.key)
        ).first()
        if claimed:
            return True, None
        response, created, first = conn.execute(
            select(t.c.response, t.c.created_at, t.c.fingerprint).where(t.c.key == key)).one()
        if first != fingerprint:
            raise KeyReusedError(key)
        if response:
            return False, response
        if (stamp - aware(created)).total_seconds() > CLAIM_SECONDS:
            conn.execute(update(t).where(t.c.key == key).values(created_at=stamp))
            return True, None
        return False, None

    async def answer(self, key: str, response: dict[str, Any] | None) -> None:
        """Store the answer for a claimed key, or (None) give the claim up so a retry can try again."""
        await self.db.run_write(self._answer_tx, key, response)

    def _answer_tx(self, conn: Connection, key: str, response: dict[str, Any] | None) -> None:
        t = table_of(IdempotencyRow)
        if response is None:
            row = conn.execute(select(t.c.response).where(t.c.key == key)).first()
            if row is not None and not row[0]:  # never drop an answer someone else stored
                conn.execute(delete(t).where(t.c.key == key))
        else:
            conn.execute(update(t).where(t.c.key == key).values(response=response,
                                                                        workflow_id=response.get("id")))
