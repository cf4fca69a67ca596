"""A flow on the built-in offline model (no model configured), over real HTTP: an agent node answers from the
flow's files. Its own module: one Foreman runtime per process (DBOS), and test_flow_rounds' server is
another model's."""

from __future__ import annotations

from tests.harness import LiveServer, settings_for, wait_status
from tests.rounds.test_flow_rounds import e, n, run_flow


def test_an_agent_node_with_the_offline_model_quotes_the_document(tmp_path, database_url):
    """No model configured: the built-in offline model answers an agent node from the flow's files."""
    qa = {"name": "qa", "inputs": {"docs": {"type": "files"}, "question": {"type": "string"}},
          "nodes": [n("start", "start"),
                    n("ask", "agent", agent="analyst", instructions="{{ inputs.question }}",
                      inputs=["{{ inputs.docs }}"]),
                    n("end", "end")],
          "edges": [e("start", "ask"), e("ask", "end")], "outputs": {"answer": "{{ ask.output }}"}}
    with LiveServer(settings_for(tmp_path, database_url)) as live, live.client() as client:
        files = client.post("/api/files", files=[("files", ("pump.txt", b"Maintenance notes.\n\nThe feed pump runs "
                                                            b"at 40 bar during the night shift.\n\nThe valve is "
                                                            b"checked every Monday."))]).json()
        flow_id = client.post("/api/flows", json=qa).json()["id"]
        wf = run_flow(client, flow_id, {"question": "At what pressure does the feed pump run?"},
                      listFileId=[files[0]["id"]])
        assert wait_status(client, wf, "completed", "failed")["status"] == "completed"
        messages = client.get(f"/api/workflows/{wf}/messages").json()["items"]
        assert "40 bar" in messages[-1]["content"]
        assert next(m for m in messages if m["status"] == "step")["metadata"]["node"] == "ask"
