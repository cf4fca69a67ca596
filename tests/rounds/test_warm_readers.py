"""The file readers (extraction worker processes) are warm before the first round, as a user sees it."""

from __future__ import annotations

from tests.harness import other_process, upload, wait_status


def test_the_first_round_after_ready_reads_its_file_in_a_warm_reader(tmp_path):
    # A fresh `python -m app`: its own process, so no reader of this test process is warm for it.
    with other_process(tmp_path, "", executor_id="fresh") as client:
        # The first thing a user does once /ready answers 200: a round with a file.
        files = upload(client, "testCSV.csv")
        start = client.post("/api/workflows/start", json={"prompt": "Summarise this.",
                                                          "listFileId": [files[0]["id"]]})
        assert start.status_code == 200, start.text
        wid = start.json()["id"]
        wait_status(client, wid, "completed")
        logs = [entry["message"] for entry in client.get(f"/api/workflows/{wid}/logs").json()["items"]]
    read = [message for message in logs if message.startswith("Read testCSV.csv")]
    # A reader that had to be started for the file would say so ("... s of it starting a reader process").
    assert len(read) == 1 and "starting a reader process" not in read[0], logs
