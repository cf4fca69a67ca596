"""A flow round's node states read from a `seq` on (`FlowStore.node_states`), as AG-UI's run state follows
them: only the runs settled from there, each with its branch taken out of the record in SQL; runs settled
at once may share a `seq`, so a follower reads again from the last one it saw (and skips the paths it has)."""

from __future__ import annotations

import contextlib
import uuid

from app.clock import now
from app.store.database import Database
from app.store.records import NewLog, Owner
from app.store.repository import Repository
from app.store.tables import NodeRunRow, table_of


def _run(path: str, seq: int, **record: object) -> dict:
    return {"path": path, "node_id": path, "type": "human" if record.get("branch") else "template",
            "status": "succeeded", "attempts": 1, "started_at": now(), "finished_at": now(), "seq": seq,
            "record": {"output": "x" * 1000, **record}}


@contextlib.asynccontextmanager
async def _round(tmp_path, database_url: str, name: str):
    """A migrated database (the test's PostgreSQL one, else SQLite in tmp_path) with one round started."""
    db = Database(database_url or f"sqlite+aiosqlite:///{tmp_path / (name + '.db')}")
    await db.migrate()
    repo = Repository(db)
    wid = str(uuid.uuid4())
    try:
        await repo.workflows.start_round(Owner(1, 1), wid, name, True, "go", [], {}, NewLog(f"{wid}:start", "go"))
        yield db, repo, wid
    finally:
        await db.dispose()


async def test_node_states_from_a_seq_on_with_the_branch_and_no_record(tmp_path, database_url):
    async with _round(tmp_path, database_url, "nodes") as (db, repo, wid):
        await repo.flows.settle(wid, 1, [_run("start", 0)])  # settle numbers them: seq 1
        async with db.writer.begin() as conn:  # two runs written at once, each taking the highest seq + 1
            await conn.execute(table_of(NodeRunRow).insert(), [
                {**_run("a", 2, branch="yes"), "workflow_id": wid, "round": 1},
                {**_run("b", 2), "workflow_id": wid, "round": 1}])
        states = await repo.flows.node_states(wid, 1)
        assert [(s.seq, s.path, s.status, s.attempts, s.branch) for s in states] == [
            (1, "start", "succeeded", 1, None), (2, "a", "succeeded", 1, "yes"), (2, "b", "succeeded", 1, None)]
        assert not hasattr(states[0], "record")
        assert [s.path for s in await repo.flows.node_states(wid, 1, since=2)] == ["a", "b"]  # from the last seen
        assert await repo.flows.node_states(wid, 1, since=3) == []
        assert await repo.flows.node_states(wid, 2) == []  # another round's: none


async def test_a_map_item_run_elsewhere_reads_the_top_level_runs_and_its_own_not_its_siblings(tmp_path, database_url):
    async with _round(tmp_path, database_url, "items") as (db, repo, wid):
        await repo.flows.settle(wid, 1, [_run(p, 0) for p in ("start", "m[0]", "m[1]", "L#1", "f/a", "pick")])
        assert [r.path for r in await repo.flows.node_runs(wid, 1, item="m[1]")] == ["start", "m[1]", "pick"]
        assert len(await repo.flows.node_runs(wid, 1)) == 6
