"""MAX_UPLOAD_BYTES: an upload over the limit is refused whole, with the limit named."""

from __future__ import annotations

import sqlalchemy as sa

from app.store.schema import sync_url
from tests.harness import LiveServer, settings_for
from tests.web.conftest import check_error


def stored_blobs(server: LiveServer) -> set[str]:
    """What the file store holds: files under DATA_DIR, or the contents in the database."""
    store = server.app.state.runtime.storage
    if store.kind == "local":
        return {p.name for p in store.root.rglob("*") if p.is_file()}
    engine = sa.create_engine(sync_url(server.settings.app_database_url))
    try:
        with engine.connect() as conn:
            return set(conn.execute(sa.text("SELECT DISTINCT sha256 FROM file_chunks")).scalars())
    finally:
        engine.dispose()


def test_over_the_limit_is_413_and_stores_nothing(tmp_path, database_url):
    with LiveServer(settings_for(tmp_path, database_url, max_upload_bytes=1000)) as server, \
            server.client() as client:
        [first] = client.post("/api/files", files=[("files", ("a.txt", b"a" * 1000))]).json()
        blobs = stored_blobs(server)

        too_big = client.post("/api/files", files=[("files", ("ok.txt", b"small enough")),
                                                   ("files", ("big.txt", b"b" * 1001))])
        body = check_error(too_big, 413)
        assert "1000" in body["detail"]
        # Far over the limit: the body is refused before it is read.
        huge = client.post("/api/files", files=[("files", ("huge.bin", b"h" * 200_000))])
        assert "1000" in check_error(huge, 413)["detail"]

        assert stored_blobs(server) == blobs
        [after] = client.post("/api/files", files=[("files", ("c.txt", b"c" * 10))]).json()
        assert after["id"] == first["id"] + 1
        check_error(client.get(f"/api/files/{first['id'] + 2}"), 404)
