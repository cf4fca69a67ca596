"""Cursors: a poller passing its last id sees every item exactly once, in order."""

from __future__ import annotations

import threading

from tests.harness import LiveServer, plan_of, settings_for, wait_for, wait_status
from tests.scripted import ScriptedModel


def poll_until_done(client, wid: str, kind: str, seen: list[int], limit: int = 3) -> None:
    """Poll like a frontend: pass the last id seen, small pages, until the round ended and nothing is new."""
    cursor = seen[-1] if seen else None

    def step() -> bool:
        nonlocal cursor
        params = {"limit": limit} | ({"id": cursor} if cursor else {})
        page = client.get(f"/api/workflows/{wid}/{kind}", params=params).json()
        seen.extend(item["id"] for item in page["items"])
        cursor = page["lastId"] or cursor
        if page["hasMore"] or page["items"]:
            return False
        return client.get(f"/api/workflows/{wid}/status").json()["status"] != "running" and not client.get(
            f"/api/workflows/{wid}/{kind}", params={"id": cursor} if cursor else {}).json()["items"]

    wait_for(step, 120, f"{kind} of {wid} to settle")


def test_concurrent_rounds_pollers_see_everything_once_in_order(tmp_path, database_url):
    with LiveServer(settings_for(tmp_path, database_url, max_concurrent_rounds=8),
                    ScriptedModel(plan=plan_of(5))) as server:
        clients = [server.client() for _ in range(4)]
        wids = [c.post("/api/workflows/start", json={"prompt": f"Round {i}"}).json()["id"]
                for i, c in enumerate(clients)]
        seen = {(wid, kind): [] for wid in wids for kind in ("messages", "logs")}
        threads = [threading.Thread(target=poll_until_done, args=(clients[i], wid, kind, seen[(wid, kind)]))
                   for i, wid in enumerate(wids) for kind in ("messages", "logs")]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        for (wid, kind), ids in seen.items():
            everything = [item["id"] for item in
                          clients[0].get(f"/api/workflows/{wid}/{kind}", params={"limit": 500}).json()["items"]]
            assert ids == everything, f"{kind} of {wid}: the poller saw {ids}, the workflow holds {everything}"
            assert ids == sorted(set(ids))
        for client in clients:
            client.close()


def test_a_deleted_message_stays_a_valid_cursor(tmp_path):
    with LiveServer(settings_for(tmp_path), ScriptedModel(plan=plan_of(1))) as server, server.client() as client:
        wid = client.post("/api/workflows/start", json={"prompt": "One"}).json()["id"]
        wait_status(client, wid, "completed")
        messages = client.get(f"/api/workflows/{wid}/messages").json()["items"]
        last = messages[-1]["id"]
        assert client.delete(f"/api/workflows/{wid}/messages/{last}").status_code == 200

        page = client.get(f"/api/workflows/{wid}/messages", params={"id": last}).json()
        assert page == {"items": [], "lastId": last, "hasMore": False}
        client.post(f"/api/workflows/start?id={wid}", json={"prompt": "Two"})
        wait_status(client, wid, "completed")
        after = client.get(f"/api/workflows/{wid}/messages", params={"id": last}).json()["items"]
        assert [m["round"] for m in after] == [2, 2, 2, 2] and after[0]["content"] == "Two"
        before = client.get(f"/api/workflows/{wid}/messages", params={"id": messages[0]["id"]}).json()["items"]
        assert last not in [m["id"] for m in before]


def test_a_cursor_from_another_workflow_is_refused(tmp_path):
    with LiveServer(settings_for(tmp_path), ScriptedModel(plan=plan_of(0))) as server, server.client() as client:
        a = client.post("/api/workflows/start", json={"prompt": "A"}).json()["id"]
        b = client.post("/api/workflows/start", json={"prompt": "B"}).json()["id"]
        wait_status(client, a, "completed")
        wait_status(client, b, "completed")
        foreign = client.get(f"/api/workflows/{a}/messages").json()["items"][0]["id"]
        answer = client.get(f"/api/workflows/{b}/messages", params={"id": foreign})
        assert answer.status_code == 400 and answer.json()["code"] == "bad_cursor"
