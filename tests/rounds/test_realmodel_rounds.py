"""Whole rounds through HTTP against a real model: Qwen2.5-Coder-0.5B on a local llama.cpp server.

Skipped, saying why, when the model or llama-cpp-python's server is not installed
(`.ci/install-realmodel.sh` installs both).
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from agents.language import detect_language
from agents.phrases import say
from tests.harness import LiveServer, settings_for, upload, wait_for, wait_status
from tests.realmodel import LlamaServer
from tests.relay import Relay

pytestmark = pytest.mark.realmodel
ROUND_SECONDS = 900  # a shared 2-core machine generates a few tokens a second
STREAMING_BYTES = 3000  # of a streamed answer: a dozen token chunks, so the model is generating


@pytest.fixture(scope="module")
def relay(qwen_server: LlamaServer) -> Iterator[Relay]:
    """Foreman reaches the model through a relay that sees each stream's bytes and who hangs up."""
    with Relay(qwen_server.port) as relay:
        yield relay


@pytest.fixture(scope="module")
def client(relay: Relay, tmp_path_factory: pytest.TempPathFactory) -> Iterator[httpx.Client]:
    settings = settings_for(Path(tmp_path_factory.mktemp("qwen")),
                            openai_base_url=f"http://127.0.0.1:{relay.port}/v1",
                            llm_model="qwen2.5-coder-0.5b", llm_context_tokens=4096,
                            llm_timeout_seconds=300, llm_max_retries=1, max_round_seconds=ROUND_SECONDS)
    with LiveServer(settings) as server, server.client() as c:
        c.timeout = 60
        yield c


def run(client: httpx.Client, prompt: str, files: list[str] = ()) -> tuple[dict, list[dict]]:
    ids = [f["id"] for f in upload(client, *files)] if files else []
    started = client.post("/api/workflows/start", json={"prompt": prompt, "listFileId": ids})
    assert started.status_code == 200, started.text
    workflow = started.json()["id"]
    status = wait_status(client, workflow, "completed", "failed", timeout=ROUND_SECONDS)
    messages = client.get(f"/api/workflows/{workflow}/messages").json()["items"]
    logs = client.get(f"/api/workflows/{workflow}/logs").json()["items"]
    assert status["status"] == "completed", [entry["message"] for entry in logs]
    return status, messages


def plan_of(messages: list[dict]) -> dict:
    [pm] = [m for m in messages if m["agentName"] == "project_manager" and "plan" in (m.get("metadata") or {})]
    return pm["metadata"]["plan"]


def test_a_question_that_needs_no_task_is_answered_by_the_project_manager(client: httpx.Client) -> None:
    _, messages = run(client, "What is a good name for a bakery?")
    assert plan_of(messages)["tasks"] == []
    last = messages[-1]
    assert last["status"] == "last" and last["agentName"] == "project_manager"
    assert len(messages) == 2  # the user's message and the answer: no final review call
    assert last["content"].strip() and detect_language(last["content"]) == "en"


# The 0.5B model reads "Fasse das Dokument zusammen" as "Combine the document into one file", picks
# the writer and answers in English, the same way on a fresh server or after other rounds
# (temperature 0 is greedy decoding). The plan repairs used to overrule that choice with the offline
# planner's intent patterns; issue 32 retired that (a repair fixes what is invalid, not a valid
# choice of a real model), so this model now writes a document where a summary was asked for.
# Still so with the format-to-agents table and files named before the agent (2026-11-26, one run): a
# summary and a new document are both .docx/.md, so a file's format cannot tell the summarizer from the writer.
@pytest.mark.xfail(reason="Qwen 0.5B picks the writer for 'Fasse das Dokument zusammen'; repairs no longer "
                          "overrule a valid choice with word patterns (issue 32)", strict=False)
