"""Live text: what streaming the model's words costs and how late they arrive.

    python -m bench.live_text [--rounds 20] [--postgres URL] [--before COMMIT]

1. Delay added per token: a streaming stub writing 50 tokens/s (4-character pieces, 20 ms
   apart), ROUNDS rounds at once on one SQLite server process, one event-stream reader per
   round; for each piece, the time from the stub writing it to the reader having it (median,
   p99). Targets: median < 10 ms, p99 < 50 ms. With --postgres, the same on a fresh database of
   that server with two replicas: the rounds run on A, their streams are read from B (target
   p99 < 150 ms).
2. Time to the first visible word of the manager's answer (POST start to its first delta) over
   the time to the answer field's first token on a direct streamed call to the same stub (which
   takes 1 s to answer, as a model does). Target: ratio < 1.2.
3. Server CPU per streamed token: a 4-task round streaming about 2,000 tokens, this tree against
   the tree before live text (commit BEFORE, checked out by git archive), both served at once,
   their rounds taking turns, each with one stream reader. Target: ratio < 1.3.
All figures come from one run of this script; they print, nothing asserts.
"""

from __future__ import annotations

import argparse
import itertools
import json
import os
import re
import statistics
import subprocess
import tempfile
import threading
import time
from contextlib import contextmanager
from pathlib import Path

import httpx

from tests.harness import ROOT, Replica, backend_url, plan_of
from tests.openai_stub import OpenAIStub, Pace, request_schema

ANSWER = "I will write the notes you asked for, one for each part."
ENGLISH = "the team wrote this note about the work that was done and what comes next for all of us".split()


def _plan(n: int) -> str:
    plan = plan_of(n, agent="writer")
    plan["objUserResponse"] = ANSWER
    return json.dumps(plan)


def _english(words: int) -> str:
    """Prose in English, asked for by prompts in plain English: every agent's result is checked for
    the user's language and written again when it is not, so made-up words (or a prompt like
    "Note 3.", which the detector takes for Swahili) get each task written twice, its first draft
    discarded and its message arriving whole: seconds of delay that are the check's, not the stream's."""
    return " ".join(ENGLISH[n % len(ENGLISH)] for n in range(words)) + "."


def _read(url: str, received: dict[str, list[tuple[float, int]]], done: threading.Event,
          first: list[float]) -> None:
    """Read a stream: per draft, (time, characters had) at each delta; until the round ends."""
    have: dict[str, int] = {}
    with httpx.Client(timeout=httpx.Timeout(60, read=120)) as client, client.stream("GET", url) as response:
        received["connected"] = time.monotonic()  # type: ignore[assignment]
        name = ""
        for line in response.iter_lines():
            if line.startswith("event:"):
                name = line[6:].strip()
            elif line.startswith("data:"):
                data = json.loads(line[5:])
                now = time.monotonic()
                if name == "delta":
                    if not first:
                        first.append(now)
                    have[data["messageId"]] = data["offset"] + len(data["text"])
                    received.setdefault(data["messageId"], []).append((now, have[data["messageId"]]))
                elif name == "message" and data.get("metadata", {}).get("draftId"):
                    received.setdefault("content:" + data["metadata"]["draftId"], []).append((0.0, 0))
                    received["text:" + data["metadata"]["draftId"]] = data["content"]  # type: ignore[assignment]
                elif name == "status" and data["status"] != "running":
                    break
    done.set()


def _server(tmp: Path, stub: OpenAIStub | None, name: str, cwd: Path | None = None, database_url: str = "",
            **env: str) -> Replica:
    """A server process on `database_url` ('' for SQLite) with `stub` as its model (none: offline),
    from the checkout `cwd` (default: this one)."""
    model = {"OPENAI_BASE_URL": stub.base_url, "OPENAI_API_KEY": "bench"} if stub else {}
    tmp.mkdir(parents=True, exist_ok=True)
    replica = Replica(tmp, database_url, name, MAX_CONCURRENT_ROUNDS="40", **model, **env)
    if cwd is not None:  # the same process from another checkout
        import app.config  # noqa: F401
        import tests.harness as harness
        root = harness.ROOT
        harness.ROOT = cwd
        try:
            replica.start()
        finally:
            harness.ROOT = root
    else:
        replica.start()
    return replica.wait_ready(timeout=300)


