"""The right document (issue 50, item 5), on material written for this test, en/de/fr:

- a work verb on a pronoun points at the last answer ("fasse das zusammen"), on an article or
  determiner at the document its noun names ("Fasse das Protokoll zusammen" is the minutes, not the
  answer about them): in the planner's choice and in the fix of a model's plan alike;
- a request that names none of the documents attached to it has all of them read (the built-in
  planner's plan over both).
"""

from __future__ import annotations

import httpx

from agents.language import ANSWER, pointed_at, resolve_references
from tests.harness import LiveServer, settings_for, wait_status

PROTOKOLL = """Protokoll der Sitzung des Vereinsvorstands vom 4. März 2025

Anwesend: Frau Albrecht (Vorsitz), Herr Brandt, Frau Celik.

1. Der Vorstand beschließt, das Sommerfest am 21. Juni im Gemeindehaus zu feiern.
2. Der Mitgliedsbeitrag bleibt bei 36 Euro im Jahr.
3. Herr Brandt übernimmt die Kasse bis zur Mitgliederversammlung im Herbst.
"""
ORCHARD = """Orchard survey 2025

The north orchard has 140 apple trees, of which 12 were replanted this spring.
The pears along the south wall gave 410 kg, about a fifth more than last year.
"""
QUOTE = """Quote for the barn roof

Replacing 60 m² of roof tiling: 4,200 euros. New gutters: 650 euros.
The work takes three weeks from the order.
"""


def _facts() -> list[dict[str, object]]:
    return [{"name": "sitzung-2025-03.txt", "origin": "uploaded", "round": 1},
            {"name": "summary-round-1.md", "origin": ANSWER, "round": 1}]


def test_a_pronoun_points_at_the_last_answer_an_article_at_the_document_its_noun_names():
    for prompt in ("Fasse das zusammen.", "Übersetze das bitte ins Englische.", "Translate it into French.",
                   "Translate that summary into German.", "Traduis ça en anglais.", "Résume-le."):
        assert pointed_at(prompt, _facts()) == ["summary-round-1.md"], prompt
    for prompt in ("Fasse das Protokoll zusammen.", "Summarise this report.", "Résume le compte rendu de la séance.",
                   "Translate that letter into German."):
        assert pointed_at(prompt, _facts()) == [], prompt
        assert "summary-round-1.md" not in resolve_references(prompt, _facts()), prompt


def _round(client: httpx.Client, prompt: str, ids: list[int], wid: str | None = None, *ends: str) -> str:
    url = "/api/workflows/start" + (f"?id={wid}" if wid else "")
    response = client.post(url, json={"prompt": prompt, "listFileId": ids})
    assert response.status_code == 200, response.text
    wid = response.json()["id"]
    assert wait_status(client, wid, "completed", "failed", timeout=180)["status"] in ("completed", *ends)
    return wid


def _inputs(client: httpx.Client, wid: str, number: int) -> list[list[str]]:
    messages = client.get(f"/api/workflows/{wid}/messages").json()["items"]
    plan = next(m for m in messages if m["round"] == number and m["agentName"] == "project_manager")
    return [t["inputs"] for t in plan["metadata"]["plan"]["tasks"]]


def test_the_minutes_are_summarised_after_a_question_not_the_answer_about_them(tmp_path, database_url):
    with LiveServer(settings_for(tmp_path, database_url)) as server, server.client() as client:
        files = [("files", (n, t.encode(), "text/plain")) for n, t in
                 (("sitzung-2025-03.txt", PROTOKOLL), ("orchard.txt", ORCHARD), ("barn-quote.txt", QUOTE))]
        response = client.post("/api/files", files=files[:1])
        assert response.status_code == 201, response.text
        wid = _round(client, "Wie hoch ist der Mitgliedsbeitrag?", [response.json()[0]["id"]])
        wid = _round(client, "Fasse das Protokoll zusammen.", [], wid)
        assert _inputs(client, wid, 2) == [["sitzung-2025-03.txt"]]
        # The offline model translates nothing (the round may fail): what counts here is what it reads.
        wid = _round(client, "Und jetzt übersetze das ins Englische.", [], wid, "failed")
        assert _inputs(client, wid, 3) == [["summary-round-2.md"]]

        # Two documents attached to one question: both are searched, each part answered from its own.
        response = client.post("/api/files", files=files[1:])
        ids = [f["id"] for f in response.json()]
        wid = _round(client, "How many apple trees are there, and what does the roof tiling cost?", ids)
        assert sorted(sum(_inputs(client, wid, 1), [])) == ["barn-quote.txt", "orchard.txt"]
        messages = client.get(f"/api/workflows/{wid}/messages").json()["items"]
        text = "\n".join(m["content"] for m in messages if m["agentName"] == "analyst")
        assert "140 apple trees" in text and "4,200 euros" in text, text