def test_a_german_summary_of_a_docx(client: httpx.Client) -> None:
    _, messages = run(client, "Fasse das Dokument zusammen", ["testWORD.docx"])
    agents = [t["agent"] for t in plan_of(messages)["tasks"]]
    assert "summarizer" in agents, plan_of(messages)
    summary = next(m for m in messages if m["agentName"] == "summarizer")
    assert summary["content"].strip()
    # The project manager answers in German; the last message's checklist is German too (its
    # review text may quote the English document: a 0.5B model copies what it was given).
    answer = next(m for m in messages if m["agentName"] == "project_manager" and m["status"] == "step")
    assert detect_language(answer["content"]) == "de", answer["content"]
    assert messages[-1]["status"] == "last" and f"**{say('delivered', 'de')}:**" in messages[-1]["content"]


def test_a_summary_asked_in_the_chat_is_answered_in_the_chat(client: httpx.Client) -> None:
    # Issue 50, item 10: this model chose the writer for it, which made files named after the request
    # ("fasse-dieses-dokument-in-drei-sätzen.md" and ".docx") and left the chat without a summary.
    # Whichever agent it picks now, no file is made where none was asked for, and a step says something.
    _, messages = run(client, "Fasse dieses Dokument in drei Sätzen zusammen.", ["testWORD.docx"])
    steps = [m for m in messages if m["agentName"] not in ("project_manager", "") and m["role"] == "assistant"]
    assert steps and all(m["content"].strip() for m in steps), steps
    assert not [d["name"] for m in messages for d in m.get("documents") or [] if m["role"] == "assistant"]


def test_a_table_to_csv_from_an_xlsx(client: httpx.Client) -> None:
    _, messages = run(client, "Extract the table as CSV", ["testEXCEL.xlsx"])
    agents = [t["agent"] for t in plan_of(messages)["tasks"]]
    assert "data_extractor" in agents, agents
    delivered = [d for m in messages if m["agentName"] == "data_extractor" for d in m["documents"]]
    assert any(d["ext"] == "csv" for d in delivered), [(d["name"], d["ext"]) for d in delivered]
    csv = next(d for d in delivered if d["ext"] == "csv")
    data = client.get(f"/api/files/{csv['fileId']}/content").text
    assert "," in data and len(data.splitlines()) >= 2
    answer = next(m for m in messages if m["agentName"] == "project_manager" and m["status"] == "step")
    assert detect_language(answer["content"]) == "en", answer["content"]


def test_a_stop_while_the_model_generates_ends_the_generation_on_the_server(
        client: httpx.Client, qwen_server: LlamaServer, relay: Relay) -> None:
    seen = relay.received()
    started = client.post("/api/workflows/start", json={
        "prompt": "Write a very long story about a dragon and a baker, with many chapters.", "listFileId": []})
    workflow = started.json()["id"]
    # The server generates: token chunks (a few hundred bytes each) stream in.
    stream = wait_for(lambda: relay.streaming(STREAMING_BYTES, since=seen), ROUND_SECONDS,
                      "the planning call to stream tokens")
    mark = len(qwen_server.log_text())
    assert client.post(f"/api/workflows/{workflow}/stop").status_code == 200
    # Foreman hangs up on the running stream (the server did not end it) ...
    wait_for(lambda: stream.client_closed or stream.server_closed, 60, "the stream to end")
    assert stream.client_closed and not stream.server_closed
    # ... and the server stops generating: its model is free again (bench/stop_generation.py
    # measures how soon).
    qwen_server.wait_idle(60)
    log = qwen_server.log_text()[mark:]
    # llama-cpp-python says so, and prints its timings only for a generation that ran to its end.
    assert "Disconnected from client" in log
    assert "llama_perf_context_print" not in log
    assert client.get(f"/api/workflows/{workflow}/status").json()["status"] == "stopped"
    # The next round's call is served, not queued behind the stopped generation.
    nxt = client.post("/api/workflows/start", json={"prompt": "Say hello.", "listFileId": []}).json()["id"]
    assert wait_status(client, nxt, "completed", "failed", timeout=ROUND_SECONDS)["status"] == "completed"


