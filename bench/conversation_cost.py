"""Conversation cost: does a round get dearer as its workflow's conversation grows?

    python bench/conversation_cost.py [--rounds 120] [--against OTHER_CHECKOUT]

Starts `python -m app` (SQLite, offline model) on 127.0.0.1 with a fresh data directory, uploads
two corpus documents, then runs `--rounds` rounds one after another in ONE workflow through the
REST API, each waited to its end on the workflow's event stream (after the first, until the server is
idle: embedding the uploads is not a round's cost), with requests that rotate over a cycle of eight
questions, summaries and follow-ups about those documents. Each round's server CPU is counted from /proc:
the server and every process under it (extraction and text workers), living or reaped.

Two meters, printed side by side. `ticks`: utime + stime (+ cutime + cstime) from /proc/<pid>/stat, in
10 ms clock ticks per process, coarse against a round of ~150 ms. `ns`: the nanoseconds each thread of
each living process ran (/proc/<pid>/task/*/schedstat), plus the reaped children's cutime + cstime in
ticks (the workers live as long as the server, so that part is rarely anything); a thread that ended
between the two readings of a round takes with it what it ran since the first (their number is printed).

Rounds compare like with like only over whole cycles of the eight requests (round n asks prompt (n-1) % 8 + 1:
one request costs up to twice another), so the target is read on cycles: the mean CPU per round of
the second and third cycles (rounds 9-24, the first cycle reads the uploads) against the last two whole
cycles (with 120 rounds: 105-120), and each request's own ratio (median of its late rounds over its early
ones). The earlier windows (median of rounds 3-7, which ask prompts 3-7, against rounds 116-120, which
ask prompts 4-8; issue 32's target: within 1.2x) are printed beside them, in both meters.

With `--against OTHER_CHECKOUT` (e.g. a `git worktree add --detach` of the commit before a change) that
tree's server runs beside this one, each with its own workflow, the rounds interleaved (round n on one and
then on the other, the order alternating), so both meet the same load on a shared machine.
"""

from __future__ import annotations

import argparse
import json
import os
import tempfile
import time
from collections.abc import Callable
from contextlib import ExitStack
from dataclasses import dataclass, field
from pathlib import Path

import httpx
from common import CORPUS, ROOT, free_port, median, service

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
CYCLE = len(PROMPTS)


@dataclass
class Meter:
    """Reads the CPU of a process tree both ways; counts the threads that ended between two readings."""

    pid: int
    threads: set[tuple[int, int]] = field(default_factory=set)
    lost: int = 0  # threads seen at one reading and gone at the next

    def read(self) -> tuple[float, float]:
        """(ticks, ns): CPU seconds of `pid` and every process under it, by /proc/<pid>/stat's clock ticks
        and by the threads' schedstat nanoseconds (each with the children its processes reaped)."""
        ticks, ns, todo, seen = 0, 0, [self.pid], set()
        while todo:
            p = todo.pop()
            try:
                with open(f"/proc/{p}/stat") as stat:
                    fields = stat.read().rsplit(")", 1)[1].split()
                ticks += sum(int(f) for f in fields[11:15])  # utime, stime, cutime, cstime
                ns += sum(int(f) for f in fields[13:15]) * TICK * 1e9  # reaped children: only in ticks
                for tid in os.listdir(f"/proc/{p}/task"):
                    try:
                        with open(f"/proc/{p}/task/{tid}/schedstat") as f:
                            ns += int(f.read().split()[0])
                        seen.add((p, int(tid)))
                        with open(f"/proc/{p}/task/{tid}/children") as f:
                            todo.extend(int(c) for c in f.read().split())
                    except OSError:  # the thread ended meanwhile
                        pass
            except OSError:  # the process ended meanwhile
                pass
        self.lost += len(self.threads - seen)
        self.threads = seen
        return ticks * TICK, ns / 1e9


def tree_cpu(pid: int) -> float:
    """CPU seconds of `pid` and every process under it (schedstat nanoseconds, `Meter`)."""
    return Meter(pid).read()[1]


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


