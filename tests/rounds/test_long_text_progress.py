"""A large text file over real HTTP: its reading logs MB read as a big PDF logs pages, and its summary
logs each part of its map-reduce, with a bounded number of parts."""

from __future__ import annotations

from agents.builtin.summarizer import part_limit
from agents.offline.model import OfflineModel
from agents.tasks.calls import input_budget
from tests.corpus import CORPUS
from tests.harness import LiveServer, settings_for, wait_status


def _text(megabytes: float) -> bytes:
    prose = (CORPUS / "UDHR_first_article_all.txt").read_text(encoding="utf-8")
    parts, size, n = [], 0, 0
    while size < megabytes * (1 << 20):
        n += 1
        part = f"Part {n}.\n\n{prose}\n\n"
        parts.append(part)
        size += len(part.encode("utf-8"))
    return "".join(parts).encode("utf-8")


def test_a_large_text_logs_its_reading_and_its_summarys_parts(tmp_path, database_url):
    with LiveServer(settings_for(tmp_path, database_url)) as server, server.client() as client:
        response = client.post("/api/files", files=[("files", ("long.txt", _text(9), "text/plain"))])
        assert response.status_code == 201, response.text
        [file] = response.json()
        wid = client.post("/api/workflows/start", json={"prompt": "Summarize this document.",
                                                        "listFileId": [file["id"]]}).json()["id"]
        assert wait_status(client, wid, "completed", "failed", timeout=600)["status"] == "completed"
        logs = client.get(f"/api/workflows/{wid}/logs?limit=200").json()["items"]
        texts = [e["message"] for e in logs]

        plan_at = next(i for i, t in enumerate(texts) if t.startswith("Work plan created"))
        reading = [e for e in logs[:plan_at] if e["agentName"] == "extractor"]
        mbs = [e["message"] for e in reading if e["message"].endswith(" of 9 MB done")]
        assert len(mbs) >= 3, f"a 9 MB text reports at least each quarter it has read: {texts}"
        progress = [e["progress"] for e in reading]
        assert progress == sorted(progress) and all(1 <= p <= 9 for p in progress)

        summarising = [e for e in logs if e["message"].startswith("Summarising long.txt: ")]
        assert all(e["agentName"] == "summarizer" for e in summarising)
        lines = [e["message"] for e in summarising]
        # As many parts as the summary reads at most (agents.builtin.summarizer.part_limit: about 12,000 tokens).
        parts = part_limit(input_budget(OfflineModel(), "summarizer"))
        assert "most informative of" in lines[0] and lines[0].endswith(f"{parts} parts to summarise")
        assert [t for t in lines if t.endswith(f" of {parts} done")] == [
            f"Summarising long.txt: part {n} of {parts} done" for n in range(1, parts + 1)]
        assert lines[-1].startswith(f"Summarising long.txt: merging {parts} partial results")
        done_at = next(i for i, t in enumerate(texts) if t.startswith("Task 1/1 done: summarizer"))
        assert texts.index(lines[-1]) < done_at, "the progress comes while the task runs"

        [step] = [m for m in client.get(f"/api/workflows/{wid}/messages").json()["items"]
                  if m.get("agentName") == "summarizer"]
        bullets = [line[2:] for line in step["content"].splitlines() if line.startswith("> ")]
        assert bullets and len(set(bullets)) == len(bullets), "no sentence of the summary repeats"
