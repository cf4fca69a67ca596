"""Live text through the protocol adapters, with a streaming model (the stub writing at a pace):
the OpenAI-compatible chat streams each message as it is written, one message at a time, read by
the `openai` SDK; AG-UI sends TEXT_MESSAGE_CONTENT as the text is written, read by the package's
models and by the official TypeScript client."""

from __future__ import annotations

import json
import subprocess
import threading
from pathlib import Path

import httpx
import openai

from tests.harness import LiveServer, plan_of, settings_for, wait_for
from tests.openai_stub import OpenAIStub, Pace, Reply, StreamError, request_schema
from tests.protocols.test_agui import EVENTS, run_input
from tests.protocols.test_agui_client import CLIENT, node_client
from tests.sse import poll_all

ANSWER = "I will write four short notes, one for each part of your request."
ENGLISH = "the team wrote this note about the work that was done and what comes next for all of us".split()


def _model(stub: OpenAIStub, tasks: int = 4, words: int = 40) -> str:
    """The stub plans `tasks` writer tasks (its answer first) and writes `words` words of English for
    each other call; the plan's JSON."""
    plan = plan_of(tasks, agent="writer")
    plan["objUserResponse"] = ANSWER  # before objWorkplan, as the schema orders them
    stub.default = lambda body: json.dumps(plan) if request_schema(body) else " ".join(
        ENGLISH[n % len(ENGLISH)] for n in range(words)) + "."
    return json.dumps(plan)


def _server(tmp_path: Path, database_url: str, stub: OpenAIStub) -> LiveServer:
    return LiveServer(settings_for(tmp_path, database_url, openai_base_url=stub.base_url, openai_api_key="t"))


def _chat(live: LiveServer) -> openai.OpenAI:
    return openai.OpenAI(base_url=live.url + "/v1", api_key="unused", max_retries=0, timeout=120)


def _shown(message: dict) -> str:
    """A message as the adapters write it (an agent's step under its name)."""
    body = message["content"].strip()
    return f"**{message['agentName']}**\n\n{body}" if message["metadata"].get("taskId") else body


def test_openai_streaming_sends_each_message_as_it_is_written_never_interleaved(tmp_path, database_url,
                                                                                 openai_stub):
    _model(openai_stub)
    openai_stub.pace = Pace(chars=6, delay=0.005)
    with _server(tmp_path, database_url, openai_stub) as live, live.client() as rest:
        stream = _chat(live).chat.completions.with_streaming_response.create(
            model="foreman", stream=True, messages=[{"role": "user", "content": "Four notes, please."}])
        with stream as response:
            workflow = response.headers["x-foreman-workflow"]
            pieces = [c.choices[0].delta.content for c in response.parse() if c.choices and c.choices[0].delta.content]
        text = "".join(pieces)
        messages = [m for m in poll_all(rest, workflow, "messages") if m["role"] == "assistant"]
        assert len(messages) == 6  # the answer, four notes, the final message
        rest = text
        for message in messages:  # each one whole and in one place: parallel tasks' texts never mix
            assert _shown(message) in rest, _shown(message)[:60]
            rest = rest.replace(_shown(message), "", 1)
        assert all(line.startswith("- [") for line in rest.splitlines() if line), rest  # and document links
        assert len(pieces) > 3 * len(messages), "the text came in pieces as it was written, not whole"


def test_openai_streaming_shows_the_answer_before_the_plan_is_written(tmp_path, database_url, openai_stub):
    _model(openai_stub)
    openai_stub.pace = Pace(chars=8, delay=0.001, pause_after=ANSWER, pause_seconds=4.0)
    with _server(tmp_path, database_url, openai_stub) as live:
        text = ""
        with _chat(live).chat.completions.create(
                model="foreman", stream=True, messages=[{"role": "user", "content": "Four notes, please."}]) as chunks:
            for chunk in chunks:
                text += (chunk.choices[0].delta.content or "") if chunk.choices else ""
                if ANSWER in text:
                    break
        plan_call = openai_stub.records[0]
        assert plan_call.pieces[-1][1] < len(plan_call.text), "the plan was still being written"


def test_openai_streaming_marks_a_retried_answer_cut_and_writes_it_again(tmp_path, database_url, openai_stub):
    plan = _model(openai_stub, tasks=1)
    openai_stub.pace = Pace(chars=6, delay=0.002, pause_seconds=0.5)
    with _server(tmp_path, database_url, openai_stub) as live:
        openai_stub.script([Reply(plan), StreamError(code=503)])  # the task's first answer breaks off
        chunks = _chat(live).chat.completions.create(
            model="foreman", stream=True, messages=[{"role": "user", "content": "One note."}])
        text = "".join((c.choices[0].delta.content or "") for c in chunks if c.choices)
        cut = text.index("Half an ans")
        assert text.index(" …", cut) > cut, "the broken-off text is marked as cut"
        again = text[cut:].split("**writer**\n\n", 1)[1]
        assert "the team wrote" in again and "Half an ans" not in again, "the retried answer follows whole"


