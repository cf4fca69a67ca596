"""Tracing: a round is one OpenTelemetry trace with GenAI attributes, exported over OTLP/HTTP."""

from __future__ import annotations

import gzip
import json
import os
import subprocess
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import httpx
import pytest
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import StatusCode

from app.rounds import tracing
from tests.harness import ROOT, LiveServer, free_port, plan_of, settings_for, wait_for, wait_status
from tests.openai_stub import Reply, Status


@pytest.fixture
def spans():
    exporter = InMemorySpanExporter()
    tracing.configure({}, log_io=True, exporter=exporter)
    try:
        yield exporter
    finally:
        tracing.shutdown()


def test_a_round_is_one_trace_with_a_span_per_step_and_model_call(tmp_path, openai_stub, spans, database_url):
    openai_stub.script([Reply(plan_of(3), usage=(50, 20)), Reply("Part one.", usage=(30, 5)),
                        Status(400, message="context length exceeded"), Reply("Part three.", usage=(30, 5))])
    openai_stub.default = lambda body: "All reviewed."
    settings = settings_for(tmp_path, database_url, openai_base_url=openai_stub.base_url, openai_api_key="test",
                            llm_model="gpt-test", log_model_io=True)
    with LiveServer(settings) as server, server.client() as client:
        wid = client.post("/api/workflows/start", json={"prompt": "Three parts"}).json()["id"]
        assert wait_status(client, wid, "completed", "failed")["status"] == "completed"
        wait_for(lambda: any(s.name == "foreman.round" for s in spans.get_finished_spans()), 10, "the round span")

    found = spans.get_finished_spans()
    [root] = [s for s in found if s.name == "foreman.round"]
    assert root.parent is None and all(s.context.trace_id == root.context.trace_id for s in found)
    assert root.context.trace_id == tracing.trace_id(wid, 1)
    assert root.status.status_code == StatusCode.OK and root.attributes["foreman.round.status"] == "completed"
    assert root.attributes["gen_ai.conversation.id"] == wid

    def children(span):
        return sorted((s for s in found if s.parent and s.parent.span_id == span.context.span_id),
                      key=lambda s: s.start_time)

    names = [s.name for s in children(root)]
    assert names[:2] == ["foreman.read_files", "foreman.plan"] and names[-1] == "foreman.final_answer"
    tasks = [s for s in children(root) if s.name.startswith("invoke_agent")]
    assert len(tasks) == 3 and {s.attributes["gen_ai.agent.name"] for s in tasks} == {"analyst"}
    assert {s.attributes["foreman.task.id"] for s in tasks} == {"t1", "t2", "t3"}
    [failed] = [s for s in tasks if s.status.status_code == StatusCode.ERROR]
    assert "context length exceeded" in failed.status.description
    assert [e.name for e in failed.events] == ["exception"]
    assert all(s.status.status_code != StatusCode.ERROR for s in tasks if s is not failed)

    calls = [s for s in found if s.name.startswith("chat ")]
    assert all(s.attributes["gen_ai.operation.name"] == "chat" and s.attributes["gen_ai.request.model"] == "gpt-test"
               for s in calls)
    assert all(s.attributes["gen_ai.conversation.id"] == wid for s in found)
    [plan_call] = children(next(s for s in children(root) if s.name == "foreman.plan"))
    assert (plan_call.attributes["gen_ai.usage.input_tokens"], plan_call.attributes["gen_ai.usage.output_tokens"]) \
        == (50, 20)
    assert "Three parts" in plan_call.attributes["gen_ai.input.messages"]  # LOG_MODEL_IO=true: the text too
    [failed_call] = children(failed)
    assert failed_call.status.status_code == StatusCode.ERROR and failed_call.attributes["error.type"]
    [final_call] = children(children(root)[-1])
    assert "All reviewed." in final_call.attributes["gen_ai.output.messages"]


def test_a_failed_round_is_an_error_and_the_text_stays_out_by_default(tmp_path, openai_stub):
    exporter = InMemorySpanExporter()
    tracing.configure({}, exporter=exporter)
    try:
        openai_stub.script([Status(400, message="bad request")])
        settings = settings_for(tmp_path, openai_base_url=openai_stub.base_url, openai_api_key="test",
                                llm_max_retries=0)
        with LiveServer(settings) as server, server.client() as client:
            wid = client.post("/api/workflows/start", json={"prompt": "Plan this"}).json()["id"]
            assert wait_status(client, wid, "completed", "failed")["status"] == "failed"
            wait_for(lambda: any(s.name == "foreman.round" for s in exporter.get_finished_spans()), 10, "the round")
        found = exporter.get_finished_spans()
        [root] = [s for s in found if s.name == "foreman.round"]
        assert root.status.status_code == StatusCode.ERROR and root.attributes["foreman.round.status"] == "failed"
        [plan_call] = [s for s in found if s.name.startswith("chat ")]
        assert "gen_ai.input.messages" not in plan_call.attributes
        assert "gen_ai.output.messages" not in plan_call.attributes
    finally:
        tracing.shutdown()


