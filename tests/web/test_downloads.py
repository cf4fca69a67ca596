"""Uploads with hostile names and disguised types, downloaded as a browser would receive them."""

from __future__ import annotations

import re
from urllib.parse import unquote

import httpx
import pytest

from app.contract.filenames import clean_name, content_disposition, served_type, split_name
from tests.web.conftest import check_error


def raw_upload(client: httpx.Client, filename: bytes, data: bytes) -> httpx.Response:
    """A multipart upload whose file name goes on the wire exactly as given (no client escaping)."""
    boundary = b"x8a7b6c5d4e3f"
    body = (b"--" + boundary + b"\r\nContent-Disposition: form-data; name=\"files\"; filename=\"" + filename
            + b"\"\r\nContent-Type: application/pdf\r\n\r\n" + data + b"\r\n--" + boundary + b"--\r\n")
    return client.post("/api/files", content=body,
                       headers={"content-type": "multipart/form-data; boundary=" + boundary.decode()})


def disposition_name(header: str) -> str:
    """The name a browser takes from an RFC 6266 header: filename* when present."""
    star = re.search(r"filename\*=UTF-8''([^;]+)", header)
    assert star, header
    fallback = re.search(r'filename="([^"]*)"', header)
    assert fallback and fallback.group(1).isascii() and fallback.group(1).isprintable(), header
    return unquote(star.group(1))


HOSTILE_NAMES = [
    (b"../../etc/passwd", "passwd", ""),
    (b"..\\..\\windows\\boot.ini", "boot.ini", "ini"),
    (b"/abs/path/report.PDF", "report.pdf", "pdf"),
    ("invoice\u202efdp.exe".encode(), "invoicefdp.exe", "exe"),
    (b"tab\there\x07bell.txt", "tabherebell.txt", "txt"),
    ("Bericht für Zürich.pdf".encode(), "Bericht für Zürich.pdf", "pdf"),
    (b"it's; x=1 %22q%22.txt", "it's; x=1 \"q\".txt", "txt"),  # browsers send a quote as %22
    (b"....", "upload", ""),
    (("a" * 300 + ".csv").encode(), "a" * 196 + ".csv", "csv"),
]


@pytest.mark.parametrize(("raw", "shown", "ext"), HOSTILE_NAMES)
def test_hostile_names_are_cleaned_and_downloaded_safely(c1, raw, shown, ext):
    response = raw_upload(c1, raw, b"plain words, nothing more\n")
    assert response.status_code == 201, response.text
    info = response.json()[0]
    assert info["name"] == shown and info["ext"] == ext
    download = c1.get(f"/api/files/{info['id']}/content")
    assert download.status_code == 200
    assert download.headers["x-content-type-options"] == "nosniff"
    assert disposition_name(download.headers["content-disposition"]) == shown
    assert download.headers["content-disposition"].startswith("attachment;")
    assert download.content == b"plain words, nothing more\n"


DISGUISED = [
    ("invoice.pdf", b"<!DOCTYPE html><html><body><script>alert(document.cookie)</script></body></html>"),
    ("photo.png", b'<?xml version="1.0"?><svg xmlns="http://www.w3.org/2000/svg"><script>alert(1)</script></svg>'),
    ("data.json", b"<html><script>fetch('/api/files')</script></html>"),
]


@pytest.mark.parametrize(("name", "data"), DISGUISED, ids=[d[0] for d in DISGUISED])
def test_active_content_is_never_served_as_a_page(c1, name, data):
    info = c1.post("/api/files", files={"files": (name, data)}).json()[0]
    download = c1.get(f"/api/files/{info['id']}/content")
    content_type = download.headers["content-type"]
    assert not any(t in content_type for t in ("html", "svg", "xml", "javascript")), content_type
    assert download.headers["x-content-type-options"] == "nosniff"
    assert "sandbox" in download.headers["content-security-policy"]
    assert download.headers["content-disposition"].startswith("attachment;")
    assert download.content == data


def test_an_empty_file_is_refused_and_nothing_is_stored(c1):
    body = check_error(c1.post("/api/files", files=[("files", ("a.txt", b"x")), ("files", ("empty.txt", b""))]),
                       400, "empty_file")
    assert "empty.txt" in body["detail"]


def test_name_rules():
    assert clean_name("C:\\Users\\x\\..\\secret.docx") == "secret.docx"
    assert clean_name("\u200bzero\u2066width\u2069.txt") == "zerowidth.txt"
    assert clean_name("") == "upload"
    assert split_name("archive.tar.gz") == ("archive.tar", "gz")
    assert split_name("noext") == ("noext", "")
    assert split_name("x." + "y" * 30) == ("x." + "y" * 30, "")
    assert served_type("text/csv; charset=utf-8") == "text/csv; charset=utf-8"
    assert served_type("text/html") == "application/octet-stream"
    assert served_type("image/svg+xml") == "application/octet-stream"
    assert served_type("application/pdf") == "application/pdf"
    header = content_disposition("Zürich\r\n.pdf")
    assert "\r" not in header and "\n" not in header


def test_the_chat_page_and_the_docs_carry_one_charset(c1):
    for path in ("/", "/docs"):
        answer = c1.get(path)
        assert answer.status_code == 200
        assert answer.headers["content-type"] == "text/html; charset=utf-8", path
        assert answer.headers["x-content-type-options"] == "nosniff"