def _agui_run(live: LiveServer, body: dict) -> list:
    with httpx.Client(base_url=live.url, timeout=180) as client, client.stream(
            "POST", "/api/ag-ui", json=body, headers={"Accept": "text/event-stream"}) as response:
        assert response.status_code == 200, response.read()
        return [EVENTS.validate_json(line[6:]) for line in response.iter_lines() if line.startswith("data: ")]


def test_agui_sends_text_message_content_as_it_is_written(tmp_path, database_url, openai_stub):
    _model(openai_stub)
    openai_stub.pace = Pace(chars=6, delay=0.005)
    with _server(tmp_path, database_url, openai_stub) as live, live.client() as rest:
        events = _agui_run(live, run_input("live-" + tmp_path.name, "Four notes, please."))
        assert events[-1].type.value == "RUN_FINISHED"
        texts: dict[str, list[str]] = {}
        for event in events:
            if event.type.value == "TEXT_MESSAGE_START":
                assert event.message_id not in texts
                texts[event.message_id] = []
            elif event.type.value == "TEXT_MESSAGE_CONTENT":
                texts[event.message_id].append(event.delta)
        workflow = events[-1].result["workflowId"]
        messages = [m for m in poll_all(rest, workflow, "messages") if m["role"] == "assistant"]
        by_id = {f"{workflow}:{m['metadata']['draftId']}": m for m in messages}
        assert set(texts) == set(by_id)  # one AG-UI message per message, named by its draft
        for message_id, pieces in texts.items():  # its text as written, then links to its documents
            whole = "".join(pieces)
            assert whole.startswith(_shown(by_id[message_id]))
            assert all(line.startswith("- [") for line in whole[len(_shown(by_id[message_id])):].splitlines() if line)
        assert sum(len(p) > 1 for p in texts.values()) >= 5, "text arrives in pieces as it is written"


def test_agui_a_stopped_run_ends_its_open_messages_and_finishes_cancelled(tmp_path, database_url, openai_stub):
    _model(openai_stub, tasks=1, words=400)
    openai_stub.pace = Pace(chars=4, delay=0.02)
    with _server(tmp_path, database_url, openai_stub) as live, live.client() as rest:
        events, body, workflow = [], run_input("stop-" + tmp_path.name, "One long note."), []

        def follow() -> None:
            with httpx.Client(base_url=live.url, timeout=180) as client, client.stream(
                    "POST", "/api/ag-ui", json=body, headers={"Accept": "text/event-stream"}) as response:
                workflow.append(response.headers["x-foreman-workflow"])
                for line in response.iter_lines():
                    if line.startswith("data: "):
                        events.append(EVENTS.validate_json(line[6:]))

        reader = threading.Thread(target=follow, daemon=True)
        reader.start()
        wait_for(lambda: sum(e.type.value == "TEXT_MESSAGE_CONTENT" for e in events) > 5, 60, "text to stream")
        assert rest.post(f"/api/workflows/{workflow[0]}/stop").status_code == 200
        reader.join(60)
        assert not reader.is_alive()
        kinds = [e.type.value for e in events]
        assert kinds[-1] == "RUN_FINISHED" and events[-1].outcome.type == "cancelled"
        assert kinds.count("TEXT_MESSAGE_START") == kinds.count("TEXT_MESSAGE_END")
        assert "CUSTOM" in kinds and all(e.name == "foreman.discard" for e in events if e.type.value == "CUSTOM")


def test_the_official_client_reads_live_text(tmp_path, database_url, openai_stub):
    node = node_client()
    _model(openai_stub)
    openai_stub.pace = Pace(chars=6, delay=0.005)
    with _server(tmp_path, database_url, openai_stub) as live:
        done = subprocess.run([node, str(CLIENT / "run.mjs"), live.url, "unused"], capture_output=True, text=True,
                              timeout=600, cwd=CLIENT)
    assert done.returncode == 0, done.stderr
    first, second = json.loads(done.stdout)["runs"]
    for run in (first, second):
        assert run["failed"] is None and run["types"][-1] == "RUN_FINISHED"
        assistant = [m for m in run["newMessages"] if m["role"] == "assistant"]
        assert len(assistant) == 6 and all(m["content"] for m in assistant)
        assert sum(run["pieces"][m["id"]] > 1 for m in assistant) >= 5  # built from pieces as they came
