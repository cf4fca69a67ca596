"""Re-planning on the question set: of the rounds that end with a missing delivery when no revision is
allowed (MAX_REPLANS=0), how many deliver when the manager may revise the plan (MAX_REPLANS=2).

    python bench/replanning.py [--base-url http://127.0.0.1:PORT/v1 --model NAME] [--limit N]

The tuning question set of tests/question_set.py (groups of four documents, one question a round, the
rounds of a group in one conversation) over HTTP on a live server (SQLite), twice in one run: once
with MAX_REPLANS=0, once with MAX_REPLANS=2. The offline model by default; `--base-url` points both
runs at an OpenAI-compatible server instead (e.g. the Qwen 0.5B of tests/realmodel.py; slow).

A round "misses a delivery" when a task of it failed or was skipped and no later task of the round
(a revision's) delivered in its place: read from the round's messages (`metadata.failed`,
`metadata.skipped`, `metadata.revision`). Prints, per run, the rounds, the rounds with a task that
failed or was skipped, the rounds that miss a delivery, and the revisions written; then how many of
the rounds that missed a delivery without re-planning deliver with it. Held-out questions are not used.
"""

from __future__ import annotations

import argparse
import logging
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tests.harness import LiveServer, settings_for, upload, wait_status  # noqa: E402
from tests.question_set import GROUPS, QUESTIONS  # noqa: E402


@dataclass
class Run:
    """What one configuration's rounds did, by question."""

    broken: set[str] = field(default_factory=set)  # a task failed or was skipped
    missing: set[str] = field(default_factory=set)  # ... and nothing delivered in its place
    revisions: int = 0
    rounds: int = 0


def round_messages(client, wid: str) -> list[dict]:
    items = client.get(f"/api/workflows/{wid}/messages").json()["items"]
    last = max(m["round"] for m in items)
    return [m for m in items if m["round"] == last]


def account(messages: list[dict]) -> tuple[bool, bool, int]:
    """(a task failed or was skipped, a delivery is missing, revisions) of one round's messages."""
    meta = [m.get("metadata") or {} for m in messages]
    revisions = sum(1 for m in meta if "revision" in m)
    broken = [m["taskId"] for m in meta if m.get("taskId") and (m.get("failed") or m.get("skipped"))]
    if not broken:
        return False, False, revisions
    # A revision names the tasks it adds in place of what failed; a round delivers when each of them did.
    added = [t for m in meta if "revision" in m for t in m["revision"].get("added", [])]
    delivered = {m["taskId"] for m in meta if m.get("taskId") and not m.get("failed") and not m.get("skipped")
                 and not m.get("question") and not m.get("undelivered")}
    repaired = bool(added) and all(t in delivered for t in added)
    return True, not repaired, revisions


def run(replans: int, base_url: str, model: str, limit: int) -> Run:
    result = Run()
    extra = dict(openai_base_url=base_url, openai_api_key="none", llm_model=model, llm_timeout_seconds=600,
                 max_round_seconds=3600) if base_url else {}
    with tempfile.TemporaryDirectory() as tmp, \
            LiveServer(settings_for(Path(tmp), max_replans=replans, **extra)) as server, server.client() as client:
        asked = 0
        for group, names in GROUPS.items():
            ids = [f["id"] for f in upload(client, *names)]
            wid = None
            for q in (q for q in QUESTIONS if q.group == group):
                if limit and asked >= limit:
                    return result
                asked += 1
                response = client.post("/api/workflows/start", params={"id": wid} if wid else None,
                                       json={"prompt": q.question, "listFileId": [] if wid else ids})
                assert response.status_code == 200, response.text
                wid = response.json()["id"]
                wait_status(client, wid, "completed", "failed", "stopped", timeout=3600)
                broken, missing, revisions = account(round_messages(client, wid))
                result.rounds += 1
                result.revisions += revisions
                if broken:
                    result.broken.add(q.question)
                if missing:
                    result.missing.add(q.question)
    return result


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--base-url", default="")
    parser.add_argument("--model", default="qwen2.5-coder-0.5b")
    parser.add_argument("--limit", type=int, default=0, help="questions to ask (0: all)")
    args = parser.parse_args()
    logging.getLogger("httpx").setLevel(logging.WARNING)
    runs = {n: run(n, args.base_url, args.model, args.limit) for n in (0, 2)}
    for n, r in runs.items():
        print(f"MAX_REPLANS={n}: {r.rounds} rounds, {len(r.broken)} with a task that failed or was skipped, "
              f"{len(r.missing)} missing a delivery, {r.revisions} revisions written")
    before, after = runs[0].missing, runs[2].missing
    print(f"re-planning ({'offline model' if not args.base_url else args.model}): of {len(before)} rounds that "
          f"missed a delivery without it, {len(before - after)} deliver with it; {len(after - before)} rounds "
          f"missed one only with it")
    for question in sorted(before | after):
        print(f"  {'repaired' if question not in after else 'still missing'}: {question}")


if __name__ == "__main__":
    main()
