"""Files over HTTP: upload, type detection from the bytes, metadata, content."""

from __future__ import annotations

import pytest

from tests.corpus import CORPUS
from tests.harness import upload
from tests.web.conftest import check_error

DOCX = "application/vnd.openxmlformats-officedocument.wordprocessingml.document"


def test_upload_one_file_answers_its_metadata(c1):
    response = c1.post("/api/files", files=[("files", ("simple.json", (CORPUS / "simple.json").read_bytes()))])
    assert response.status_code == 201
    [info] = response.json()
    assert {"id", "name", "ext", "mimeType", "size"} <= info.keys()
    assert isinstance(info["id"], int)
    assert info["name"] == "simple.json" and info["ext"] == "json"
    assert info["size"] == (CORPUS / "simple.json").stat().st_size
    assert info["mimeType"] == "application/json"


def test_upload_several_files_in_order(c1):
    infos = upload(c1, "testCSV.csv", "testWORD.docx", "simple.zip")
    assert [i["name"] for i in infos] == ["testCSV.csv", "testWORD.docx", "simple.zip"]
    assert len({i["id"] for i in infos}) == 3
    assert [i["size"] for i in infos] == [(CORPUS / n).stat().st_size for n in
                                          ("testCSV.csv", "testWORD.docx", "simple.zip")]
    assert infos[1]["mimeType"] == DOCX and infos[2]["mimeType"] == "application/zip"


def test_mime_type_comes_from_the_bytes_not_the_client(c1):
    data = (CORPUS / "testWORD.docx").read_bytes()
    response = c1.post("/api/files", files=[("files", ("notes.txt", data, "text/plain"))])
    assert response.status_code == 201
    [info] = response.json()
    assert info["mimeType"] == DOCX
    assert info["name"] == "notes.txt" and info["ext"] == "txt"
    assert c1.get(f"/api/files/{info['id']}").json()["mimeType"] == DOCX


def test_metadata_and_content_round_trip(c1):
    data = (CORPUS / "testWORD.docx").read_bytes()
    [info] = c1.post("/api/files", files=[("files", ("Bericht über Q3.docx", data, "text/plain"))]).json()

    meta = c1.get(f"/api/files/{info['id']}")
    assert meta.status_code == 200
    assert {k: meta.json()[k] for k in info} == info

    content = c1.get(f"/api/files/{info['id']}/content")
    assert content.status_code == 200
    assert content.content == data
    assert content.headers["content-type"].split(";")[0] == DOCX
    disposition = content.headers["content-disposition"]
    assert disposition.startswith("attachment")
    assert "filename*=UTF-8''Bericht%20%C3%BCber%20Q3.docx" in disposition
    assert 'filename="Bericht ' in disposition


def test_text_file_content_type(c1):
    [info] = upload(c1, "testCSV.csv")
    content = c1.get(f"/api/files/{info['id']}/content")
    assert content.content == (CORPUS / "testCSV.csv").read_bytes()
    assert content.headers["content-type"].split(";")[0] == info["mimeType"] == "text/csv"
    assert 'filename="testCSV.csv"' in content.headers["content-disposition"]


def test_unknown_file_is_404(c1):
    check_error(c1.get("/api/files/999999"), 404)
    check_error(c1.get("/api/files/999999/content"), 404)


def test_non_multipart_upload_is_415(c1):
    check_error(c1.post("/api/files", json={"files": ["a"]}), 415, "not_multipart")
    check_error(c1.post("/api/files", content=b"raw bytes", headers={"content-type": "application/octet-stream"}),
                415, "not_multipart")


def test_upload_without_files_part_is_400(c1):
    check_error(c1.post("/api/files", files=[("document", ("a.txt", b"hello"))]), 400)
    check_error(c1.post("/api/files", data={"files": "not a file"},
                        files=[("other", ("a.txt", b"x"))]), 400)


def test_a_nul_in_the_file_name_is_dropped(c1):
    boundary = "foremanboundary"
    body = (f"--{boundary}\r\nContent-Disposition: form-data; name=\"files\"; filename=\"re\x00port.txt\"\r\n"
            f"Content-Type: text/plain\r\n\r\nhello\r\n--{boundary}--\r\n").encode()
    response = c1.post("/api/files", content=body,
                       headers={"content-type": f"multipart/form-data; boundary={boundary}"})
    assert response.status_code == 201, response.text
    [info] = response.json()
    assert "\x00" not in info["name"] and info["name"].endswith(".txt")
    assert c1.get(f"/api/files/{info['id']}/content").content == b"hello"


def test_a_file_name_too_long_for_the_parser_is_400_that_says_so(c1):
    body = check_error(c1.post("/api/files", files=[("files", ("n" * 5000 + ".txt", b"hi"))]), 400)
    assert "too long" in body["detail"]


@pytest.mark.parametrize("name", ["bell\x07.txt", "esc\x1b.txt", "del\x7f.txt", "tab\t.txt", 'quote".txt',
                                  "back\\slash.txt", "ü\u2028line.txt"])
def test_any_file_name_can_be_downloaded(c1, name):
    boundary = "foremanboundary"
    body = (f"--{boundary}\r\nContent-Disposition: form-data; name=\"files\"; filename=\"{name}\"\r\n"
            f"Content-Type: text/plain\r\n\r\nhello\r\n--{boundary}--\r\n").encode()
    response = c1.post("/api/files", content=body,
                       headers={"content-type": f"multipart/form-data; boundary={boundary}"})
    assert response.status_code == 201, response.text
    [info] = response.json()
    content = c1.get(f"/api/files/{info['id']}/content")
    assert content.status_code == 200 and content.content == b"hello"
    disposition = content.headers["content-disposition"]
    assert disposition.startswith("attachment; filename=\"") and "filename*=UTF-8''" in disposition
