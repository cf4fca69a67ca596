"""Memory after many rounds for one user (issue 50, item 14): resident memory of the service and of
each process under it (extraction and text workers) as rounds add up.

    python bench/round_memory.py [--rounds 200] [--per-conversation 10]

Starts `python -m app` (SQLite, offline model) on 127.0.0.1 with a fresh data directory, uploads
corpus documents of several formats, then runs `--rounds` rounds one after another, a new
conversation every `--per-conversation` rounds (each with a fresh upload of one document, so
extraction and embedding run too), with requests that rotate over questions, summaries, tables
and follow-ups. Prints the resident memory (VmRSS) of the service and of its processes, and their
sum, after the first round and every 25 rounds, then the growth of the sum from round 25 to the last
(what the warm-ups load is in round 1's figure; what grows after is what the rounds keep).
"""

from __future__ import annotations

import argparse
import tempfile
import time

import httpx
from common import free_port, process_tree, service
from conversation_cost import CORPUS, one_round, settle

DOCUMENTS = ("ideas-page.html", "google-doc-document.pdf", "stanley-cups.tsv", "testEXCEL.xlsx",
             "testWORD.docx", "sample-french-1.txt", "powerpoint_sample.pptx", "tracemonkey.pdf")
PROMPTS = (
    "Summarise the document.",
    "What is the most important point?",
    "Which row has the highest value?",
    "And what does it say about the dates?",
    "Extract the tables as Excel.",
    "Wie viele Einträge gibt es?",
    "Quelle est la conclusion ?",
    "Where is the best place to look for anomalies?",
    "Write a short report as Word.",
    "continue",
)


def rss_kib(pid: int) -> int:
    """VmRSS of one process in KiB (0 when it ended)."""
    try:
        with open(f"/proc/{pid}/status") as status:
            return next((int(line.split()[1]) for line in status if line.startswith("VmRSS:")), 0)
    except OSError:
        return 0



def report(n: int, pid: int) -> int:
    """One line: the service's RSS, each child's, the sum (MiB); the sum in KiB is returned."""
    sizes = [(p, rss_kib(p)) for p in process_tree(pid)]
    total = sum(s for _, s in sizes)
    children = " ".join(f"{s / 1024:.0f}" for p, s in sizes[1:] if s)
    print(f"round {n:4d}: service {sizes[0][1] / 1024:6.0f} MiB, processes [{children}] MiB, "
          f"sum {total / 1024:6.0f} MiB", flush=True)
    return total


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rounds", type=int, default=200)
    parser.add_argument("--per-conversation", type=int, default=10)
    args = parser.parse_args()
    pids: list[int] = []
    sums: dict[int, int] = {}
    with tempfile.TemporaryDirectory() as tmp, service(tmp, free_port(), pids=pids, ready_within=300) as base, \
            httpx.Client(base_url=base, timeout=120) as client:
        sums[0] = report(0, pids[0])
        wid: str | None = None
        for n in range(args.rounds):
            files: list[int] = []
            if n % args.per_conversation == 0:
                wid = None
                name = DOCUMENTS[(n // args.per_conversation) % len(DOCUMENTS)]
                upload = client.post("/api/files", files=[("files", (name, (CORPUS / name).read_bytes()))])
                upload.raise_for_status()
                files = [f["id"] for f in upload.json()]
            try:
                wid = one_round(client, wid, PROMPTS[n % len(PROMPTS)], files)
            except SystemExit as ended:  # a round that failed is still a round the service kept
                print(f"round {n + 1}: {ended}", flush=True)
            if n == 0 or (n + 1) % 25 == 0:
                time.sleep(0.5)
                settle(pids[0])  # background work (embedding an upload) done: what stays, not what runs
                sums[n + 1] = report(n + 1, pids[0])
    first = min((k for k in sums if k >= 25), default=1)
    last = max(sums)
    print(f"sum after round 1: {sums[1] / 1024:.0f} MiB; round {first} -> {last}: "
          f"{sums[first] / 1024:.0f} -> {sums[last] / 1024:.0f} MiB "
          f"({(sums[last] - sums[first]) / 1024 / max(1, last - first) * 1000:.0f} KiB per round)")


if __name__ == "__main__":
    main()
