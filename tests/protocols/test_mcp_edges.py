"""MCP over raw HTTP at the edges the SDK's client never reaches: a request whose `id` is an object is
answered with JSON-RPC's Invalid Request (it got 202 and no answer), and a GET asking for an event
stream is answered 405 at once (the stateless endpoint held it open for good)."""

from __future__ import annotations

import httpx

ACCEPT = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json",
          "Authorization": "Bearer k1"}


def test_a_request_with_an_object_id_gets_a_json_rpc_error(server):
    with httpx.Client(base_url=server.url, timeout=30) as client:
        for bad in ({"a": 1}, [1], True):
            answer = client.post("/mcp", headers=ACCEPT, json={"jsonrpc": "2.0", "id": bad, "method": "tools/list"})
            assert answer.status_code == 400, answer.text
            assert answer.json() == {"jsonrpc": "2.0", "id": None, "error": {
                "code": -32600, "message": "Invalid Request: id must be a string or a number"}}
        fine = client.post("/mcp", headers=ACCEPT, json={"jsonrpc": "2.0", "id": "7", "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}})
        assert fine.status_code == 200, fine.text
        assert '"id":"7"' in fine.text.replace(" ", "")


def test_a_get_for_an_event_stream_is_answered_at_once(server):
    with httpx.Client(base_url=server.url, timeout=30) as client:
        with client.stream("GET", "/mcp", headers={"Accept": "text/event-stream", "Authorization": "Bearer k1"}) as got:
            assert got.status_code == 405
            assert got.headers["allow"] == "POST"
            got.read()
        assert got.json()["code"] == "method_not_allowed"
