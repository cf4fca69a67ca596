"""Replicas on one PostgreSQL database take over each other's rounds: killed, paused, or shut down.

Each replica is `python -m app` in its own process; the model is a real OpenAI-compatible
server on 127.0.0.1 that answers slowly, reached by each replica under its own path, so the
test knows which replica asked what.
"""

from __future__ import annotations

import itertools
import signal
import threading
import time
from collections import Counter
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager

import httpx
import pytest

from tests.harness import Replica, plan_of, wait_for
from tests.harness import pg_fetch as sql
from tests.openai_stub import request_schema

pytestmark = pytest.mark.heavy

TIMEOUT = "4"  # HEARTBEAT_TIMEOUT_SECONDS of the replicas that may be taken over
EXPECTED_LOGS = ("Workflow initialized", "Analyzing request and planning work", "Work plan created: 2 tasks",
                 "Task 1/2 done: analyst", "Task 2/2 done: analyst", "Creating final response",
                 "Workflow completed successfully")


@pytest.fixture
def model(openai_stub):
    """The stub answers every plan with two independent analyst tasks and every other call with a
    text of its own ("Answer 17."), after `delay` seconds."""
    numbers = itertools.count(1)
    openai_stub.default = lambda body: plan_of(2) if request_schema(body) else f"Answer {next(numbers)}."
    return openai_stub


@contextmanager
def cluster(tmp_path, database_url: str, stub, names: list[str], **env: str) -> Iterator[dict[str, Replica]]:
    """Replicas started together, each asking the model under its own name."""
    with ExitStack() as stack:
        replicas = {}
        for name in names:
            replica = Replica(tmp_path, database_url, name, OPENAI_BASE_URL=stub.url_for(name),
                              OPENAI_API_KEY="test", MAX_CONCURRENT_ROUNDS="20", **env)
            stack.callback(replica.stop)
            replicas[name] = replica.start()
            if len(replicas) == 1:
                replica.wait_ready(180)  # the first one creates the schema
        for replica in replicas.values():
            replica.wait_ready(180)
        yield replicas


def start_rounds(replicas: list[Replica], count: int) -> dict[str, str]:
    """`count` rounds, the requests spread over `replicas` in turn: workflow id -> replica name."""
    started = {}
    for n, replica in zip(range(count), itertools.cycle(replicas)):
        with replica.client() as client:
            answer = client.post("/api/workflows/start", json={"prompt": f"Look at case {n}."})
        assert answer.status_code == 200, answer.text
        started[answer.json()["id"]] = replica.name
    return started


def wait_all_ended(client: httpx.Client, workflows, timeout: float = 120) -> None:
    def ended() -> bool:
        return all(client.get(f"/api/workflows/{w}/status").json()["status"] != "running" for w in workflows)

    wait_for(ended, timeout, "every round to end")


def everything(client: httpx.Client, workflows) -> dict[str, tuple[list[dict], list[dict]]]:
    """Each workflow's messages and logs, read from the start."""
    return {w: (client.get(f"/api/workflows/{w}/messages", params={"limit": 500}).json()["items"],
                client.get(f"/api/workflows/{w}/logs", params={"limit": 500}).json()["items"]) for w in workflows}


def assert_each_round_finished_once(client: httpx.Client, database_url: str, workflows) -> dict:
    """Every round completed, with each message and log exactly once, and DBOS ran each to its end once."""
    seen = everything(client, workflows)
    for wid, (messages, logs) in seen.items():
        assert client.get(f"/api/workflows/{wid}/status").json()["status"] == "completed", wid
        assert [m["status"] for m in messages] == ["first", "step", "step", "step", "last"], (wid, messages)
        texts = [entry["message"] for entry in logs]
        assert not [t for t, n in Counter(texts).items() if n > 1], (wid, texts)
        assert set(EXPECTED_LOGS) <= set(texts) and texts[-1] == "Workflow completed successfully", (wid, texts)
    rows = sql(database_url, "SELECT status, count(*) AS n FROM dbos.workflow_status GROUP BY status")
    assert {row["status"]: row["n"] for row in rows} == {"SUCCESS": len(workflows)}
    return seen


