"""A client that hangs up mid-body on /v1/chat/completions, over a real socket: an info line, as on
/api/files, not an unhandled error with a traceback, and not a 500 in /metrics."""

from __future__ import annotations

import logging
import socket
from pathlib import Path
from urllib.parse import urlsplit

import pytest

from tests.harness import LiveServer, settings_for, wait_for

GONE = "The client closed the connection before its request was read whole: POST /v1/chat/completions"


def test_a_client_gone_mid_body_is_an_info_line(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.INFO)
    with LiveServer(settings_for(tmp_path)) as server, server.client() as client:
        address = urlsplit(server.url)
        with socket.create_connection((address.hostname, address.port)) as sock:
            sock.sendall(b"POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                         b"Content-Length: 100000\r\n\r\n" + b'{"model": "foreman", "messages": [' + b" " * 1000)
        wait_for(lambda: any(GONE in r.getMessage() for r in caplog.records), 30, "the info line")
        metrics = client.get("/metrics").text
    assert not [r for r in caplog.records if r.levelno >= logging.ERROR], [r.getMessage() for r in caplog.records]
    [line] = [r for r in caplog.records if GONE in r.getMessage()]
    assert line.levelno == logging.INFO
    served = [m for m in metrics.splitlines() if "/v1/chat/completions" in m and m.startswith("foreman_http_requests_total{")]
    assert served and not [m for m in served if 'status_code="500"' in m], served