def test_the_managers_answer_appears_word_by_word(client: httpx.Client) -> None:
    import threading

    from tests.live_text import LiveText, done, read

    started = client.post("/api/workflows/start", json={"prompt": "What is a good name for a bakery?"})
    assert started.status_code == 200, started.text
    text = LiveText()
    read(f"{client.base_url}/api/workflows/{started.json()['id']}/events", text, threading.Event(), until=done,
         timeout=ROUND_SECONDS)
    text.check()
    [answer] = [m for m in text.messages.values() if m["agentName"] == "project_manager"]
    pieces = [e["text"] for n, e in text.events if n == "delta" and e["messageId"] == answer["metadata"]["draftId"]]
    assert len(pieces) >= 3, pieces  # the model's tokens, not the whole answer at its end
    assert "".join(pieces) == answer["content"]


# 2026-11-26: with the feedback only joined to the request (the first plan in the history), the 0.5B
# model's revised plan kept a PDF writer and added no workbook; shown the plan and the feedback as a
# list of changes to make (`agents.planning.replan.changes_prompt`), it added a data_extractor task, but only while
# the plan repairs overruled its choice of agent with the offline planner's intent patterns (retired by
# issue 32: it then added a summarizer task without outputs). Now the planner is told which agents make
# which files (`Registry.formats`) and names a task's files before its agent; the model lists the
# workbook among the final documents, and the one agent that makes .xlsx gets the task
# (`agents.planning.repairs`): 3 of 3 runs delivered the workbook.
def test_a_plan_revised_with_feedback_adds_the_task_it_asks_for(client: httpx.Client) -> None:
    """Issue 29: under plan review, `revise` with "also give me the table as Excel" yields a plan that
    adds the workbook (the revised plan waits for review again); approved, it delivers one."""
    ids = [f["id"] for f in upload(client, "testCSV.csv")]
    started = client.post("/api/workflows/start", json={"prompt": "Summarise this table.", "listFileId": ids,
                                                        "review": "plan"})
    assert started.status_code == 200, started.text
    workflow = started.json()["id"]
    first = wait_status(client, workflow, "waiting", "failed", timeout=ROUND_SECONDS)
    assert first["status"] == "waiting", first
    revised = client.post(f"/api/workflows/{workflow}/review",
                          json={"decision": "revise", "feedback": "Also give me the table as Excel."})
    assert revised.status_code == 200, revised.text

    def waits_again() -> dict | None:
        body = client.get(f"/api/workflows/{workflow}/status").json()
        wait = body.get("waitingFor") or {}
        return body if body["status"] != "running" and wait.get("messageId") != first["waitingFor"]["messageId"] \
            else None

    second = wait_for(waits_again, timeout=ROUND_SECONDS)
    assert second["status"] == "waiting", second
    plan = next(m for m in client.get(f"/api/workflows/{workflow}/messages").json()["items"]
                if m["id"] == second["waitingFor"]["messageId"])["metadata"]["plan"]
    outputs = [o["name"] for t in plan["tasks"] for o in t.get("outputs", [])] + \
              [d["name"] if isinstance(d, dict) else d for d in plan.get("finalDocuments", [])]
    # A workbook is planned: named as an output, or by a data_extractor task, which delivers one
    # when its outputs name none (what the 0.5B model writes: the task, without its outputs).
    assert any(str(name).lower().endswith(".xlsx") for name in outputs) or \
        any(t["agent"] == "data_extractor" for t in plan["tasks"]), plan
    # ... and delivered, once the revised plan is approved.
    assert client.post(f"/api/workflows/{workflow}/review", json={"decision": "approve"}).status_code == 200
    wait_status(client, workflow, "completed", "failed", timeout=ROUND_SECONDS)
    messages = client.get(f"/api/workflows/{workflow}/messages").json()["items"]
    delivered = [d for m in messages for d in m.get("documents") or []]
    assert any(d["ext"] == "xlsx" for d in delivered), [(d["name"], d["ext"]) for d in delivered]
