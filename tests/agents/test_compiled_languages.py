"""A superlative over a table in another language than the question (issue 50): the measured column is
the heading that means the question's word ("Umsatz", "chiffre d'affaires" over "Sales"), by the vectors
the service already has for cross-language retrieval, and a total or subtotal row is never the maximum.
On a half-year analysis by segment written for this test (XLSX), asked in en/de/fr over the real service."""

from __future__ import annotations

import io

import httpx
import openpyxl
import pytest

from agents.base import DocumentText
from agents.knowledge.compiled import compile_answer
from agents.knowledge.embeddings import available
from agents.knowledge.measures import asked_measures, standout
from agents.knowledge.sheets import heading_text
from agents.language import MAX, MIN
from extractors import extract
from tests.harness import LiveServer, settings_for, wait_status

HEADER = ["Segment", "H1 2023 Sales (EUR m)", "H1 2024 Sales (EUR m)", "Operating margin (%)", "Employees"]
SEGMENTS = [["Industrial", 412.5, 455.1, 11.2, 2310], ["Medical", 298.0, 341.7, 17.9, 1480],
            ["Consumer", 188.4, 176.9, 6.4, 960], ["Services", 95.3, 120.8, 22.5, 1210]]


def workbook(total: list[object] | None) -> bytes:
    book = openpyxl.Workbook()
    sheet = book.active
    assert sheet is not None
    sheet.title = "H1 by segment"
    sheet.append(["Half-year analysis by segment"])
    sheet.append([])
    for row in [HEADER, *SEGMENTS, *([total] if total else [])]:
        sheet.append(row)
    out = io.BytesIO()
    book.save(out)
    return out.getvalue()


def document(data: bytes, name: str = "h1.xlsx") -> DocumentText:
    found = extract(data, name)
    return DocumentText.of(name, "xlsx", found.mime, len(data), found.items)


def test_total_and_subtotal_rows_are_no_candidates_whatever_their_label():
    # No heading is named ("revenue"): no column is chosen by words, so the test gives the one it means.
    for label in ("Total", "Group total", "Zwischensumme", "Sous-total", "Total segments", ""):
        doc = document(workbook([label, 994.2, 1094.5, 13.1, 5960]))
        [high] = compile_answer("Which segment had the highest sales in H1 2024?", [doc])
        assert (high.op, high.label, high.value, high.column) == (MAX, "Industrial", 455.1, "H1 2024 Sales (EUR m)"), label
    # Of one measure's period columns, the one the question names.
    [low] = compile_answer("Which segment had the lowest sales in 2023?", [document(workbook(None))])
    assert (low.op, low.label, low.value) == (MIN, "Services", 95.3)


def test_a_question_in_another_language_names_its_measure_by_a_heading_of_that_meaning():
    doc = document(workbook(["Total", 994.2, 1094.5, 13.1, 5960]))
    assert heading_text("H1 2024 Sales (EUR m)") == "Sales"
    phrases, headings = asked_measures("Quel segment a le chiffre d'affaires le plus élevé ?", [doc])
    assert "chiffre d'affaires" in phrases and "segment" not in phrases and headings == ["Sales", "Operating margin",
                                                                                          "Employees"]
    # A word no heading means is near none of them; the one that does stands out.
    assert standout(["Welches", "Umsatz"], ["Sales", "Employees"], [[0.30, 0.31], [0.68, 0.40]]) == {"Sales": 0.68}
    assert standout(["hatte"], ["Sales", "Employees"], [[0.62, 0.61]]) == {}
    # Without vectors, nothing is guessed: no heading shares a word with "Umsatz"; the answer lists the columns.
    [unnamed] = compile_answer("Welches Segment hatte den höchsten Umsatz?", [doc])
    assert (unnamed.column, unnamed.rows, unnamed.among) == ("", [], ("Sales", "Operating margin", "Employees"))
    [high] = compile_answer("Welches Segment hatte den höchsten Umsatz?", [doc], {"Sales": 0.68})
    assert (high.label, high.value) == ("Industrial", 455.1)


@pytest.mark.skipif(not available(), reason="the bundled embedding models are not installed")
def test_superlatives_in_en_de_fr_over_an_english_workbook_in_the_service(tmp_path, database_url):
    cases = [
        ("Welches Segment hatte den höchsten Umsatz?", ["Industrial", "455,1"]),
        ("Quel segment a le chiffre d'affaires le plus bas ?", ["Services", "120,8"]),
        ("Welches Segment hat die meisten Beschäftigten?", ["Industrial", "2.310"]),
        ("Which segment had the lowest operating margin?", ["Consumer", "6.4"]),
    ]
    with LiveServer(settings_for(tmp_path, database_url, embeddings="local")) as server, server.client() as client:
        response = client.post("/api/files", files=[("files", ("h1-analysis.xlsx", workbook(
            ["Total", 994.2, 1094.5, 13.1, 5960]), "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet"))])
        assert response.status_code == 201, response.text
        [file] = response.json()
        for question, expected in cases:
            text = _answer(client, question, file["id"])
            first = next(p for p in text.split("\n\n") if not p.startswith("_"))
            for part in expected:
                assert part in first, (question, text)
            assert "Total" not in first and "994" not in text and "1094" not in text, (question, text)


def _answer(client: httpx.Client, prompt: str, file_id: int) -> str:
    response = client.post("/api/workflows/start", json={"prompt": prompt, "listFileId": [file_id]})
    assert response.status_code == 200, response.text
    wid = response.json()["id"]
    # A generous wait: the embedding worker shares the CPU with the round on a loaded machine.
    assert wait_status(client, wid, "completed", "failed", "stopped", timeout=180)["status"] == "completed"
    items = client.get(f"/api/workflows/{wid}/messages").json()["items"]
    return "\n\n".join(m["content"] for m in items if m["agentName"] == "analyst")