class Poller(threading.Thread):
    """A client polling every workflow's messages and logs by cursor on one replica, as a page would."""

    def __init__(self, replica: Replica, workflows) -> None:
        super().__init__(daemon=True)
        self.replica = replica
        self.seen: dict[str, dict[str, list[int]]] = {w: {"messages": [], "logs": []} for w in workflows}
        self.done = threading.Event()
        self.error: BaseException | None = None

    def run(self) -> None:
        cursors = {(w, kind): 0 for w in self.seen for kind in ("messages", "logs")}
        try:
            with self.replica.client() as client:
                while True:
                    last_pass = self.done.is_set()
                    for (wid, kind), cursor in cursors.items():
                        page = client.get(f"/api/workflows/{wid}/{kind}", params={"id": cursor}).json()
                        self.seen[wid][kind] += [item["id"] for item in page["items"]]
                        cursors[wid, kind] = page["lastId"]
                    if last_pass:
                        return
                    self.done.wait(0.05)  # a poller's pace, not a wait for state
        except BaseException as exc:  # reported by finish()
            self.error = exc

    def finish(self) -> dict[str, dict[str, list[int]]]:
        self.done.set()
        self.join(60)
        assert self.error is None, self.error
        return self.seen


def in_flight(records) -> int:
    return sum(1 for r in records if not r.answered_at)


def test_the_survivors_finish_every_round_of_a_killed_replica(tmp_path, postgres_url, model):
    model.delay = 1.0
    with cluster(tmp_path, postgres_url, model, ["r1", "r2", "r3"], HEARTBEAT_TIMEOUT_SECONDS=TIMEOUT) as rs:
        r1, r2, r3 = rs.values()
        started = start_rounds([r1, r1, r2, r3], 20)  # r1 gets half of them
        pollers = [Poller(r2, started), Poller(r3, started)]
        for poller in pollers:
            poller.start()
        # Mid-round: every round on r1 planned, and some of its tasks waiting for the model.
        wait_for(lambda: len(model.records_of("r1")) >= 12 and in_flight(model.records_of("r1")), 90,
                 "r1's rounds to be at their tasks")
        pending = sql(postgres_url, "SELECT executor_id, count(*) AS n FROM dbos.workflow_status "
                                    "WHERE status = 'PENDING' GROUP BY executor_id ORDER BY n DESC")
        assert pending[0]["executor_id"] == "r1"  # the replica running most rounds is the one killed
        r1.signal(signal.SIGKILL)

        with r2.client() as client:
            wait_all_ended(client, started)
            seen = assert_each_round_finished_once(client, postgres_url, started)
        for poller in pollers:
            polled = poller.finish()
            for wid, (messages, logs) in seen.items():
                assert polled[wid]["messages"] == [m["id"] for m in messages], wid
                assert polled[wid]["logs"] == [entry["id"] for entry in logs], wid
        takers = [r for r in (r2, r3) if "took over replica r1" in r.log()]
        assert len(takers) == 1, "exactly one replica recovers the killed one's rounds"


def test_a_paused_replica_that_comes_back_writes_nothing_of_the_rounds_taken_from_it(tmp_path, postgres_url,
                                                                                       model):
    model.delay = 1.5
    with cluster(tmp_path, postgres_url, model, ["r1", "r2"], HEARTBEAT_TIMEOUT_SECONDS=TIMEOUT) as rs:
        r1, r2 = rs.values()
        started = start_rounds([r2, r2, r1], 6)
        cases_of_r2 = [f"case {n}." for n, replica in enumerate(started.values()) if replica == "r2"]
        wait_for(lambda: len(model.records_of("r2")) >= 5 and in_flight(model.records_of("r2")), 90,
                 "r2's rounds to be at their tasks")
        paused_at = time.monotonic()
        r2.signal(signal.SIGSTOP)

        def retaken() -> bool:  # r1 asks the model again for one of r2's rounds, and is still waiting
            return any(not r.answered_at and any(case in str(r.body) for case in cases_of_r2)
                       for r in model.records_of("r1"))

        wait_for(retaken, 60, "r1 to take r2's rounds over")
        # r2 comes back while r1 runs its rounds: r2 holds answers to the same tasks, and may try to write them first.
        r2.signal(signal.SIGCONT)
        stale = [r for r in model.records_of("r2") if r.answered_at > paused_at]
        assert stale, "r2 had model answers waiting when it was paused"
        wait_for(lambda: "its rounds were taken over" in r2.log(), 60, "r2 to notice it was taken over")
        with r1.client() as client:
            wait_all_ended(client, started)
            seen = assert_each_round_finished_once(client, postgres_url, started)
        assert "took over replica r2" in r1.log()
        texts = [m["content"] for messages, _ in seen.values() for m in messages]
        assert not [r.text for r in stale if any(r.text in text for text in texts)], \
            "an answer r2 received after it was paused was written"
        wait_for(lambda: sql(postgres_url, "SELECT state FROM replicas WHERE executor_id = 'r2'")[0]["state"]
                 == "alive", 30, "r2 to beat again as a live replica")


