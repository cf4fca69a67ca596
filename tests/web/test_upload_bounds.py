"""Over real HTTP: a bomb of any zip-based format fails alone with a sentence and is not read
again; text past MAX_EXTRACTED_CHARS is cut with a notice and the index is bounded; the extraction
cache never shows that another tenant (or user) holds the same bytes."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
import sqlalchemy as sa

from app.config import ApiKey
from app.store.schema import sync_url
from tests.bombs import FORMATS, bomb
from tests.harness import LiveServer, plan_of, settings_for, upload, wait_status
from tests.kernel.test_metrics import moved, scrape
from tests.scripted import ScriptedModel
from tests.web.conftest import start

MIB = 1 << 20
KEYS = (ApiKey("k1", 1, 1), ApiKey("k2", 1, 2), ApiKey("k3", 2, 3))


@pytest.fixture(scope="module")
def bounded(tmp_path_factory: pytest.TempPathFactory, module_database_url: str) -> Iterator[LiveServer]:
    tmp = Path(tmp_path_factory.mktemp("bounds"))
    settings = settings_for(tmp, module_database_url, api_keys=KEYS, max_inflated_part_bytes=2 * MIB,
                            max_extracted_chars=50_000, max_indexed_passages=20)
    with LiveServer(settings, ScriptedModel(plan=plan_of(1))) as live:
        yield live


def client(server: LiveServer, key: str) -> httpx.Client:
    return server.client(key)


def run_round(c: httpx.Client, prompt: str, files: list[int]) -> dict[str, Any]:
    response = start(c, prompt, files)
    assert response.status_code == 200, response.text
    status = wait_status(c, response.json()["id"], "completed", "failed", "stopped", timeout=300)
    assert status["status"] == "completed", logs(c, status["id"])
    return status


def logs(c: httpx.Client, wid: str) -> list[str]:
    return [entry["message"] for entry in c.get(f"/api/workflows/{wid}/logs", params={"limit": 500}).json()["items"]]


def documents(c: httpx.Client, wid: str) -> dict[str, list[dict[str, Any]]]:
    first = c.get(f"/api/workflows/{wid}/messages").json()["items"][0]
    return {f"{d['name']}.{d['ext']}": d["contents"] for d in first["documents"]}


def database(server: LiveServer, query: str, **params: Any) -> list[Any]:
    url = server.settings.database_url or f"sqlite:///{server.settings.data_dir / 'foreman.db'}"
    engine = sa.create_engine(sync_url(url))
    try:
        with engine.connect() as conn:
            return list(conn.execute(sa.text(query), params))
    finally:
        engine.dispose()


def test_a_bomb_of_each_format_fails_alone_with_a_sentence_and_is_not_read_again(bounded):
    with client(bounded, "k1") as c, bounded.client() as anonymous:
        files = [("files", (f"bomb.{kind}", bomb(kind, 4 * MIB))) for kind in FORMATS]
        response = c.post("/api/files", files=files)
        assert response.status_code == 201, response.text
        ids = [f["id"] for f in response.json()]
        [csv] = upload(c, "testCSV.csv")
        status = run_round(c, "Summarise these.", [*ids, csv["id"]])
        lines = logs(c, status["id"])
        for kind in FORMATS:
            assert f"Could not read bomb.{kind}: it would unpack, or take memory, beyond the limits." in lines
        assert any(line.startswith("Read testCSV.csv: ") for line in lines)  # the others are read
        contents = documents(c, status["id"])
        for kind in FORMATS:
            [notice] = contents[f"bomb.{kind}"]
            assert notice["data"].startswith(f"bomb.{kind} was not read: its part ")
            assert "over the 2 MiB limit of one part" in notice["data"]
            assert notice["metadata"]["status"] == "refused"

        # The failure is remembered: the next round (as a resumed one) takes it from the cache.
        before = scrape(anonymous)
        run_round(c, "Once more.", ids)
        after = scrape(anonymous)
        assert moved(before, after, "foreman_extraction_duration_seconds_count", outcome="cached") == len(FORMATS)
        assert moved(before, after, "foreman_extraction_duration_seconds_count", outcome="refused") == 0


def test_text_past_max_extracted_chars_is_cut_with_a_notice_and_its_index_is_bounded(bounded):
    text = "".join(f"Sentence number {n} says something about the quarter. " for n in range(4000)).encode()
    with client(bounded, "k1") as c:
        response = c.post("/api/files", files=[("files", ("long.txt", text))])
        file = response.json()[0]
        status = run_round(c, "Summarise it.", [file["id"]])
        [item] = documents(c, status["id"])["long.txt"]
        assert item["data"].endswith(f"[Only the first 50,000 of its {len(text):,} characters of text were kept "
                                     "(MAX_EXTRACTED_CHARS); the rest was cut.]")
        assert item["metadata"]["truncated"] is True
        assert any("MAX_EXTRACTED_CHARS" in line for line in logs(c, status["id"]))
        sha = database(bounded, "SELECT sha256 FROM files WHERE id = :id", id=file["id"])[0][0]
        [(count,)] = database(bounded, "SELECT count(*) FROM chunks WHERE sha256 = :sha", sha=sha)
        assert count == 20  # MAX_INDEXED_PASSAGES


def read_line(c: httpx.Client, name: str) -> str:
    [info] = upload(c, name)
    status = run_round(c, "Look at it.", [info["id"]])
    return next(line for line in logs(c, status["id"]) if line.startswith(f"Read {name}: "))


def test_the_cache_never_shows_that_another_tenant_or_user_holds_the_same_bytes(bounded):
    with client(bounded, "k1") as one, client(bounded, "k2") as colleague, client(bounded, "k3") as stranger:
        assert "from the cache" not in read_line(one, "stanley-cups.tsv")
        # The same bytes, for another mandate and for another user of the same mandate: read afresh.
        assert "from the cache" not in read_line(stranger, "stanley-cups.tsv")
        assert "from the cache" not in read_line(colleague, "stanley-cups.tsv")
        # Each one's own second use is cached, and says so.
        for c in (one, stranger, colleague):
            assert "from the cache" in read_line(c, "stanley-cups.tsv")
        shas = {s for (s,) in database(bounded, "SELECT DISTINCT sha256 FROM files WHERE name = 'stanley-cups'")}
        assert len(shas) == 1
        keys = [k for (k,) in database(bounded, "SELECT key FROM extractions WHERE key LIKE :p", p=f"{shas.pop()}%")]
        assert sorted(k.split(":", 1)[1] for k in keys) == ["m1u1", "m1u2", "m2u3"]
