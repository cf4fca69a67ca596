"""CORS_ORIGINS: a browser app on an allowed origin can call the API; others cannot."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.harness import LiveServer, settings_for
from tests.web.conftest import KEYS, start

ORIGIN = "http://localhost:3000"


@pytest.fixture(scope="module")
def cors_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LiveServer]:
    settings = settings_for(Path(tmp_path_factory.mktemp("cors")), api_keys=KEYS, cors_origins=(ORIGIN,))
    with LiveServer(settings) as live:
        yield live


def test_cors_preflight_and_request_from_an_allowed_origin(cors_server):
    with cors_server.client("k1") as client:
        pre = client.options("/api/workflows/start", headers={
            "Origin": ORIGIN, "Access-Control-Request-Method": "POST",
            "Access-Control-Request-Headers": "authorization, content-type, idempotency-key"})
        assert pre.status_code in (200, 204)
        assert pre.headers["access-control-allow-origin"] == ORIGIN
        allowed = pre.headers["access-control-allow-headers"].lower()
        assert {"authorization", "idempotency-key", "content-type"} <= {h.strip() for h in allowed.split(",")}
        assert "POST" in pre.headers["access-control-allow-methods"]
        wid = start(client, "Compare the figures.").json()["id"]
        actual = client.get(f"/api/workflows/{wid}/status", headers={"Origin": ORIGIN})
        assert actual.headers["access-control-allow-origin"] == ORIGIN
        assert "etag" in actual.headers["access-control-expose-headers"].lower()


def test_cors_refuses_other_origins(cors_server):
    with cors_server.client("k1") as client:
        pre = client.options("/api/workflows/start", headers={
            "Origin": "https://evil.example", "Access-Control-Request-Method": "POST",
            "Access-Control-Request-Headers": "authorization"})
        assert pre.status_code >= 400
        assert "access-control-allow-origin" not in pre.headers
        actual = client.get("/api/workflows", headers={"Origin": "https://evil.example"})
        assert "access-control-allow-origin" not in actual.headers



def test_a_browser_on_an_allowed_origin_can_rename_and_options_names_every_method(cors_server):
    with cors_server.client("k1") as client:
        wid = start(client, "Compare the figures.").json()["id"]
        pre = client.options(f"/api/workflows/{wid}", headers={
            "Origin": ORIGIN, "Access-Control-Request-Method": "PATCH",
            "Access-Control-Request-Headers": "authorization, content-type"})
        assert pre.status_code in (200, 204), pre.text
        assert pre.headers["access-control-allow-origin"] == ORIGIN
        assert "PATCH" in pre.headers["access-control-allow-methods"]
        renamed = client.patch(f"/api/workflows/{wid}", json={"name": "Figures"}, headers={"Origin": ORIGIN})
        assert renamed.status_code == 200 and renamed.headers["access-control-allow-origin"] == ORIGIN
        # A plain OPTIONS (no preflight) names every method the path answers, not only the first registered.
        plain = client.options(f"/api/workflows/{wid}")
        assert plain.headers["allow"] == "DELETE, GET, HEAD, OPTIONS, PATCH"
        assert client.options("/api/workflows").headers["allow"] == "GET, HEAD, OPTIONS"
