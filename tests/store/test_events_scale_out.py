"""Two processes on one PostgreSQL database: a stream served by one follows a round run by the other."""

from __future__ import annotations

from tests.harness import LiveServer, other_process, settings_for, wait_for
from tests.sse import EventReader


def test_a_stream_on_one_process_follows_a_round_run_by_another(tmp_path, postgres_url):
    with LiveServer(settings_for(tmp_path, postgres_url, executor_id="a")) as a, a.client() as client, \
            other_process(tmp_path, postgres_url) as b:
        first = client.post("/api/workflows/start", json={"prompt": "Summarise the request"}).json()["id"]
        wait_for(lambda: client.get(f"/api/workflows/{first}/status").json()["status"] == "completed", 60,
                 "the first round")
        reader = EventReader(f"{b.base_url}/api/workflows/{first}/events").start()
        wait_for(lambda: (reader.last_status() or {}).get("status") == "completed", 30, "the backlog on B")
        seen = len(reader.snapshot())

        # Round 2 runs on A; the stream is served by B and learns of it only through NOTIFY.
        assert client.post(f"/api/workflows/start?id={first}", json={"prompt": "And again"}).status_code == 200
        wait_for(lambda: (reader.last_status() or {}).get("currentRound") == 2
                 and reader.last_status()["status"] == "completed", 60, "round 2 on the stream served by B")
        reader.close()
        fresh = reader.snapshot()[seen:]
        messages = client.get(f"/api/workflows/{first}/messages").json()["items"]
        logs = client.get(f"/api/workflows/{first}/logs").json()["items"]
        assert [e.data for e in fresh if e.event == "message"] == [m for m in messages if m["round"] == 2]
        assert [e.data for e in fresh if e.event == "log"] == [x for x in logs if x["round"] == 2]
        assert next(e.data for e in fresh if e.event == "message")["content"] == "And again"
