"""A long conversation's rounds cost what a short one's do: each ended round's turns are shortened once
and stored (`round_memory`), a round reads only the newest rounds that fit its history, and a request
that refers back to an old round (by its words or its number) brings that round back. Offline model,
a real database (SQLite, and PostgreSQL when configured), the production round engine."""

from __future__ import annotations

import sqlalchemy as sa

from agents.knowledge import recall
from app.rounds.supervisor import Engine
from app.services.files import FileService
from app.store.tables import RoundMemoryRow, table_of
from tests.corpus import path as corpus_path
from tests.rounds.engines import OWNER, engine_on, run_round

REACH = 300  # tokens of history in reach: a few rounds, so a short test has a long conversation


async def conversation(engine: Engine, workflow_id: str, round_no: int, prompt: str):
    return await engine.rt.rounds.conversation(workflow_id, round_no, prompt, [])


FILLERS = ["Say hello to the team", "Write a short greeting for Monday", "Suggest a name for a cat",
           "Give me a motto for the week", "Propose a title for a blog post", "Recommend a colour for a kitchen"]


async def long_workflow(engine: Engine, rounds: int, first: str, files: list[int] | None = None) -> str:
    wid = await run_round(engine, first, files=files)
    for n in range(2, rounds + 1):
        await run_round(engine, f"{FILLERS[n % len(FILLERS)]} ({n}).", wid)
    return wid


async def test_a_round_reads_a_bounded_part_of_a_long_conversation(tmp_path, database_url, monkeypatch):
    async with engine_on(tmp_path, database_url, REACH) as engine:
        wid = await long_workflow(engine, 14, "Write a short greeting for Sunday.")
        read_rounds: list[list[int]] = []
        read_pages: list[tuple[int, int]] = []
        messages, memory = engine.rt.repo.messages, engine.rt.repo.memory
        rounds_messages, pages = messages.rounds_messages, memory.rounds

        async def spy_messages(workflow_id, rounds):
            read_rounds.append(list(rounds))
            return await rounds_messages(workflow_id, rounds)

        async def spy_pages(workflow_id, first, last):
            read_pages.append((first, last))
            return await pages(workflow_id, first, last)

        monkeypatch.setattr(messages, "rounds_messages", spy_messages)
        monkeypatch.setattr(memory, "rounds", spy_pages)
        inp = await conversation(engine, wid, 15, "Say hello again.")
        # Only the newest round's messages are read (in full, to continue it should it have been stopped);
        # the others' turns come from their stored memory, and only the newest pages of it.
        assert read_rounds == [[14]]
        assert min(first for first, _ in read_pages) > 1
        tags = {content.split("]", 1)[0] + "]" for _, content in inp.history}
        assert "[round 14]" in tags and "[round 1]" not in tags
        assert inp.previous is not None and inp.previous.round == 14 and inp.previous.finished


async def test_a_turns_short_form_is_stored_once_when_its_round_ends(tmp_path, database_url, monkeypatch):
    async with engine_on(tmp_path, database_url, REACH) as engine:
        wid = await long_workflow(engine, 4, "Write a short greeting for Sunday.")
        stored = await engine.rt.repo.memory.rounds(wid, 1, 4)
        assert sorted(stored) == [1, 2, 3, 4]
        assert stored[1].turns[0][1].startswith("[round 1] Write a short greeting for Sunday.")
        assert all(r.size > 0 and r.finished for r in stored.values())
        calls: list[int] = []
        shorten = recall.round_turns
        monkeypatch.setattr(recall, "round_turns", lambda r: calls.append(r.round) or shorten(r))
        first = await conversation(engine, wid, 5, "Say hello again.")
        again = await conversation(engine, wid, 5, "Say hello again.")
        assert calls == []  # nothing shortened again
        assert first.history == again.history and first.turns == again.turns


async def test_a_follow_up_naming_round_one_of_a_long_conversation_finds_it(tmp_path, database_url):
    async with engine_on(tmp_path, database_url, REACH) as engine:
        files = FileService(engine.rt.repo.files, engine.rt.storage, 1 << 30)
        [uploaded] = await files.upload(OWNER, [("google-doc-document.pdf",
                                                                   corpus_path("google-doc-document.pdf").read_bytes())])
        wid = await long_workflow(engine, 12, "Summarise google-doc-document.pdf.", [uploaded.id])
        plain = await conversation(engine, wid, 13, "Say hello again.")
        assert not any(c.startswith("[round 1]") for _, c in plain.history)
        assert "summary-round-1.md" not in [d.name for d in plain.documents]

        # By its number: the summary of round 1 is a document again, and its turns are in the history.
        named = await conversation(engine, wid, 13, "Translate the summary of round 1 into German.")
        assert "summary-round-1.md" in [d.name for d in named.documents]
        assert any(c.startswith("[round 1]") for _, c in named.history)
        # By its words: what round 1 asked about.
        worded = await conversation(engine, wid, 13, "What did the google doc summary say?")
        assert any(c.startswith("[round 1] Summarise google-doc-document.pdf") for _, c in worded.history)
        # A round planned from it names the earlier summary as its input.
        await run_round(engine, "Translate the summary of round 1 into German.", wid)
        items = await engine.rt.repo.messages.rounds_messages(wid, [13])
        plan = next(m for m, _ in items if "plan" in (m.meta or {}))
        tasks = plan.meta["plan"]["tasks"]
        assert tasks and all(t["inputs"] == ["summary-round-1.md"] for t in tasks), tasks


async def test_deleted_messages_and_workflows_from_before_are_remembered_from_their_messages(tmp_path, database_url):
    async with engine_on(tmp_path, database_url, REACH) as engine:
        wid = await long_workflow(engine, 4, "Write a short greeting for Sunday.")
        before = await conversation(engine, wid, 5, "Say hello again.")
        # A workflow from before the memory table: nothing stored, the same history, computed and stored once.
        await engine.rt.db.run_write(lambda conn: conn.execute(sa.delete(table_of(RoundMemoryRow))))
        assert await engine.rt.repo.memory.rounds(wid, 1, 4) == {}
        after = await conversation(engine, wid, 5, "Say hello again.")
        assert after.history == before.history
        assert sorted(await engine.rt.repo.memory.rounds(wid, 1, 4)) == [1, 2, 3, 4]
        # A deleted request is forgotten: its round's memory is computed again without it.
        [request] = [m for m, _ in await engine.rt.repo.messages.rounds_messages(wid, [2])
                     if m.role == "user"]
        assert await engine.rt.repo.messages.delete_message(wid, request.id)
        assert 2 not in await engine.rt.repo.memory.rounds(wid, 2, 2)
        deleted = await conversation(engine, wid, 5, "Say hello again.")
        assert request.content not in " ".join(c for _, c in deleted.history)
        assert [c for _, c in deleted.history if not c.startswith("[round 2]")] == \
            [c for _, c in before.history if not c.startswith("[round 2]")]
