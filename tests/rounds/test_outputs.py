"""A task's output files: capped per task (the rest in one ZIP), never left behind by a stopped task."""

from __future__ import annotations

import asyncio
import io
import zipfile

import sqlalchemy as sa
from sqlalchemy.ext.asyncio import create_async_engine

from agents.base import OutputFile, TaskResult
from agents.registry import build_registry
from app.fsm import WorkflowStatus
from tests.harness import LiveServer, plan_of, settings_for, wait_for, wait_status
from tests.scripted import ScriptedModel


class ManyFiles:
    """An agent that delivers `count` small text files; `before_return` runs just before it returns."""

    name = "many"
    description = "Writes many small files."

    def __init__(self, count: int, before_return=None) -> None:
        self.count = count
        self.before_return = before_return

    async def run(self, task, context) -> TaskResult:
        files = [OutputFile(f"part-{i:02d}.txt", "text/plain", f"Part {i} of {task.id}.".encode())
                 for i in range(1, self.count + 1)]
        if self.before_return is not None:
            await self.before_return()
        return TaskResult(text=f"{self.count} parts written.", files=files)


def registry_with(agent) -> object:
    registry = build_registry(entry_points=False)
    registry.add(agent, source="test")
    return registry


def blobs(server: LiveServer) -> set[str]:
    """The hashes of the bytes the server's file store keeps (a directory, or rows of the database)."""
    storage = server.app.state.runtime.storage
    if storage.kind == "local":
        return {p.name for p in storage.root.rglob("*") if p.is_file()}

    async def stored() -> set[str]:  # on a connection of its own: the server's pool lives on its loop
        engine = create_async_engine(server.app.state.settings.app_database_url)
        try:
            async with engine.connect() as conn:
                return set((await conn.execute(sa.text("SELECT DISTINCT sha256 FROM file_chunks"))).scalars())
        finally:
            await engine.dispose()

    return asyncio.run(stored())


def test_a_task_over_the_cap_delivers_the_cap_and_one_zip_that_holds_the_rest(tmp_path, database_url):
    settings = settings_for(tmp_path, database_url, max_task_outputs=4)
    with LiveServer(settings, ScriptedModel(plan=plan_of(1, agent="many")), registry_with(ManyFiles(11))) as server, \
            server.client() as client:
        wid = client.post("/api/workflows/start", json={"prompt": "Write the parts"}).json()["id"]
        assert wait_status(client, wid, "completed")["status"] == "completed"
        [step] = [m for m in client.get(f"/api/workflows/{wid}/messages").json()["items"]
                  if m["metadata"].get("taskId") == "t1"]
        names = [d["name"] + "." + d["ext"] for d in step["documents"]]
        assert names == ["part-01.txt", "part-02.txt", "part-03.txt", "part-04.txt", "t1-more-documents.zip"]
        archive = client.get(f"/api/files/{step['documents'][-1]['fileId']}/content")
        with zipfile.ZipFile(io.BytesIO(archive.content)) as opened:
            assert opened.namelist() == [f"part-{i:02d}.txt" for i in range(5, 12)]
            assert opened.read("part-11.txt") == b"Part 11 of t1."
        assert client.get(f"/api/files/{step['documents'][0]['fileId']}/content").content == b"Part 1 of t1."

        # Deleting the workflow removes every file its task produced, rows and bytes.
        before = blobs(server)
        assert client.delete(f"/api/workflows/{wid}").status_code == 200
        for doc in step["documents"]:
            assert client.get(f"/api/files/{doc['fileId']}").status_code == 404
        assert not blobs(server) and before


def test_a_task_whose_round_was_stopped_before_its_write_leaves_no_file_and_no_bytes(tmp_path, database_url):
    holder: dict[str, LiveServer] = {}

    async def stop_the_round() -> None:  # the user's stop lands while the agent's files are on their way
        runtime = holder["server"].app.state.runtime
        [row] = await runtime.repo.workflows.running_workflows()
        stopped = await runtime.journal.stop(None, row.id)
        assert stopped is not None and stopped.workflow.status == WorkflowStatus.STOPPED

    agent = ManyFiles(3, before_return=stop_the_round)
    with LiveServer(settings_for(tmp_path, database_url), ScriptedModel(plan=plan_of(1, agent="many")),
                    registry_with(agent)) as server, server.client() as client:
        holder["server"] = server
        wid = client.post("/api/workflows/start", json={"prompt": "Write the parts"}).json()["id"]
        assert wait_status(client, wid, "stopped")["status"] == "stopped"
        wait_for(lambda: not server.app.state.engine.is_running(wid), 30, "the round's task to end")
        messages = client.get(f"/api/workflows/{wid}/messages").json()["items"]
        assert not [m for m in messages if m["metadata"].get("taskId")]
        assert not blobs(server)  # the bytes stored for the files were removed with the write that never came
        assert all(client.get(f"/api/files/{n}").status_code == 404 for n in range(1, 20))  # no file row either
