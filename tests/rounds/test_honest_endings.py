"""A step that did not deliver what it was asked for is not done, and a round whose only deliverable
was not made does not end "Workflow completed successfully" (issue 50, seen in English and French):
a request for a document's tables as a workbook, over prose without a table, in en/de/fr, through a
real server with the offline model."""

from __future__ import annotations

import pytest

from tests.harness import LiveServer, settings_for, wait_status

PROSE = {
    "en": ("walk-notes.txt", "We walked from the mill to the lake on Sunday. The path was muddy after the rain, "
                             "and the children found a heron by the reeds. We were home before dark.",
           "Extract the tables from walk-notes.txt as an Excel file.", "was not produced"),
    "de": ("wanderung.txt", "Am Sonntag wanderten wir von der Mühle zum See. Der Weg war nach dem Regen matschig, "
                            "und die Kinder fanden einen Reiher im Schilf. Vor der Dunkelheit waren wir zu Hause.",
           "Extrahiere die Tabellen aus wanderung.txt als Excel-Datei.", "wurde nicht erstellt"),
    "fr": ("promenade.txt", "Dimanche, nous avons marché du moulin jusqu'au lac. Le chemin était boueux après la "
                            "pluie, et les enfants ont vu un héron dans les roseaux. Nous étions rentrés avant la nuit.",
           "Extrais les tableaux de promenade.txt dans un fichier Excel.", "n'a pas été produit"),
}


@pytest.mark.parametrize("language", ["en", "de", "fr"])
def test_a_workbook_that_was_never_made_is_not_a_done_step_nor_a_successful_round(tmp_path, database_url, language):
    name, text, prompt, not_made = PROSE[language]
    with LiveServer(settings_for(tmp_path, database_url)) as server, server.client() as client:
        response = client.post("/api/files", files=[("files", (name, text.encode()))])
        assert response.status_code == 201, response.text
        body = {"prompt": prompt, "listFileId": [response.json()[0]["id"]]}
        wid = client.post("/api/workflows/start", json=body).json()["id"]
        status = wait_status(client, wid, "completed", "failed", timeout=120)["status"]
        messages = client.get(f"/api/workflows/{wid}/messages").json()["items"]
        logs = [e["message"] for e in client.get(f"/api/workflows/{wid}/logs").json()["items"]]
        final = [m for m in messages if m["role"] == "assistant"][-1]["content"]
        assert not any(f.get("name", "").endswith(".xlsx") for m in messages for f in m.get("documents") or [])
        assert "Workflow completed successfully" not in logs, logs
        assert status == "failed"
        assert any(none in final for none in ("0 of 1", "0 von 1", "0 étape sur 1")), final
        assert not any(done in final for done in ("The planned step is done", "Der geplante Schritt ist erledigt",
                                                  "L'étape prévue est terminée"))
        assert final.count(not_made) == 1, final  # said once: the step's reason, not again as a missing document
        assert any("delivered nothing of what it was asked" in line for line in logs), logs
