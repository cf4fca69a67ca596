"""Conversation cost: does a round get dearer as its workflow's conversation grows?

    python bench/conversation_cost.py [--rounds 120]

Starts `python -m app` (SQLite, offline model) on 127.0.0.1 with a fresh data directory, uploads
two corpus documents, then runs `--rounds` rounds one after another in ONE workflow through the
REST API, each waited to its end on the workflow's event stream (after the first, until the server is
idle: embedding the uploads is not a round's cost), with requests that rotate over questions, summaries and
follow-ups about those documents. Each round's server CPU is counted from /proc: the server and
every process under it (extraction and text workers), living or reaped. Prints the median CPU of
rounds 3-7, of round 60's neighbourhood (58-62) and of the last five rounds, and their ratios
(issue 32's target: the last five within 1.2x of rounds 3-7).
"""

from __future__ import annotations

import argparse
import json
import os
import tempfile
import time
from pathlib import Path

import httpx
from common import CORPUS, free_port, median, service

DOCUMENTS = ("ideas-page.html", "google-doc-document.pdf")
PROMPTS = (
    "Summarise ideas-page.html.",
    "Where is the best place to look for anomalies?",
    "What should errors never do?",
    "How does knowledge grow?",
    "Summarise google-doc-document.pdf in three sentences.",
    "Is explicit better than implicit?",
    "And what does it say about namespaces?",
    "What does the ideas page say about essays?",
)
CORPUS = Path(os.environ.get("FOREMAN_CORPUS") or CORPUS)  # a worktree has no ../shared beside it
TICK = 1 / os.sysconf("SC_CLK_TCK")


def tree_cpu(pid: int) -> float:
    """CPU seconds of `pid` and every process under it: their own and that of children they reaped."""
    total, todo = 0, [pid]
    while todo:
        p = todo.pop()
        try:
            with open(f"/proc/{p}/stat") as stat:
                fields = stat.read().rsplit(")", 1)[1].split()
            total += sum(int(f) for f in fields[11:15])  # utime, stime, cutime, cstime
            for tid in os.listdir(f"/proc/{p}/task"):
                with open(f"/proc/{p}/task/{tid}/children") as f:
                    todo.extend(int(c) for c in f.read().split())
        except OSError:  # ended meanwhile
            pass
    return total * TICK


def settle(pid: int, timeout: float = 900) -> None:
    """Wait until the server is idle (under 20 ms of CPU in a second): the upload's background work (its
    passages embedded for hybrid search, once per file) is not a round's cost."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        before = tree_cpu(pid)
        time.sleep(1)
        if tree_cpu(pid) - before < 0.02:
            return
    raise SystemExit("the server did not settle")


def one_round(client: httpx.Client, workflow_id: str | None, prompt: str, files: list[int]) -> str:
    """Start a round and wait for its end on the workflow's event stream: one request however long the
    round takes (polling would add server CPU in proportion to the round's wall time on a busy machine)."""
    params = {}
    if workflow_id:
        status = client.get(f"/api/workflows/{workflow_id}/status").json()
        params = {"messageId": status["lastMessageId"], "logId": status["lastLogId"]}
    answer = client.post("/api/workflows/start" + (f"?id={workflow_id}" if workflow_id else ""),
                         json={"prompt": prompt, "listFileId": files})
    answer.raise_for_status()
    wid = answer.json()["id"]
    with client.stream("GET", f"/api/workflows/{wid}/events", params=params,
                       timeout=httpx.Timeout(30, read=300)) as events:
        kind = ""
        for line in events.iter_lines():
            if line.startswith("event:"):
                kind = line[6:].strip()
            elif line.startswith("data:") and kind == "status":
                status = json.loads(line[5:])["status"]
                if status != "running":
                    if status != "completed":
                        raise SystemExit(f"round ended {status}")
                    return wid
    raise SystemExit("the event stream ended before the round")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rounds", type=int, default=120)
    args = parser.parse_args()
    pids: list[int] = []
    spent: list[float] = []
    with tempfile.TemporaryDirectory() as tmp, service(tmp, free_port(), pids=pids, ready_within=300) as base, \
            httpx.Client(base_url=base, timeout=120) as client:
        uploads = client.post("/api/files", files=[("files", (name, (CORPUS / name).read_bytes()))
                                                   for name in DOCUMENTS])
        uploads.raise_for_status()
        files = [f["id"] for f in uploads.json()]
        wid = None
        for n in range(args.rounds):
            time.sleep(0.2)  # what the previous round left (its last writes) settles before the meter starts
            before = tree_cpu(pids[0])
            wid = one_round(client, wid, PROMPTS[n % len(PROMPTS)], files if n == 0 else [])
            if n == 0:
                settle(pids[0])
            time.sleep(0.2)
            spent.append((tree_cpu(pids[0]) - before) * 1000)
            if (n + 1) % 10 == 0:
                print(f"round {n + 1}: {spent[-1]:.0f} ms CPU", flush=True)
    early = median(spent[2:7])
    middle = median(spent[57:62]) if len(spent) >= 62 else float("nan")
    late = median(spent[-5:])
    print(f"server CPU per round (ms, incl. workers), one workflow of {len(spent)} rounds:")
    print(f"  rounds 3-7 median      {early:7.1f}")
    print(f"  rounds 58-62 median    {middle:7.1f}  ({middle / early:.2f}x)")
    print(f"  rounds {len(spent) - 4}-{len(spent)} median {late:7.1f}  ({late / early:.2f}x; target <= 1.2x)")


if __name__ == "__main__":
    main()