def test_a_resumed_round_continues_its_trace(spans):
    for _ in range(2):  # the round's first execution, then its resumption after a crash
        with tracing.round_span("wf-1", 3):
            pass
    first, second = spans.get_finished_spans()
    assert first.context.trace_id == second.context.trace_id == tracing.trace_id("wf-1", 3)
    assert first.context.span_id != second.context.span_id
    assert tracing.trace_id("wf-1", 4) != tracing.trace_id("wf-1", 3)


def test_off_the_hooks_are_no_ops():
    assert not tracing.enabled()
    model = object()
    assert tracing.traced(model) is model
    assert tracing.round_span("w", 1) is tracing.span("x") is tracing.task_span("a", "t1")


class _Receiver(BaseHTTPRequestHandler):
    received: list[ExportTraceServiceRequest] = []

    def do_POST(self) -> None:  # noqa: N802
        body = self.rfile.read(int(self.headers["Content-Length"]))
        if self.headers.get("Content-Encoding") == "gzip":
            body = gzip.decompress(body)
        if self.path == "/v1/traces":
            request = ExportTraceServiceRequest()
            request.ParseFromString(body)
            self.received.append(request)
        self.send_response(200 if self.path == "/v1/traces" else 404)
        self.send_header("Content-Type", "application/x-protobuf")
        self.send_header("Content-Length", "0")
        self.end_headers()

    def log_message(self, *args: object) -> None:
        pass


def test_a_served_process_exports_its_rounds_over_otlp_http(tmp_path, openai_stub):
    _Receiver.received = []
    receiver = ThreadingHTTPServer(("127.0.0.1", 0), _Receiver)
    threading.Thread(target=receiver.serve_forever, daemon=True).start()
    openai_stub.script([Reply(plan_of(1))])
    openai_stub.default = lambda body: "Done."
    port = free_port()
    env = {**os.environ, "DATA_DIR": str(tmp_path / "data"), "PORT": str(port), "LOG_FORMAT": "json",
           "OPENAI_BASE_URL": openai_stub.base_url, "OPENAI_API_KEY": "sk-test",
           "OTEL_EXPORTER_OTLP_ENDPOINT": f"http://127.0.0.1:{receiver.server_port}",
           "OTEL_SERVICE_NAME": "foreman-test", "OTEL_BSP_SCHEDULE_DELAY": "100", "LOG_MODEL_IO": "true"}
    env.pop("API_KEYS", None)
    log_path = tmp_path / "server.log"
    try:
        with open(log_path, "wb") as log:
            server = subprocess.Popen([sys.executable, "-m", "app"], cwd=ROOT, env=env, stdout=log,
                                      stderr=subprocess.STDOUT)
            try:
                with httpx.Client(base_url=f"http://127.0.0.1:{port}", timeout=30) as client:
                    wait_for(lambda: _ready(client, server), 180, "the server")
                    wid = client.post("/api/workflows/start", json={"prompt": "One part"}).json()["id"]
                    assert wait_status(client, wid, "completed", "failed")["status"] == "completed"
                    wait_for(lambda: "foreman.round" in _names(_Receiver.received), 30, "the round's export")
            finally:
                server.terminate()
                server.wait(30)
    finally:
        receiver.shutdown()
        receiver.server_close()

    spans = [s for r in _Receiver.received for rs in r.resource_spans for ss in rs.scope_spans for s in ss.spans]
    [root] = [s for s in spans if s.name == "foreman.round"]
    trace_hex = root.trace_id.hex()
    assert trace_hex == format(tracing.trace_id(wid, 1), "032x")
    assert {"foreman.plan", "invoke_agent analyst", "foreman.final_answer"} <= _names(_Receiver.received)
    resource = {a.key: a.value.string_value for r in _Receiver.received for a in r.resource_spans[0].resource.attributes}
    assert resource["service.name"] == "foreman-test"
    # The server's log lines; multiprocessing's resource tracker (its own process, outliving a terminated
    # server) may add a plain-text warning about the reader pool's semaphores after them.
    entries = [json.loads(line) for line in log_path.read_text().splitlines() if line.startswith("{")]
    ends = [e for e in entries if e["logger"] == "foreman.transitions" and json.loads(e["message"])["event"] == "finish"]
    assert [(e["workflowId"], e["traceId"]) for e in ends] == [(wid, trace_hex)]  # from a complaint to the trace
    calls = [e for e in entries if e["logger"] == "foreman.model_io"]
    assert len(calls) >= 3 and all(e["traceId"] == trace_hex for e in calls)  # plan, task, final


def _names(received: list[ExportTraceServiceRequest]) -> set[str]:
    return {s.name for r in received for rs in r.resource_spans for ss in rs.scope_spans for s in ss.spans}


def _ready(client: httpx.Client, server: subprocess.Popen) -> bool:
    assert server.poll() is None, "the server exited"
    try:
        return client.get("/ready").status_code == 200
    except httpx.HTTPError:
        return False
