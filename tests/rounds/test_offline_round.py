"""The embedded default end to end: the offline model over real documents, through HTTP."""

from __future__ import annotations

import csv
import io

from tests.corpus import CORPUS
from tests.harness import LiveServer, settings_for, upload, wait_status


def test_a_german_table_request_delivers_the_documents_cells_as_downloadable_files(tmp_path):
    with LiveServer(settings_for(tmp_path)) as server, server.client() as client:
        files = upload(client, "stanley-cups.tsv")
        wid = client.post("/api/workflows/start", json={
            "prompt": "Bitte extrahiere die Tabelle als CSV und Excel.", "listFileId": [files[0]["id"]]}).json()["id"]
        assert wait_status(client, wid, "completed", "failed")["status"] == "completed"
        messages = client.get(f"/api/workflows/{wid}/messages").json()["items"]
        plan, *tasks, last = messages[1:]
        assert plan["metadata"]["offline"] is True and plan["metadata"]["language"] == "de"
        delivered = {d["name"] + "." + d["ext"]: d for d in last["documents"]}
        csv_doc = next(d for name, d in delivered.items() if name.endswith(".csv"))
        assert any(name.endswith(".xlsx") for name in delivered)

        content = client.get(f"/api/files/{csv_doc['fileId']}/content")
        assert content.status_code == 200 and "csv" in content.headers["content-type"]
        rows = list(csv.reader(io.StringIO(content.content.decode("utf-8-sig"))))
        source = (CORPUS / "stanley-cups.tsv").read_text()
        cells = [cell for row in rows for cell in row if cell.strip()]
        assert len(cells) > 10 and all(cell in source for cell in cells)
        assert "Geliefert" in last["content"] or "geliefert" in last["content"]


def test_a_summary_quotes_the_uploaded_document(tmp_path):
    with LiveServer(settings_for(tmp_path)) as server, server.client() as client:
        files = upload(client, "google-doc-document.pdf")
        wid = client.post("/api/workflows/start", json={
            "prompt": "Summarize this document.", "listFileId": [files[0]["id"]]}).json()["id"]
        assert wait_status(client, wid, "completed", "failed")["status"] == "completed"
        messages = client.get(f"/api/workflows/{wid}/messages").json()["items"]
        summary = next(m for m in messages if m["agentName"] == "summarizer")
        quoted = [line[2:] for line in summary["content"].splitlines() if line.startswith("> ")]
        extracted = " ".join(c["data"] for c in messages[0]["documents"][0]["contents"])
        assert quoted and all(" ".join(q.split()) in " ".join(extracted.split()) for q in quoted)
        assert summary["metadata"]["offline"] is True


def test_each_part_of_a_german_question_reads_the_document_it_names(tmp_path):
    # Issue 50: "In ...xlsx nicht gefunden: «PDF»": the part naming the PDF was searched in the workbook
    # alone, which the request named by its file name.
    pdf, book = "google-doc-document.pdf", "2023-half-year-analyses-by-segment.xlsx"
    with LiveServer(settings_for(tmp_path)) as server, server.client() as client:
        files = upload(client, pdf, book)
        wid = client.post("/api/workflows/start", json={
            "prompt": f"Was sagt das PDF über Berlin, und was steht in {book} zu Zone EUR?",
            "listFileId": [f["id"] for f in files]}).json()["id"]
        assert wait_status(client, wid, "completed", "failed")["status"] == "completed"
        messages = client.get(f"/api/workflows/{wid}/messages").json()["items"]
        answer = next(m["content"] for m in messages if m["agentName"] == "analyst")
        first, second = answer.split(f"**Was steht in {book} zu Zone EUR?**")
        assert "nicht gefunden" not in answer and "«PDF»" not in answer, answer
        assert "Berlin" in first and f"— {pdf}, Seite 1" in first, answer
        assert "Zone EUR" in second and f"— {book}, Blatt" in second, answer