@dataclass
class Conversation:
    """One server's workflow and what each of its rounds cost."""

    client: httpx.Client
    meter: Meter
    files: list[int]
    workflow_id: str | None = None
    ticks: list[float] = field(default_factory=list)
    spent: list[float] = field(default_factory=list)

    def round(self, n: int) -> None:
        """Round n + 1 of the conversation, metered."""
        time.sleep(0.2)  # what the previous round left (its last writes) settles before the meter starts
        before = self.meter.read()
        self.workflow_id = one_round(self.client, self.workflow_id, PROMPTS[n % CYCLE], self.files if n == 0 else [])
        if n == 0:
            settle(self.meter.pid)
        time.sleep(0.2)
        after = self.meter.read()
        self.ticks.append((after[0] - before[0]) * 1000)
        self.spent.append((after[1] - before[1]) * 1000)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rounds", type=int, default=120)
    parser.add_argument("--against", type=Path, help="another checkout, served beside this one, its rounds "
                        "interleaved with this tree's (each round on one, then on the other, the order alternating)")
    args = parser.parse_args()
    roots = [ROOT] + ([args.against.resolve()] if args.against else [])
    with ExitStack() as stack:
        talks = []
        for root in roots:
            pids: list[int] = []
            tmp = stack.enter_context(tempfile.TemporaryDirectory())
            base = stack.enter_context(service(tmp, free_port(), root=root, pids=pids, ready_within=300))
            client = stack.enter_context(httpx.Client(base_url=base, timeout=120))
            uploads = client.post("/api/files", files=[("files", (name, (CORPUS / name).read_bytes()))
                                                       for name in DOCUMENTS])
            uploads.raise_for_status()
            talks.append(Conversation(client, Meter(pids[0]), [f["id"] for f in uploads.json()]))
        for n in range(args.rounds):
            for talk in talks[::-1] if n % 2 else talks:
                talk.round(n)
            if (n + 1) % 10 == 0:
                print(f"round {n + 1}: " + ", ".join(f"{t.spent[-1]:.0f}" for t in talks) + " ms CPU", flush=True)
    for root, talk in zip(roots, talks, strict=True):
        print(f"\n{root}:")
        report(talk.ticks, talk.spent, talk.meter.lost)


def report(ticks: list[float], spent: list[float], lost: int) -> None:
    """The windows and their ratios, both meters (ms per round)."""
    print(f"server CPU per round (ms, incl. workers), one workflow of {len(spent)} rounds "
          f"(threads that ended mid-round: {lost}):")
    print(f"  {'':34}{'ns (schedstat)':>22}{'ticks (stat, 10 ms)':>24}")
    last = len(spent) // CYCLE * CYCLE  # the end of the last whole cycle
    early, late = slice(CYCLE, 3 * CYCLE), slice(max(3 * CYCLE, last - 2 * CYCLE), last)

    def line(label: str, window: slice, of: Callable[[list[float]], float], base: slice | None = None) -> str:
        cells = []
        for values in (spent, ticks):
            value = of(values[window]) if values[window] else float("nan")
            ratio = f" ({value / of(values[base]):.2f}x)" if base is not None and values[window] else ""
            cells.append(f"{value:7.1f}{ratio:8}")
        return f"  {label:34}{cells[0]:>22}{cells[1]:>24}"

    mean = lambda values: sum(values) / len(values)  # noqa: E731
    print(line(f"rounds {early.start + 1}-{early.stop} mean (2 cycles)", early, mean))
    print(line(f"rounds {late.start + 1}-{late.stop} mean (2 cycles)", late, mean, early)
          + "  target <= 1.2x")
    for p, prompt in enumerate(PROMPTS):
        mine = lambda window: slice(window.start + p, window.stop, CYCLE)  # noqa: E731
        e = [v for v in spent[mine(early)]]
        lt = [v for v in spent[mine(late)]]
        if e and lt:
            print(f"    prompt {p + 1} {median(e):6.1f} -> {median(lt):6.1f} ms ({median(lt) / median(e):.2f}x)  {prompt}")
    old, mid, end = slice(2, 7), slice(57, 62), slice(len(spent) - 5, len(spent))
    asked = sorted({n % CYCLE + 1 for n in range(end.start, end.stop)})
    print(f"  the earlier windows (not like with like: rounds 3-7 ask prompts 3-7, rounds {end.start + 1}-{end.stop} "
          f"prompts {', '.join(map(str, asked))}):")
    print(line("rounds 3-7 median", old, median))
    if len(spent) >= 62:
        print(line("rounds 58-62 median", mid, median, old))
    print(line(f"rounds {end.start + 1}-{end.stop} median", end, median, old) + "  issue 32's target <= 1.2x")

if __name__ == "__main__":
    main()
