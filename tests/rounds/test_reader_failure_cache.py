"""The cache never keeps a reading that failed for the reader's own sake (its process did not start,
died or was cut) as the file's contents: the next round reads the file again."""

from __future__ import annotations

import app.rounds.documents
from extractors.runner import _notice
from tests.harness import LiveServer, settings_for, upload, wait_status


def _round(client, prompt, ids, wid=None):
    url = "/api/workflows/start" + (f"?id={wid}" if wid else "")
    wid = client.post(url, json={"prompt": prompt, "listFileId": ids}).json()["id"]
    wait_status(client, wid, "completed", "failed", timeout=120)
    return wid


def test_a_reader_process_failure_is_not_cached_and_the_file_is_read_next_time(tmp_path, database_url,
                                                                               monkeypatch):
    real = app.rounds.documents.extract_isolated
    calls = []

    async def flaky(data, name, *args, **kwargs):
        calls.append(name)
        if len(calls) == 1:
            return _notice(name, "corrupt", f"{name}: the extraction process stopped unexpectedly.", "text/plain")
        return await real(data, name, *args, **kwargs)

    monkeypatch.setattr(app.rounds.documents, "extract_isolated", flaky)
    with LiveServer(settings_for(tmp_path, database_url)) as server, server.client() as client:
        first = upload(client, "sample-french-1.txt")[0]["id"]
        _round(client, "Quand Molière est-il né ?", [first])
        # The same bytes uploaded again in a new conversation: read again, not the failure from the cache.
        again = upload(client, "sample-french-1.txt")[0]["id"]
        wid = _round(client, "Quand Molière est-il né ?", [again])
        messages = client.get(f"/api/workflows/{wid}/messages").json()["items"]
        assert len(calls) == 2
        said = " ".join(m["content"] for m in messages if m["role"] == "assistant")
        assert "1622" in said, said