def delays(tmp: Path, rounds: int, database_url: str = "") -> None:
    """Rounds run by one server; their streams read from the same one (SQLite) or, on PostgreSQL,
    from a second replica that gets the deltas in batches over NOTIFY."""
    with OpenAIStub() as stub:
        answers = itertools.count(1)  # each answer its own text, to find it in the stream
        stub.default = lambda body: _plan(1) if request_schema(body) else f"Note {next(answers)}: " + _english(60)
        stub.pace = Pace(chars=4, delay=0.02)
        server = _server(tmp, stub, "delays", database_url=database_url)
        reader = _server(tmp, None, "reader", database_url=database_url) if database_url else server
        try:
            streams = []
            with server.client() as client:
                for n in range(rounds):  # each round's reader starts as soon as its round is
                    wid = client.post("/api/workflows/start", json={"prompt": f"Please write note {n} about our work."}).json()["id"]
                    received: dict = {}
                    done = threading.Event()
                    threading.Thread(target=_read, args=(f"{reader.url}/api/workflows/{wid}/events", received,
                                                         done, []), daemon=True).start()
                    streams.append((received, done))
            for _, done in streams:
                done.wait(300)
            lags = []
            records = [r for r in stub.records if r.pieces and not r.text.startswith("{")]
            for received, _ in streams:
                for key, content in [(k, v) for k, v in received.items() if k.startswith("text:")]:
                    draft = received.get(key[5:], [])
                    for record in records:
                        base = content.find(record.text.strip())
                        if base < 0 or not draft:
                            continue
                        for sent, chars in record.pieces:
                            if sent < received["connected"]:
                                continue  # written before the reader was there: not a delay of ours
                            want = base + min(chars, len(record.text.rstrip()))
                            got = next((t for t, n in draft if n >= want), None)
                            if got is not None:
                                lags.append((got - sent) * 1000)
                        break
            lags.sort()
            where, target = ("PostgreSQL, written on A, read on B", "< 150") if database_url else ("SQLite", "< 50")
            print(f"delay per token, {rounds} rounds at 50 tokens/s, {where}: median {statistics.median(lags):.1f} ms, "
                  f"p99 {lags[int(len(lags) * 0.99) - 1]:.1f} ms over {len(lags)} pieces (targets < 10, {target})")
        finally:
            server.stop()
            reader.stop()


def first_word(tmp: Path) -> None:
    with OpenAIStub() as stub:
        stub.default = lambda body: _plan(0) if request_schema(body) else "Fine."
        stub.delay = 1.0  # a model's time to its first token
        stub.pace = Pace(chars=4, delay=0.02)
        server = _server(tmp, stub, "first")
        try:
            direct = []
            for _ in range(3):
                t0 = time.monotonic()
                with httpx.Client(timeout=60) as client, client.stream("POST", f"{stub.base_url}/chat/completions", json={
                        "model": "m", "stream": True, "messages": [{"role": "user", "content": "hi"}],
                        "response_format": {"type": "json_schema", "json_schema": {"name": "plan", "schema": {
                            "type": "object", "properties": {"objUserResponse": {"type": "string"}}}}}}) as r:
                    text = ""
                    for line in r.iter_lines():
                        if line.startswith("data: {"):
                            text += "".join((c.get("delta") or {}).get("content") or ""
                                            for c in json.loads(line[6:])["choices"])
                            if re.search(r'"objUserResponse":\s*"[^"]', text):
                                direct.append(time.monotonic() - t0)
                                break
            through = []
            with server.client() as client:
                for n in range(3):
                    received: dict = {}
                    first: list[float] = []
                    done = threading.Event()
                    t0 = time.monotonic()
                    wid = client.post("/api/workflows/start", json={"prompt": f"Question {n}?"}).json()["id"]
                    _read(f"{server.url}/api/workflows/{wid}/events", received, done, first)
                    through.append(first[0] - t0)
            d, f = statistics.median(direct), statistics.median(through)
            print(f"first visible word: {f * 1000:.0f} ms through Foreman vs {d * 1000:.0f} ms on a direct call "
                  f"to the stub: ratio {f / d:.2f} (target < 1.2)")
        finally:
            server.stop()


