"""Tracing of MCP tool tasks: a traced round has an `execute_tool` span per tool call under its task's span
(its own module: one Foreman runtime per process, and test_mcp_tools' module server is one)."""

from __future__ import annotations

from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import StatusCode

from app.rounds import tracing
from tests.harness import LiveServer, settings_for, wait_for
from tests.mcp_servers import stdio_entry
from tests.rounds.test_mcp_tools import ToolModel, plan, run_round, task


def test_a_traced_round_has_a_span_per_tool_call_under_its_task(tmp_path):
    tools_log = tmp_path / "calls.jsonl"
    exporter = InMemorySpanExporter()
    tracing.configure({}, exporter=exporter)
    try:
        model = ToolModel()
        settings = settings_for(tmp_path, mcp_servers=(stdio_entry(tools_log),), max_replans=0)
        with LiveServer(settings, model) as live, live.client() as client:
            wid, status, _ = run_round(
                client, model, plan(task("t1", "calc.add", "Add."), task("t2", "analyst", "Say it.", ["t1"]),
                                    task("t3", "calc.divide", "Divide.", ["t2"])),
                **{"calc.add": {"a": 2, "b": 3}, "calc.divide": {"a": 1, "b": 0}})
            assert status["status"] == "completed"
            wait_for(lambda: any(s.name == "foreman.round" for s in exporter.get_finished_spans()), 10, "the round")
    finally:
        tracing.shutdown()
    found = exporter.get_finished_spans()
    by_id = {s.context.span_id: s for s in found}
    tools = {s.attributes["gen_ai.tool.name"]: s for s in found if s.name.startswith("execute_tool ")}
    assert set(tools) == {"calc.add", "calc.divide"}
    for name, span in tools.items():
        parent = by_id[span.parent.span_id]
        assert parent.name == f"invoke_agent {name}" and span.attributes["gen_ai.operation.name"] == "execute_tool"
        assert span.attributes["gen_ai.conversation.id"] == wid
    assert tools["calc.add"].status.status_code != StatusCode.ERROR
    assert tools["calc.divide"].status.status_code == StatusCode.ERROR
    assert by_id[tools["calc.divide"].parent.span_id].status.status_code == StatusCode.ERROR  # the failed task
