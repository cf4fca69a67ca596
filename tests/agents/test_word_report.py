"""A Word report that is a report (issue 50, item 8), offline over the real service, asked in en/de/fr on
material written for this test: the title the request implies, a section per document with its text, the
CSV as a real Word table, no task id or extractor lines as text, and no file nobody asked for."""

from __future__ import annotations

import io

import docx
import pytest

from agents.builtin.writer import delivered_material
from tests.harness import LiveServer, settings_for, wait_status

ORCHARD = (b"Orchard survey 2025\n\nThe north orchard has 140 apple trees, of which 12 were replanted this spring.\n"
           b"The pears along the south wall gave 410 kg, about a fifth more than last year.\n")
HARVEST = b"variety,trees,harvest_kg\nBoskoop,48,5120\nElstar,61,7340\nTopaz,31,2890\n"
CASES = [
    ("Write a Word report on the orchard survey and the harvest figures.",
     "report-orchard-survey-harvest-figures.docx", "Report on the orchard survey and the harvest figures"),
    ("Erstelle einen Word-Bericht über die Obstgarten-Erhebung und die Erntezahlen.",
     "bericht-obstgarten-erhebung-erntezahlen.docx", "Bericht über die Obstgarten-Erhebung und die Erntezahlen"),
    ("Rédige un rapport Word sur le verger et les chiffres de la récolte.",
     "rapport-verger-chiffres-récolte.docx", "Rapport sur le verger et les chiffres de la récolte"),
]


def test_of_a_step_that_made_files_its_tables_are_the_material_not_its_lines_about_them():
    said = ("1 table extracted from harvest.csv.\n\n- sheet “harvest”: table of harvest.csv, 4 rows × 3 columns\n\n"
            "**harvest**\n\n| variety | trees |\n| --- | --- |\n| Elstar | 61 |\n\nFiles: tables.xlsx (1 sheet)")
    assert delivered_material(said) == "**harvest**\n\n| variety | trees |\n| --- | --- |\n| Elstar | 61 |"
    assert delivered_material("No table here.") == "No table here."


@pytest.mark.parametrize(("prompt", "name", "title"), CASES)
def test_a_word_report_in_three_languages(tmp_path, prompt, name, title):
    with LiveServer(settings_for(tmp_path)) as server, server.client() as client:
        files = client.post("/api/files", files=[("files", ("orchard.txt", ORCHARD, "text/plain")),
                                                 ("files", ("harvest.csv", HARVEST, "text/csv"))]).json()
        started = client.post("/api/workflows/start", json={"prompt": prompt, "listFileId": [f["id"] for f in files]})
        assert started.status_code == 200, started.text
        wid = started.json()["id"]
        assert wait_status(client, wid, "completed", "failed", timeout=180)["status"] == "completed"
        items = client.get(f"/api/workflows/{wid}/messages").json()["items"]
        uploaded = {f["id"] for f in files}
        made = list({d["fileId"]: d for m in items for d in m.get("documents") or []
                     if d["fileId"] not in uploaded}.values())
        # The report alone, named for what it is about.
        assert [f"{d['name']}.{d['ext']}" for d in made] == [name], made
        data = client.get(f"/api/files/{made[0]['fileId']}/content").content
    report = docx.Document(io.BytesIO(data))
    paragraphs = [p.text for p in report.paragraphs]
    assert paragraphs[0] == title
    text = "\n".join(paragraphs)
    assert "140 apple trees" in text and "t1" not in text.split() and "extracted" not in text and "Files:" not in text
    [table] = report.tables
    assert [c.text for c in table.rows[0].cells] == ["variety", "trees", "harvest_kg"]
    assert [c.text for c in table.rows[2].cells] == ["Elstar", "61", "7340"]
