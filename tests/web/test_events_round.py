"""The event stream during a multi-task round of the offline model on real documents."""

from __future__ import annotations

import time
from dataclasses import replace

from tests.harness import LiveServer, settings_for, upload
from tests.sse import EventReader, poll_all


def test_a_multi_task_offline_round_on_real_documents_streams_what_a_poller_sees(tmp_path, database_url):
    settings = replace(settings_for(tmp_path, database_url), event_heartbeat_seconds=0.5)
    with LiveServer(settings) as live, live.client() as client:
        files = upload(client, "google-doc-document.pdf", "stanley-cups.tsv")
        wid = client.post("/api/workflows/start", json={
            "prompt": "Summarise these documents and extract the table as CSV.",
            "listFileId": [f["id"] for f in files]}).json()["id"]
        reader = EventReader(f"{live.url}/api/workflows/{wid}/events").start()
        polled = {"messages": [], "logs": []}
        while (reader.last_status() or {}).get("status") not in ("completed", "failed"):
            for kind, items in polled.items():  # a poller beside the stream, by cursor
                page = client.get(f"/api/workflows/{wid}/{kind}",
                                  params={"id": items[-1]["id"]} if items else {}).json()
                items += page["items"]
            time.sleep(0.1)  # the poller's interval
            assert reader.error is None, reader.error
        reader.close()
        assert reader.last_status()["status"] == "completed"
        polled["messages"] += poll_all(client, wid, "messages")[len(polled["messages"]):]
        polled["logs"] += poll_all(client, wid, "logs")[len(polled["logs"]):]
        streamed = reader.of("message")
        assert [m["id"] for m in streamed] == [m["id"] for m in polled["messages"]]
        assert streamed[1:] == polled["messages"][1:]  # the user message's contents fill in as files are read
        assert reader.of("log") == polled["logs"]
        tasks = [m for m in streamed if m["status"] == "step"][1:]
        assert len(tasks) >= 2 and len({m["agentName"] for m in tasks}) >= 2, [m["agentName"] for m in tasks]
        assert reader.of("log")[-1]["progress"] == 100
