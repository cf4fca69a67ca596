"""The HTTP edge as a frontend and an attacker meet it: hostile bodies, 404/405, HEAD, compression."""

from __future__ import annotations

import gzip
import logging

import pytest

from tests.harness import upload
from tests.web.conftest import check_error, run_round

JSON = {"content-type": "application/json"}

HOSTILE = [
    pytest.param(b'{"prompt":"\xff\xfe","listFileId":[]}', JSON, 400, "not_utf8", id="not-utf8"),
    pytest.param(b"[" * 100_000, JSON, 400, "too_deep", id="nested-100000"),
    pytest.param(b'{"prompt":"x","passwords":' + b'{"a":' * 70 + b'"p"' + b"}" * 70 + b"}", JSON, 400, "too_deep",
                 id="nested-70-objects"),
    pytest.param(b'{"prompt":"' + b"x" * 3_000_000 + b'"}', JSON, 413, "body_too_large", id="huge"),
    pytest.param(b'{"prompt":"x"}', {"content-type": "text/plain"}, 415, "not_json", id="text-plain"),
    pytest.param(b'{"prompt":"x"}', {"content-type": "application/x-www-form-urlencoded"}, 415, "not_json",
                 id="form"),
    pytest.param(b'{"prompt":"x","listFileId":["1"]}', JSON, 400, "invalid_body", id="string-id"),
    pytest.param(b'{"prompt":"x","listFileId":[1.5]}', JSON, 400, None, id="fraction-id"),
    pytest.param(b'{"prompt":"x","listFileId":[true]}', JSON, 400, None, id="boolean-id"),
    pytest.param(b'{"prompt":5}', JSON, 400, None, id="number-prompt"),
    pytest.param(b'{"prompt":"x",', JSON, 400, None, id="truncated"),
    pytest.param(b'"\\ud800"', JSON, 400, None, id="lone-surrogate"),
    pytest.param(b"", JSON, 400, None, id="empty"),
]


@pytest.mark.parametrize(("body", "headers", "status", "code"), HOSTILE)
def test_hostile_bodies_get_a_4xx_with_a_sentence_never_a_5xx(c1, body, headers, status, code):
    for path in ("/api/workflows/start", "/api/workflows/start?id=00000000-0000-0000-0000-000000000000"):
        check_error(c1.post(path, content=body, headers=headers), status, code)


def test_a_string_file_id_starts_nothing(c1):
    files = upload(c1, "testCSV.csv")
    before = c1.get("/api/workflows", params={"limit": 500}).json()["items"]
    check_error(c1.post("/api/workflows/start", json={"prompt": "x", "listFileId": [str(files[0]["id"])]}), 400,
                "invalid_body")
    assert c1.get("/api/workflows", params={"limit": 500}).json()["items"] == before


def test_unknown_paths_and_methods_answer_json_with_a_sentence(c1):
    for path in ("/nope", "/schema/swagger", "/schema/redoc", "/schema/nope.json", "/api/workflows/x/nope"):
        body = check_error(c1.get(path), 404)
        assert path in body["detail"]
    body = check_error(c1.put("/api/files"), 405, "method_not_allowed")
    assert "PUT" in body["detail"]
    check_error(c1.patch("/api/workflows/start"), 405)


def test_every_answer_says_nosniff(c1):
    for response in (c1.get("/health"), c1.get("/nope"), c1.get("/api/workflows"), c1.get("/schema/openapi.json"),
                     c1.post("/api/workflows/start", content=b"{", headers=JSON)):
        assert response.headers["x-content-type-options"] == "nosniff"


def test_head_works_wherever_get_does(c1):
    wid = run_round(c1, "Compare the figures.")["id"]
    for path in ("/health", "/ready", "/api/workflows", f"/api/workflows/{wid}", f"/api/workflows/{wid}/status",
                 f"/api/workflows/{wid}/messages", f"/api/workflows/{wid}/logs", "/schema/openapi.json", "/docs"):
        got, head = c1.get(path), c1.head(path)
        assert head.status_code == got.status_code == 200, path
        assert head.content == b""
        assert head.headers["content-type"] == got.headers["content-type"]
    assert c1.head("/api/workflows/nope/status").status_code == 404