def planning(record) -> bool:
    return request_schema(record.body) is not None


def test_sigterm_hands_the_rounds_over_at_once_whatever_their_steps_wait_for(tmp_path, postgres_url, model):
    # r2's tasks wait for the model as long as r2 runs, and r2 may let running steps finish for an hour:
    # only a handover that waits for no step moves r2's rounds to r1 within the test.
    model.hold_when = lambda record: record.path.startswith("/r2/") and not planning(record)
    with cluster(tmp_path, postgres_url, model, ["r1", "r2"], HEARTBEAT_TIMEOUT_SECONDS="3600",
                 SHUTDOWN_GRACE_SECONDS="3600") as rs:
        r1, r2 = rs.values()
        started = start_rounds([r2, r2, r2, r1], 4)
        wait_for(lambda: len([r for r in model.records_of("r2") if not planning(r)]) >= 6, 90,
                 "r2's three rounds planned and their tasks waiting for the model")
        r2.signal(signal.SIGTERM)
        with r1.client() as client:
            wait_all_ended(client, started)
            assert_each_round_finished_once(client, postgres_url, started)
        wait_for(lambda: r2.process.poll() is not None, 60, "r2 to exit")
        assert "handing 3 round(s) over at once" in r2.log()
        assert "took over replica r2" in r1.log()
        # A step r2 finished stays finished: r1 planned none of r2's rounds again.
        assert len([r for r in model.records if planning(r)]) == len(started)
        # The steps r2 had under way were cut (their calls hung up) and ran on r1, once each.
        cut = [r for r in model.records_of("r2") if not planning(r)]
        assert len(cut) == 6 and all(r.disconnected for r in cut)
        assert len([r for r in model.records_of("r1") if not planning(r)]) == 3 * len(started)


def test_sigterm_of_the_last_replica_lets_its_running_steps_finish_first(tmp_path, postgres_url, model):
    model.hold_when = lambda record: not planning(record)  # every task waits until the test releases it
    with cluster(tmp_path, postgres_url, model, ["r1"], HEARTBEAT_TIMEOUT_SECONDS="3600",
                 SHUTDOWN_GRACE_SECONDS="3600") as rs:
        r1 = rs["r1"]
        started = start_rounds([r1], 2)
        wait_for(lambda: len([r for r in model.records if not planning(r)]) >= 4, 90,
                 "both rounds' tasks waiting for the model")
        r1.signal(signal.SIGTERM)
        with r1.client() as draining:  # no one to hand to: it waits for its running steps, and starts nothing new
            wait_for(lambda: draining.get("/ready").status_code == 503, 30, "r1 to say it is not ready")
            refused = draining.post("/api/workflows/start", json={"prompt": "One more."})
        assert refused.status_code == 503 and refused.json()["code"] == "shutting_down", refused.text
        model.release()
        wait_for(lambda: r1.process.poll() is not None, 60, "r1 to exit")
        assert "running steps finished; handing 2 round(s) over" in r1.log()
        r1.start().wait_ready(180)  # the same replica again: it resumes its own rounds
        with r1.client() as client:
            wait_all_ended(client, started)
            assert_each_round_finished_once(client, postgres_url, started)
        # Each step ran once: the tasks finished while r1 stopped; after the restart only the finals ran.
        assert len([r for r in model.records if planning(r)]) == len(started)
        assert len([r for r in model.records if not planning(r)]) == 3 * len(started)
