"""OpenAI-compatible chat, driven by the `openai` SDK over real HTTP (offline model, real documents)."""

from __future__ import annotations

import base64
import uuid

import httpx
import openai
import pytest

from tests.corpus import CORPUS
from tests.harness import LiveServer, wait_for, wait_status
from tests.web.conftest import HOLD


def client(server: LiveServer, key: str = "k1") -> openai.OpenAI:
    return openai.OpenAI(base_url=server.url + "/v1", api_key=key, max_retries=0, timeout=120)


def file_part(name: str) -> dict:
    data = base64.b64encode((CORPUS / name).read_bytes()).decode()
    return {"type": "file", "file": {"filename": name, "file_data": f"data:application/octet-stream;base64,{data}"}}


def test_models_lists_foreman_and_keys_are_required(server):
    assert [m.id for m in client(server).models.list()] == ["foreman"]
    with pytest.raises(openai.AuthenticationError) as caught:
        client(server, "nobody").models.list()
    assert caught.value.body["code"] == "unknown_key"  # OpenAI's error shape: {"error": {...}}
    assert caught.value.body["type"] == "authentication_error"


def test_errors_come_in_openais_shape(server):
    chat = client(server)
    with pytest.raises(openai.NotFoundError) as caught:
        chat.chat.completions.create(model="gpt-4o", messages=[{"role": "user", "content": "Hello"}])
    assert caught.value.body["code"] == "model_not_found" and "foreman" in caught.value.body["message"]
    with pytest.raises(openai.BadRequestError) as caught:
        chat.chat.completions.create(model="foreman", messages=[{"role": "assistant", "content": "Hi"}])
    assert caught.value.body["code"] == "no_user_message"
    with pytest.raises(openai.BadRequestError) as caught:
        chat.chat.completions.create(model="foreman", messages=[{"role": "user", "content": [
            {"type": "image_url", "image_url": {"url": "https://example.org/cat.png"}}]}])
    assert caught.value.body["code"] == "image_not_inline"
    raw = httpx.post(server.url + "/v1/chat/completions", content=b"{not json",
                     headers={"Authorization": "Bearer k1", "Content-Type": "application/json"})
    assert raw.status_code == 400 and raw.json()["error"]["code"] == "invalid_json"


def test_a_file_part_is_uploaded_and_the_answer_is_the_rounds_markdown_with_usage(server):
    answer = client(server).chat.completions.create(model="foreman", messages=[{"role": "user", "content": [
        {"type": "text", "text": "Summarize this document."}, file_part("docx_comments.docx")]}])
    text = answer.choices[0].message.content
    assert answer.model == "foreman" and answer.choices[0].finish_reason == "stop"
    assert "Summary of docx_comments.docx" in text  # the summarizer's result
    assert "**summarizer**" in text and "Completed steps" in text  # each agent's result and the final message
    assert answer.usage.total_tokens > 0


def test_streaming_sends_the_text_as_it_is_written_and_usage_when_asked(server):
    stream = client(server).chat.completions.create(
        model="foreman", stream=True, stream_options={"include_usage": True},
        messages=[{"role": "user", "content": [{"type": "text", "text": "Summarize this."},
                                               file_part("sample-french-1.txt")]}])
    chunks = list(stream)
    text = "".join(c.choices[0].delta.content or "" for c in chunks if c.choices)
    assert "sample-french-1.txt" in text
    assert [c.choices[0].finish_reason for c in chunks if c.choices][-1] == "stop"
    assert len([c for c in chunks if c.choices and c.choices[0].delta.content]) >= 3  # answer, step, last
    assert chunks[-1].choices == [] and chunks[-1].usage.total_tokens > 0