def test_if_none_match_star_and_lists(c1):
    wid = run_round(c1, "Compare the figures.")["id"]
    first = c1.get(f"/api/workflows/{wid}/status")
    etag = first.headers["etag"]
    assert c1.get(f"/api/workflows/{wid}/status", headers={"If-None-Match": "*"}).status_code == 304
    assert c1.get(f"/api/workflows/{wid}/status", headers={"If-None-Match": f'"other", W/{etag}'}).status_code == 304
    assert c1.get(f"/api/workflows/{wid}/status", headers={"If-None-Match": '"other"'}).status_code == 200
    check_error(c1.get("/api/workflows/nope/status", headers={"If-None-Match": "*"}), 404)


def test_docs_page_is_served_from_package_files(c1):
    page = c1.get("/docs")
    assert page.status_code == 200 and "text/html" in page.headers["content-type"]
    assert "http" not in page.text.replace("http-equiv", "")  # nothing from another origin
    for asset in ("/docs/static/swagger-ui-bundle.js", "/docs/static/swagger-ui.css", "/docs/static/docs.js"):
        assert c1.get(asset).status_code == 200, asset
    assert "/schema/openapi.json" in c1.get("/docs/static/docs.js").text


def test_large_answers_are_compressed_when_accepted(c1):
    wid = run_round(c1, "Compare the figures.", [f["id"] for f in upload(c1, "testCSV.csv")])["id"]
    path = f"/api/workflows/{wid}"
    plain = c1.get(path, headers={"Accept-Encoding": "identity"})
    assert "content-encoding" not in plain.headers and len(plain.content) > 1024
    for encoding in ("gzip", "br"):
        with c1.stream("GET", path, headers={"Accept-Encoding": encoding}) as raw:
            body = b"".join(raw.iter_raw())
            assert raw.headers["content-encoding"] == encoding
        assert len(body) < len(plain.content) / 2
        if encoding == "gzip":
            assert gzip.decompress(body) == plain.content
    empty = c1.get(f"/api/workflows/{wid}/logs", params={"id": plain.json()["logs"][-1]["id"]},
                   headers={"Accept-Encoding": "gzip"})
    assert "content-encoding" not in empty.headers  # an empty poll is too small to be worth it


def test_no_cors_headers_without_cors_origins(c1):
    response = c1.get("/api/workflows", headers={"Origin": "http://localhost:3000"})
    assert response.status_code == 200
    assert "access-control-allow-origin" not in response.headers


def test_a_stop_logs_one_info_line_and_no_dbos_warnings(c1, model, caplog):
    from tests.web.conftest import start_held

    held = start_held(c1, model)
    with caplog.at_level(logging.INFO):
        assert c1.post(f"/api/workflows/{held['id']}/stop").json()["status"] == "stopped"
    stops = [r for r in caplog.records if "stopped by its user" in r.getMessage()]
    assert len(stops) == 1 and stops[0].levelno == logging.INFO
    assert not [r for r in caplog.records if r.name.startswith("dbos") and r.levelno >= logging.WARNING]


def test_base64_of_binary_items_only_with_include_data(c1):
    files = upload(c1, "testOCR.png")
    wid = run_round(c1, "Compare the figures.", [f["id"] for f in files])["id"]
    light = c1.get(f"/api/workflows/{wid}/messages", params={"limit": 1}).json()["items"][0]["documents"][0]
    full = c1.get(f"/api/workflows/{wid}/messages", params={"limit": 1, "includeData": "true"}).json()["items"][0][
        "documents"][0]
    binary = [i for i, item in enumerate(full["contents"]) if item["metadata"]["base64Encoded"]]
    assert binary, "an image is a binary item"
    for i in binary:
        assert full["contents"][i]["data"] and light["contents"][i]["data"] == ""
    texts = [i for i, item in enumerate(full["contents"]) if not item["metadata"]["base64Encoded"]]
    assert all(light["contents"][i]["data"] == full["contents"][i]["data"] for i in texts)  # OCR text stays
    assert light["data"] is None and full["data"]
