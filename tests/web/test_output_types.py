"""Documents the agents produce are downloaded with the type they were written in, one charset."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.corpus import CORPUS
from tests.harness import LiveServer, settings_for, wait_status


@pytest.fixture(scope="module")
def offline_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LiveServer]:
    with LiveServer(settings_for(Path(tmp_path_factory.mktemp("dl")))) as live:
        yield live


def test_agent_csv_and_markdown_outputs_carry_one_charset(offline_server):
    with offline_server.client() as client:
        file_id = client.post("/api/files", files={"files": ("cups.tsv", (CORPUS / "stanley-cups.tsv").read_bytes())}
                              ).json()[0]["id"]
        started = client.post("/api/workflows/start", json={"prompt": "Extract the tables as CSV.",
                                                             "listFileId": [file_id]}).json()
        wait_status(client, started["id"], "completed", timeout=120)
        messages = client.get(f"/api/workflows/{started['id']}/messages").json()["items"]
        produced = [d for m in messages if m["role"] == "assistant" for d in m["documents"]]
        csvs = [d for d in produced if d["ext"] == "csv"]
        assert csvs, produced
        for doc in csvs:
            download = client.get(f"/api/files/{doc['fileId']}/content")
            assert download.headers["content-type"].count("charset") == 1, download.headers["content-type"]
            assert download.headers["content-type"].startswith("text/csv")
