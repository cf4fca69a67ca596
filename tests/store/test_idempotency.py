"""Idempotency-Key claims arbitrated by the database, so several processes start one round."""

from __future__ import annotations

from datetime import timedelta

from sqlalchemy import update

from app.clock import now
from app.store.database import Database
from app.store.repository.idempotency import CLAIM_SECONDS, IdempotencyStore
from app.store.tables import IdempotencyRow


async def test_one_claim_wins_and_the_others_get_its_answer(tmp_path, database_url):
    db = Database(database_url or f"sqlite+aiosqlite:///{tmp_path / 'claims.db'}")
    await db.migrate()
    first, second = IdempotencyStore(db), IdempotencyStore(db)  # as two processes would hold them
    try:
        assert await first.claim("1:1:abc") == (True, None)
        assert await second.claim("1:1:abc") == (False, None)  # still being started
        await first.answer("1:1:abc", {"id": "w1", "status": "running", "currentRound": 1})
        assert await second.claim("1:1:abc") == (False, {"id": "w1", "status": "running",
                                                                      "currentRound": 1})
        await second.answer("1:1:abc", None)  # giving up a claim never drops an answer
        assert (await second.claim("1:1:abc"))[1]["id"] == "w1"

        assert await first.claim("1:1:failed") == (True, None)
        await first.answer("1:1:failed", None)  # the start failed: a retry may try again
        assert await second.claim("1:1:failed") == (True, None)

        # A claim whose process died is taken over once it is older than CLAIM_SECONDS.
        async with db.writer.begin() as conn:
            await conn.execute(update(IdempotencyRow).where(IdempotencyRow.key == "1:1:failed")
                               .values(created_at=now() - timedelta(seconds=CLAIM_SECONDS + 1)))
        assert await first.claim("1:1:failed") == (True, None)
    finally:
        await db.dispose()