def _cpu(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / 100.0  # utime + stime, in clock ticks of 10 ms


BEFORE = "1358b9d^"  # the last commit before live text


def _checkout(ref: str, into: Path) -> Path:
    """The tree of commit `ref` as plain files in `into` (git archive: no worktree is registered)."""
    into.mkdir(parents=True)
    archive = subprocess.run(["git", "-C", str(ROOT), "archive", "--format=tar", ref], check=True,
                             capture_output=True).stdout
    subprocess.run(["tar", "-x", "-C", str(into)], input=archive, check=True)
    return into


def cpu(tmp: Path, rounds: int = 6, before: str = BEFORE, embeddings: bool = False) -> None:
    """Both trees served at once from the same stub; their rounds take turns, one at a time, so the
    machine's load falls on both alike. The tree before live text had no passage embeddings: they
    are off in both unless `embeddings` (then this tree also embeds the documents its writers
    deliver, in the background, which is retrieval's cost, not the stream's)."""
    env = {} if embeddings else {"EMBEDDINGS": "off"}
    with OpenAIStub() as stub:
        stub.default = lambda body: _plan(4) if request_schema(body) else _english(260)
        stub.pace = Pace(chars=4, delay=0.0)
        servers = {f"before live text ({before})": _server(tmp / "old", stub, "cpu-old",
                                                           cwd=_checkout(before, tmp / "old-tree"), **env),
                   "live text (this tree)": _server(tmp / "new", stub, "cpu-new", **env)}
        try:
            spent = dict.fromkeys(servers, 0.0)
            chars = dict.fromkeys(servers, 0)
            for n in range(rounds):
                for label, server in servers.items():
                    assert server.process is not None
                    had, cpu_before = len(stub.records), _cpu(server.process.pid)
                    with server.client() as client:
                        wid = client.post("/api/workflows/start",
                                          json={"prompt": f"Please write the notes of part {n} of our work."}).json()["id"]
                    _read(f"{server.url}/api/workflows/{wid}/events", {}, threading.Event(), [])
                    time.sleep(0.2)  # the round's last writes after its status event
                    spent[label] += _cpu(server.process.pid) - cpu_before
                    chars[label] += sum(len(r.text) for r in stub.records[had:])
            for label in servers:
                print(f"{label}: {spent[label] / rounds * 1000:.0f} ms CPU per 4-task round, "
                      f"~{chars[label] / 4 / rounds:.0f} tokens streamed per round")
            old, new = servers
            print(f"CPU ratio live text / before: {spent[new] / spent[old]:.2f} (target < 1.3), "
                  f"embeddings {'on' if embeddings else 'off'}")
        finally:
            for server in servers.values():
                server.stop()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=20)
    parser.add_argument("--only", choices=["delays", "first", "cpu"])
    parser.add_argument("--postgres", metavar="URL", default="",
                        help="also measure the delay across two replicas on a fresh database of this "
                             "PostgreSQL server (e.g. postgresql+asyncpg://postgres@127.0.0.1:5432/postgres)")
    parser.add_argument("--before", default=BEFORE, help="the commit to compare the CPU with (default: %(default)s)")
    parser.add_argument("--embeddings", action="store_true", help="CPU: with passage embeddings on in this tree")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        if args.only in (None, "delays"):
            delays(Path(tmp) / "sqlite", args.rounds)
            if args.postgres:
                os.environ["FOREMAN_TEST_PG_URL"] = args.postgres
                import tests.harness as harness
                harness.PG_URL = args.postgres
                with contextmanager(backend_url)("postgres") as database_url:
                    delays(Path(tmp) / "postgres", args.rounds, database_url)
        if args.only in (None, "first"):
            first_word(Path(tmp))
        if args.only in (None, "cpu"):
            cpu(Path(tmp), before=args.before, embeddings=args.embeddings)


if __name__ == "__main__":
    main()
