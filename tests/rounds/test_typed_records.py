"""A round's tasks and its memory cross as typed records, not rebuilt from the wire's loose metadata: each
task's journal write keeps its outcome as a `TaskRecord` (never shown to clients), a resumed round decodes
its finished tasks from them, a round that ends stores its memory from the typed values it holds, and a
database written before the records (loose keys only) is still read the same. Offline model, a real
database (SQLite, and PostgreSQL when configured), the production round engine."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import msgspec
import sqlalchemy as sa

from agents.knowledge import recall
from agents.round import Start
from app.rounds import memory as round_memory
from app.rounds.hooks import Hooks
from app.rounds.records import TaskRecord, finished_tasks, plan_of, record_of, task_meta
from app.rounds.steps import Planned
from app.rounds.supervisor import Engine
from app.services.files import FileService
from app.services.workflows import WorkflowService
from app.store.records import TASK_RECORD
from app.store.tables import DocumentRow, MessageRow, RoundMemoryRow, table_of
from tests.corpus import path as corpus_path
from tests.rounds.engines import OWNER, engine_on, run_round


def message(meta: dict[str, Any], content: str = "text", tokens: int = 0, message_id: int = 1) -> MessageRow:
    return MessageRow(id=message_id, workflow_id="w", round=1, sequence_no=message_id, key=f"w:1:task:{message_id}",
                      role="assistant", status="step", content=content, meta=meta, tokens_used=tokens,
                      started_at=datetime.now(UTC))


def test_a_resumed_rounds_finished_tasks_are_decoded_from_their_records():
    delivered = message(task_meta(TaskRecord("t1")), content="The summary.", tokens=42, message_id=7)
    failed = message(task_meta(TaskRecord("t2", ok=False, error="the model is down")), content="Task 2 failed",
                     message_id=8)
    skipped = message(task_meta(TaskRecord("t3", ok=False, skipped=True, error="t2 failed")), message_id=9)
    # The record is what is read: loose keys that say otherwise are the wire's, not the outcome.
    record_only = message({TASK_RECORD: msgspec.to_builtins(TaskRecord("t4", undelivered=True)), "failed": True},
                          content="I could not translate it.", message_id=10)
    doc = DocumentRow(message_id=7, file_id=3, position=0)
    outcomes, ids = finished_tasks([(delivered, [doc]), (failed, []), (skipped, []), (record_only, [])])
    assert sorted(outcomes) == ["t1", "t2", "t4"]  # a skipped task is not finished: it may run after a revision
    assert (outcomes["t1"].ok, outcomes["t1"].text, outcomes["t1"].files, outcomes["t1"].tokens) == \
        (True, "The summary.", [3], 42)
    assert (outcomes["t2"].ok, outcomes["t2"].text, outcomes["t2"].error) == (False, "", "the model is down")
    assert outcomes["t4"].ok and outcomes["t4"].undelivered and not outcomes["t4"].delivered
    assert ids == {"t1": 7, "t2": 8, "t4": 10}


def test_the_wire_keys_are_written_from_the_record_as_they_always_were():
    assert {k: v for k, v in task_meta(TaskRecord("t1")).items() if k != TASK_RECORD} == {"taskId": "t1"}
    assert {k: v for k, v in task_meta(TaskRecord("t1", undelivered=True)).items() if k != TASK_RECORD} == \
        {"taskId": "t1", "undelivered": True}
    assert {k: v for k, v in task_meta(TaskRecord("t1", ok=False, error="why")).items() if k != TASK_RECORD} == \
        {"taskId": "t1", "failed": True, "error": "why"}
    assert {k: v for k, v in task_meta(TaskRecord("t1", ok=False, skipped=True, error="why")).items()
            if k != TASK_RECORD} == {"taskId": "t1", "skipped": True}


def test_messages_written_before_the_records_are_read_from_their_loose_keys():
    ok = message({"taskId": "t1", "offline": True}, content="The summary.", message_id=1)
    undelivered = message({"taskId": "t2", "undelivered": True}, content="Nothing found.", message_id=2)
    failed = message({"taskId": "t3", "failed": True, "error": "timeout"}, content="Task 3 failed", message_id=3)
    failed_bare = message({"taskId": "t4", "failed": True}, content="Task 4 failed: boom", message_id=4)
    skipped = message({"taskId": "t5", "skipped": True}, content="Task t5 (writer) was skipped: t3 failed.",
                      message_id=5)
    plan = message({"plan": {"tasks": []}}, message_id=6)
    assert record_of(ok) == TaskRecord("t1")
    assert record_of(undelivered) == TaskRecord("t2", undelivered=True)
    assert record_of(failed) == TaskRecord("t3", ok=False, error="timeout")
    assert record_of(failed_bare) == TaskRecord("t4", ok=False, error="Task 4 failed: boom")
    assert record_of(skipped) == TaskRecord("t5", ok=False, skipped=True, error="t3 failed")
    assert record_of(plan) is None
    outcomes, _ = finished_tasks([(m, []) for m in (ok, undelivered, failed, failed_bare, skipped, plan)])
    assert sorted(outcomes) == ["t1", "t2", "t3", "t4"]
    assert outcomes["t1"].delivered and not outcomes["t2"].delivered and outcomes["t4"].error == "Task 4 failed: boom"


async def summarised(engine: Engine, monkeypatch) -> tuple[str, list[list[int]]]:
    """A round that summarises an upload; the rounds whose memory was rebuilt from messages meanwhile."""
    rebuilt: list[list[int]] = []
    rebuild = round_memory.prior_rounds

    def spy(messages: list[tuple[MessageRow, list[DocumentRow]]], completed: set[int]) -> Any:
        rebuilt.append(sorted({m.round for m, _ in messages}))
        return rebuild(messages, completed)

    monkeypatch.setattr(round_memory, "prior_rounds", spy)
    files = FileService(engine.rt.repo.files, engine.rt.storage, 1 << 30)
    [uploaded] = await files.upload(OWNER, [("google-doc-document.pdf",
                                             corpus_path("google-doc-document.pdf").read_bytes())])
    return await run_round(engine, "Summarise google-doc-document.pdf.", files=[uploaded.id]), rebuilt


def comparable(row: RoundMemoryRow) -> tuple[Any, ...]:
    return row.turns, row.delivered, row.size, row.finished, row.terms


async def test_a_task_keeps_its_record_and_an_ended_round_its_memory_from_typed_values(tmp_path, database_url,
                                                                                       monkeypatch):
    async with engine_on(tmp_path, database_url) as engine:
        wid, rebuilt = await summarised(engine, monkeypatch)
        assert rebuilt == []  # the round's memory was stored from the values its end held, not its messages
        rows = await engine.rt.repo.messages.rounds_messages(wid, [1])
        [(task, docs)] = [(m, d) for m, d in rows if "taskId" in m.meta]
        record = msgspec.convert(task.meta[TASK_RECORD], TaskRecord)
        assert record == TaskRecord(task.meta["taskId"])
        # Clients see the metadata they always saw: the record is the server's own.
        page = await WorkflowService(engine).messages(OWNER, wid, 0, 100)
        [wire] = [m for m in page.items if m.metadata.get("taskId")]
        assert TASK_RECORD not in wire.metadata and wire.metadata["taskId"] == record.task_id
        assert wire.metadata == {k: v for k, v in task.meta.items() if k != TASK_RECORD}

        stored = (await engine.rt.repo.memory.rounds(wid, 1, 1))[1]
        assert stored.finished and stored.delivered == [[record.task_id, task.agent_name, task.id]]
        assert any("(delivered)" in t[1] for t in stored.turns)
        # What the messages say of the round is what its end said: computed again, the same row.
        await engine.rt.db.run_write(lambda conn: conn.execute(sa.delete(table_of(RoundMemoryRow))))
        [ended] = await engine.rt.rounds.memory.of(wid).ended([1], 2)
        again = round_memory.row_of(wid, recall.remembered(ended))
        assert comparable(again) == comparable(stored)
        assert rebuilt == [[1]]
        # A later round reads it: the summary is a document it can name, and the round is in its history.
        inp = await engine.rt.rounds.conversation(wid, 2, "Translate the summary of round 1 into German.", [])
        assert "summary-round-1.md" in [d.name for d in inp.documents]
        assert inp.previous is not None and inp.previous.finished
        assert [t.delivered for t in inp.previous.tasks] == [True]


async def test_a_round_written_before_the_records_is_remembered_from_its_loose_keys(tmp_path, database_url,
                                                                                   monkeypatch):
    async with engine_on(tmp_path, database_url) as engine:
        wid, _ = await summarised(engine, monkeypatch)
        stored = (await engine.rt.repo.memory.rounds(wid, 1, 1))[1]
        rows = await engine.rt.repo.messages.rounds_messages(wid, [1])
        [task] = [m for m, _ in rows if "taskId" in m.meta]
        # As a database from before the records holds it: the wire's keys only, and no memory row.
        old = {k: v for k, v in task.meta.items() if k != TASK_RECORD}
        M = table_of(MessageRow)

        def downgrade(conn: sa.Connection) -> None:
            conn.execute(sa.update(M).where(M.c.id == task.id).values(meta=old))
            conn.execute(sa.delete(table_of(RoundMemoryRow)))

        await engine.rt.db.run_write(downgrade)
        [(read, docs)] = [(m, d) for m, d in await engine.rt.repo.messages.rounds_messages(wid, [1]) if m.id == task.id]
        assert TASK_RECORD not in read.meta
        outcomes, _ = finished_tasks([(read, docs)])
        assert outcomes[old["taskId"]].delivered and outcomes[old["taskId"]].text == task.content
        inp = await engine.rt.rounds.conversation(wid, 2, "Translate the summary of round 1 into German.", [])
        assert "summary-round-1.md" in [d.name for d in inp.documents]
        assert comparable((await engine.rt.repo.memory.rounds(wid, 1, 1))[1]) == comparable(stored)


async def test_a_resumed_round_reads_its_finished_tasks_from_their_records(tmp_path, database_url, monkeypatch):
    async with engine_on(tmp_path, database_url) as engine:
        wid, _ = await summarised(engine, monkeypatch)
        rows = await engine.rt.repo.messages.rounds_messages(wid, [1])
        [(task, docs)] = [(m, d) for m, d in rows if "taskId" in m.meta]
        [planning] = [m for m, _ in rows if "plan" in m.meta]
        # Only the record is left: what the round reads back is the record, not the wire's keys.
        M = table_of(MessageRow)
        await engine.rt.db.run_write(lambda conn: conn.execute(
            sa.update(M).where(M.c.id == task.id).values(meta={TASK_RECORD: task.meta[TASK_RECORD]})))

        async def given() -> Planned:
            return Planned(plan_of(planning), planning.tokens_used, {}, resumed=True)

        hooks = Hooks(engine.rt, wid, 1, given)
        start = await hooks.opened()
        assert isinstance(start, Start)
        tid = task.meta["taskId"]
        assert list(start.finished) == [tid]
        done = start.finished[tid]
        assert done.delivered and done.text == task.content and done.files == [d.file_id for d in docs]
        assert done.tokens == task.tokens_used and start.spent == planning.tokens_used + task.tokens_used
        assert hooks.messages == {tid: task.id} and hooks.answer == plan_of(planning).answer
