"""The question set over HTTP: four documents per workflow, one question per round (en/de/fr); the
offline analyst's answer must contain the fact and cite the right file first."""

from __future__ import annotations

from tests.harness import LiveServer, settings_for, upload, wait_status
from tests.question_set import GROUPS, QUESTIONS, correct

# 0.85 until issue 32 removed the word lists fitted to this set (same-meaning stems, superlatives,
# back-matter headings): the offline analyst then answers 25 of its 32 (bench/quality.py), and the
# threshold follows what is left rather than the rules.
TARGET = 0.75


def ask(client, wid: str | None, question: str, files: list[int]) -> tuple[str, dict]:
    response = client.post("/api/workflows/start", params={"id": wid} if wid else None,
                           json={"prompt": question, "listFileId": files})
    assert response.status_code == 200, response.text
    wid = response.json()["id"]
    # 180 s: a round's time is not under test here (stop 60's CI, at twice its usual time, passed 60 s on
    # a first round that reads four files)
    assert wait_status(client, wid, "completed", "failed", timeout=180)["status"] == "completed"
    items = client.get(f"/api/workflows/{wid}/messages").json()["items"]
    round_no = max(m["round"] for m in items)
    answers = [m for m in items if m["round"] == round_no and m["agentName"] == "analyst"]
    return wid, (answers[0] if answers else {"content": "", "metadata": {}})


def test_the_offline_analyst_answers_the_question_set_from_the_right_document(tmp_path, capsys):
    results = []
    with LiveServer(settings_for(tmp_path)) as server, server.client() as client:
        for group, names in GROUPS.items():
            ids = [f["id"] for f in upload(client, *names)]
            wid = None
            for q in (q for q in QUESTIONS if q.group == group):
                # Round 1 posts the four files; later rounds ask the conversation's documents.
                wid, answer = ask(client, wid, q.question, [] if wid else ids)
                citations = answer["metadata"].get("citations", [])
                cited = [c["name"] for c in citations]
                first_quote = citations[0]["quote"] if citations else ""
                results.append((q, correct(q, answer["content"], cited, first_quote), cited[:1]))
    score = sum(ok for _, ok, _ in results) / len(results)
    by_language = {lang: f"{sum(ok for q, ok, _ in results if q.language == lang)}/"
                         f"{sum(q.language == lang for q, _, _ in results)}" for lang in ("en", "de", "fr")}
    with capsys.disabled():  # the score belongs in the test output, passed or not
        print(f"\nquestion set: {score:.0%} ({sum(ok for _, ok, _ in results)}/{len(results)}) correct, by language {by_language}")
    missed = [(q.question, q.document, cited) for q, ok, cited in results if not ok]
    assert score >= TARGET, missed
    assert len(results) >= 20 and {q.language for q, _, _ in results} == {"en", "de", "fr"}