def test_a_resent_history_continues_the_workflow_and_the_third_turn_reads_the_first_documents(server):
    chat = client(server)
    history = [{"role": "user", "content": [{"type": "text", "text": "Summarize this document."},
                                            file_part("docx_comments.docx")]}]
    first = chat.chat.completions.with_raw_response.create(model="foreman", messages=history)
    workflow = first.headers["x-foreman-workflow"]
    history += [{"role": "assistant", "content": first.parse().choices[0].message.content},
                {"role": "user", "content": [{"type": "text", "text": "Summarize this one too."},
                                             file_part("sample-french-1.txt")]}]
    second = chat.chat.completions.with_raw_response.create(model="foreman", messages=history)
    assert second.headers["x-foreman-workflow"] == workflow
    history += [{"role": "assistant", "content": second.parse().choices[0].message.content},
                {"role": "user", "content": "What does the reviewer's comment say?"}]
    third = chat.chat.completions.with_raw_response.create(model="foreman", messages=history)
    assert third.headers["x-foreman-workflow"] == workflow
    assert "This is a sample reviewer comment on the first paragraph." in third.parse().choices[0].message.content

    with server.client("k1") as rest:
        assert rest.get(f"/api/workflows/{workflow}/status").json()["currentRound"] == 3
    # Another key resending the same history starts its own workflow, and cannot name this one.
    other = client(server, "k2").chat.completions.with_raw_response.create(
        model="foreman", messages=history[:3] + [{"role": "user", "content": "Thanks."}])
    assert other.headers["x-foreman-workflow"] != workflow
    with pytest.raises(openai.NotFoundError) as caught:
        client(server, "k2").chat.completions.create(
            model="foreman", messages=[{"role": "user", "content": "Hello"}],
            extra_headers={"X-Foreman-Workflow": workflow})
    assert caught.value.body["code"] == "workflow_not_found"


def test_produced_documents_are_download_links(server):
    answer = client(server).chat.completions.create(model="foreman", messages=[{"role": "user", "content": [
        {"type": "text", "text": "Extract the tables as an Excel file."}, file_part("stanley-cups.tsv")]}])
    text = answer.choices[0].message.content
    link = text[text.index("](" + server.url) + 2:].split(")", 1)[0]
    assert link.startswith(server.url + "/api/files/") and link.endswith("/content")
    with server.client("k1") as rest:
        assert rest.get(link).status_code == 200
    with server.client("k2") as rest:
        assert rest.get(link).status_code == 404  # another caller's document


def test_a_client_that_disconnects_stops_its_round(server, model):
    token = uuid.uuid4().hex
    chat = client(server)
    stream = chat.chat.completions.with_streaming_response.create(
        model="foreman", stream=True, messages=[{"role": "user", "content": f"{HOLD} {token} Summarise."}])
    with stream as response:
        workflow = response.headers["x-foreman-workflow"]
        wait_for(lambda: model.holding(token), 30, "the round's model call to be held")
    # The response is closed with the round still running: the server stops it.
    with server.client("k1") as rest:
        assert wait_status(rest, workflow, "stopped", "completed", "failed")["status"] == "stopped"


def test_a_process_that_never_saw_the_conversation_finds_its_workflow_from_the_history(server):
    chat = client(server)
    history = [{"role": "user", "content": "Hello, what can you do? " + uuid.uuid4().hex}]
    first = chat.chat.completions.with_raw_response.create(model="foreman", messages=history)
    server.app.state.openai_chat.conversations._known.clear()  # as on another replica, or after a restart
    history += [{"role": "assistant", "content": first.parse().choices[0].message.content},
                {"role": "user", "content": "And in one sentence?"}]
    second = chat.chat.completions.with_raw_response.create(model="foreman", messages=history)
    assert second.headers["x-foreman-workflow"] == first.headers["x-foreman-workflow"]
    edited = [{"role": "user", "content": "Something else entirely."}, *history[1:]]
    third = chat.chat.completions.with_raw_response.create(model="foreman", messages=edited)
    assert third.headers["x-foreman-workflow"] != first.headers["x-foreman-workflow"]  # an edited history


def test_a_client_that_leaves_before_a_whole_completion_stops_its_round(server, model):
    token = uuid.uuid4().hex
    with pytest.raises(openai.APITimeoutError):  # the client gives up and closes the connection
        client(server).with_options(timeout=5).chat.completions.create(
            model="foreman", messages=[{"role": "user", "content": f"{HOLD} {token} Summarise."}])
    with server.client("k1") as rest:
        [workflow] = [w["id"] for w in rest.get("/api/workflows").json()["items"] if token in w["name"]]
        assert wait_status(rest, workflow, "stopped", "completed", "failed")["status"] == "stopped"
