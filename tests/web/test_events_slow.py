"""A client that stops reading its event stream is disconnected instead of queued for."""

from __future__ import annotations

import socket
from dataclasses import replace

from tests.corpus import CORPUS
from tests.harness import LiveServer, settings_for, wait_for, wait_status


def test_a_client_that_reads_nothing_is_dropped_and_the_stream_stops_following(tmp_path):
    settings = replace(settings_for(tmp_path), event_send_timeout_seconds=1.0, event_heartbeat_seconds=0.2)
    with LiveServer(settings) as live, live.client() as client:
        # Four copies of a 1 MB PDF: with includeData the message event is about 6 MB, more than the
        # kernel's socket buffers (4 MB at most here) take in for a client that reads nothing.
        pdf = (CORPUS / "tracemonkey.pdf").read_bytes()
        files = client.post("/api/files", files=[("files", (f"copy{i}.pdf", pdf)) for i in range(4)]).json()
        wid = client.post("/api/workflows/start", json={"prompt": "List the headings.",
                                                        "listFileId": [f["id"] for f in files]}).json()["id"]
        wait_status(client, wid, "completed", "failed")
        changes = live.app.state.runtime.changes
        sock = socket.socket()
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)  # a slow reader's small window
        sock.connect(("127.0.0.1", live.settings.port))
        sock.sendall(f"GET /api/workflows/{wid}/events?includeData=true HTTP/1.1\r\nHost: x\r\n\r\n".encode())
        try:
            wait_for(lambda: len(changes) == 1, 30, "the stream to follow the workflow")
            wait_for(lambda: len(changes) == 0, 30, "the server to give up on the client that reads nothing")
            received = b""
            sock.settimeout(30)
            while chunk := sock.recv(65536):  # the server closed the connection: the read ends
                received += chunk
            assert received.startswith(b"HTTP/1.1 200")
            assert b"event: status" not in received  # the stream was cut before the end of its backlog
        finally:
            sock.close()
        # A client that reads gets the whole stream (the server did not stop serving).
        assert client.get(f"/api/workflows/{wid}/status").status_code == 200
