"""OpenDocument uploads over HTTP: typed from their bytes and read into the round's user message."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.web.conftest import run_round

ODF = Path(__file__).resolve().parents[1] / "extractors" / "odf"


@pytest.mark.parametrize(("name", "mime", "first_item"), [
    ("testWORD_various.odt", "application/vnd.oasis.opendocument.text", "body"),
    ("testEXCEL.ods", "application/vnd.oasis.opendocument.spreadsheet", "sheet Feuil1"),
    ("powerpoint_sample.odp", "application/vnd.oasis.opendocument.presentation", "slide 1"),
])
def test_an_odf_upload_is_read_with_its_tables(c1, name, mime, first_item):
    response = c1.post("/api/files", files=[("files", (name, (ODF / name).read_bytes(), "application/zip"))])
    assert response.status_code == 201, response.text
    [info] = response.json()
    assert info["mimeType"] == mime and info["ext"] == name.rsplit(".", 1)[1]
    status = run_round(c1, "What is in this file?", [info["id"]])
    workflow = c1.get(f"/api/workflows/{status['id']}").json()
    [document] = workflow["messages"][0]["documents"]
    contents = document["contents"]
    assert contents[0]["name"] == first_item
    assert contents[0]["metadata"]["extractor"] == "odf"
    assert contents[0]["metadata"]["tables"], "the document's table reaches the message as cells"
    assert "could not be extracted" not in " ".join(c["data"] or "" for c in contents)


def test_an_encrypted_odt_is_read_with_the_password_sent_with_the_round(c1):
    data = (ODF / "encrypted-geheim.odt").read_bytes()
    [info] = c1.post("/api/files", files=[("files", ("lease.odt", data))]).json()
    status = run_round(c1, "Summarise the lease.", [info["id"]], passwords={str(info["id"]): "geheim"})
    [document] = c1.get(f"/api/workflows/{status['id']}").json()["messages"][0]["documents"]
    assert document["contents"][0]["metadata"]["decrypted"] is True
    assert document["contents"][0]["data"].startswith("Sample Word Document Title")
