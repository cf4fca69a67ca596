"""Foreman as an MCP server, driven by the `mcp` SDK's client over streamable HTTP (offline model, real documents)."""

from __future__ import annotations

import base64
import contextlib
import uuid
from collections.abc import AsyncIterator

import httpx
import httpx2
import pytest
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.exceptions import MCPError

from tests.corpus import CORPUS
from tests.harness import upload, wait_for
from tests.web.conftest import HOLD


@contextlib.asynccontextmanager
async def connect(server, key: str = "k1") -> AsyncIterator[Client]:
    """The SDK's client over streamable HTTP with the key as a bearer token."""
    async with httpx2.AsyncClient(headers={"Authorization": f"Bearer {key}"}, timeout=120) as http:
        async with Client(streamable_http_client(server.url + "/mcp", http_client=http),
                          read_timeout_seconds=120) as client:
            yield client


async def test_a_round_on_an_uploaded_document_followed_to_its_produced_document(server):
    with server.client("k1") as rest:
        [sheet] = upload(rest, "stanley-cups.tsv")
    async with connect(server) as mcp:
        tools = {t.name for t in (await mcp.list_tools()).tools}
        assert {"start_round", "read_round", "stop_round", "review_round", "upload_file"} <= tools

        started = await mcp.call_tool("start_round", {"prompt": "Extract the tables as an Excel file.",
                                                      "file_ids": [sheet["id"]]})
        assert not started.is_error, started.content
        workflow = started.structured_content["workflowId"]
        progress: list[tuple[float, str | None]] = []

        async def on_progress(value: float, total: float | None, message: str | None) -> None:
            progress.append((value, message))

        read = await mcp.call_tool("read_round", {"workflow_id": workflow, "wait_seconds": 60},
                                   progress_callback=on_progress)
        body = read.structured_content
        assert body["status"] == "completed", body
        assert progress and progress[-1][0] == 100  # the round's logs, as progress notifications
        [link] = [c for c in read.content if c.type == "resource_link" and c.name.endswith(".xlsx")]

        listed = {str(r.uri) for r in (await mcp.list_resources()).resources}
        assert str(link.uri) in listed
        [contents] = (await mcp.read_resource(str(link.uri))).contents
        assert base64.b64decode(contents.blob)[:2] == b"PK"  # an XLSX is a ZIP
        assert "spreadsheetml" in contents.mime_type

        # Cursors: nothing after the last ids.
        again = await mcp.call_tool("read_round", {"workflow_id": workflow, "after_message_id": body["lastMessageId"],
                                                   "after_log_id": body["lastLogId"]})
        assert again.structured_content["messages"] == [] and again.structured_content["logs"] == []
        # The waited read answers with what the event stream showed, without reading again: the same
        # as a plain read of the ended round.
        plain = await mcp.call_tool("read_round", {"workflow_id": workflow})
        assert plain.structured_content == body
        assert [c.model_dump() for c in plain.content] == [c.model_dump() for c in read.content]

    async with connect(server, "k2") as other:  # another key sees neither the workflow nor its documents
        assert str(link.uri) not in {str(r.uri) for r in (await other.list_resources()).resources}
        with pytest.raises(MCPError):
            await other.read_resource(str(link.uri))
        hidden = await other.call_tool("read_round", {"workflow_id": workflow})
        assert hidden.is_error and "workflow_not_found" in hidden.content[0].text


async def test_upload_then_cancel_a_running_round_and_review_is_a_conflict(server, model):
    token = uuid.uuid4().hex
    async with connect(server) as mcp:
        data = base64.b64encode((CORPUS / "sample-french-1.txt").read_bytes()).decode()
        uploaded = await mcp.call_tool("upload_file", {"name": "sample-french-1.txt", "data_base64": data})
        file_id = uploaded.structured_content["fileId"]
        started = await mcp.call_tool("start_round", {"prompt": f"{HOLD} {token} Summarise.", "file_ids": [file_id]})
        workflow = started.structured_content["workflowId"]
        wait_for(lambda: model.holding(token), 60, "the round's model call to be held")

        review = await mcp.call_tool("review_round", {"workflow_id": workflow, "decision": "approve"})
        assert review.is_error and "409" in review.content[0].text

        stopped = await mcp.call_tool("stop_round", {"workflow_id": workflow})
        assert stopped.structured_content["status"] == "stopped"
        read = await mcp.call_tool("read_round", {"workflow_id": workflow})
        assert read.structured_content["status"] == "stopped"


def test_mcp_needs_a_key(server):
    response = httpx.post(server.url + "/mcp", json={"jsonrpc": "2.0", "id": 1, "method": "tools/list"},
                          headers={"Accept": "application/json, text/event-stream"})
    assert response.status_code == 401 and response.json()["code"] == "missing_key"
