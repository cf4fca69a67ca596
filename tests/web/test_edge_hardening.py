"""Small promises of the HTTP edge (issue 28, items 12 and 13): a client that hangs up mid-upload is a client
abort (499 in the metrics, one info line, no trace); 405 says Allow; a negative events id's 400 names the
parameter as sent; the schema says `minimum: 0` there and `minItems: 1` for uploads; a refused CORS preflight
is the JSON error; /metrics says its charset once; /docs may not be framed."""

from __future__ import annotations

import logging
import socket
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path

import pytest

from tests.harness import LiveServer, settings_for, wait_for
from tests.web.conftest import check_error


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LiveServer]:
    settings = replace(settings_for(Path(tmp_path_factory.mktemp("edge"))), cors_origins=("https://app.example",))
    with LiveServer(settings) as live:
        yield live


def requests_with_status(server: LiveServer, path: str, status: str) -> float:
    with server.client() as client:
        text = client.get("/metrics").text
    return sum(float(line.rsplit(" ", 1)[1]) for line in text.splitlines()
               if line.startswith("foreman_http_requests_total{") and f'path="{path}"' in line
               and f'status_code="{status}"' in line)


# Litestar's multipart parser drops the part it was spooling when the client goes, unclosed: its
# SpooledTemporaryFile closes itself when collected, with a ResourceWarning (left alone: Litestar's own).
@pytest.mark.filterwarnings("ignore::pytest.PytestUnraisableExceptionWarning")
def test_a_client_that_hangs_up_mid_upload_is_a_499_and_one_info_line(server, caplog):
    caplog.set_level(logging.INFO)
    before = requests_with_status(server, "/api/files", "499")
    boundary = "edgeboundary"
    head = (f"--{boundary}\r\nContent-Disposition: form-data; name=\"files\"; filename=\"big.txt\"\r\n"
            "Content-Type: text/plain\r\n\r\n").encode()
    port = int(server.url.rsplit(":", 1)[1])
    with socket.create_connection(("127.0.0.1", port)) as sock:
        sock.sendall((f"POST /api/files HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: {4 << 20}\r\n"
                      f"Content-Type: multipart/form-data; boundary={boundary}\r\n\r\n").encode() + head
                     + b"x" * (256 << 10))
    wait_for(lambda: requests_with_status(server, "/api/files", "499") > before, 30, "the abort in the metrics")
    assert requests_with_status(server, "/api/files", "500") == 0
    ours = [r for r in caplog.records if "closed the connection" in r.getMessage()]
    assert len(ours) == 1 and ours[0].levelno == logging.INFO and ours[0].exc_info is None
    assert not [r for r in caplog.records if r.levelno >= logging.ERROR or "Unhandled" in r.getMessage()]


def test_405_says_which_methods_are_allowed(server):
    with server.client() as client:
        answer = client.put("/api/workflows")
        body = check_error(answer, 405, "method_not_allowed")
        allowed = {m.strip() for m in answer.headers["Allow"].split(",")}
        assert "GET" in allowed and "PUT" not in allowed and "GET" in body["detail"]


def test_a_negative_events_id_names_the_parameter_as_sent_and_the_schema_says_so(server):
    with server.client() as client:
        wid = client.post("/api/workflows/start", json={"prompt": "Hello"}).json()["id"]
        for name in ("logId", "messageId"):
            body = check_error(client.get(f"/api/workflows/{wid}/events", params={name: -1}), 400)
            assert name in body["detail"] and "_id" not in body["detail"], body
        schema = client.get("/schema/openapi.json").json()
    events = schema["paths"]["/api/workflows/{workflow_id}/events"]["get"]["parameters"]
    ids = {p["name"]: p["schema"] for p in events if p["name"] in ("logId", "messageId")}
    assert ids == {name: {"type": "integer", "format": "int64", "minimum": 0} for name in ("logId", "messageId")}
    upload = schema["paths"]["/api/files"]["post"]["requestBody"]["content"]["multipart/form-data"]["schema"]
    assert upload["properties"]["files"]["minItems"] == 1


def test_a_preflight_from_an_origin_not_allowed_answers_the_json_error(server):
    with server.client() as client:
        refused = client.options("/api/workflows", headers={"Origin": "https://evil.example",
                                                            "Access-Control-Request-Method": "GET"})
        body = check_error(refused, 400, "cors_origin_not_allowed")
        assert "CORS_ORIGINS" in body["detail"] and "access-control-allow-origin" not in refused.headers
        allowed = client.options("/api/workflows", headers={"Origin": "https://app.example",
                                                            "Access-Control-Request-Method": "GET"})
        assert allowed.status_code in (200, 204)
        assert allowed.headers["access-control-allow-origin"] == "https://app.example"


def test_metrics_say_their_charset_once_and_docs_may_not_be_framed(server):
    with server.client() as client:
        kind = client.get("/metrics").headers["content-type"]
        assert kind.startswith("text/plain; version=") and kind.count("charset") == 1
        policy = client.get("/docs").headers["content-security-policy"]
        assert "frame-ancestors 'none'" in policy
