"""/ready asks the database, cheaply (at most once a second): 503 while PostgreSQL is unreachable, 200 again
once it answers (issue 28, item 7)."""

from __future__ import annotations

from dataclasses import replace

from tests.harness import LiveServer, settings_for, wait_for
from tests.relay import Relay


def test_ready_asks_the_database(tmp_path, database_url):
    with LiveServer(settings_for(tmp_path, database_url)) as server, server.client() as client:
        check = server.app.state.database_check
        assert client.get("/ready").status_code == 200 and check.healthy and check.checked_at > 0
        asked = check.checked_at
        assert [client.get("/ready").status_code for _ in range(20)] == [200] * 20
        assert check.checked_at - asked < 2  # twenty polls within a moment: the database was asked once or twice


def test_ready_answers_503_while_postgresql_is_unreachable(tmp_path, postgres_url):
    host_port = postgres_url.split("@", 1)[1].split("/", 1)[0]
    upstream = int(host_port.rsplit(":", 1)[1]) if ":" in host_port else 5432
    with Relay(upstream) as relay:
        url = postgres_url.replace(host_port, f"127.0.0.1:{relay.port}", 1)
        settings = replace(settings_for(tmp_path, url), database_pool_timeout_seconds=2.0)
        with LiveServer(settings) as server, server.client() as client:
            assert client.get("/ready").status_code == 200
            relay.down()
            answer = wait_for(lambda: (r := client.get("/ready")).status_code == 503 and r, 30, "/ready to say 503")
            body = answer.json()
            assert body["code"] == "not_ready" and "database does not answer" in body["detail"]
            assert client.get("/health").status_code == 200  # the process is up, only not ready
            relay.up()
            wait_for(lambda: client.get("/ready").status_code == 200, 30, "/ready to say 200 again")
