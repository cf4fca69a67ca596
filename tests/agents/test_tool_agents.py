"""MCP tools as agents, piece by piece: MCP_SERVERS' checks, the call's timeout against a real stdio server,
the offline model's arguments, and the offline planner naming a tool."""

from __future__ import annotations

import asyncio
import json
from dataclasses import replace

import pytest

from agents.base import TaskContext, TaskSpec
from agents.model import ModelRequest, ModelResponse, Usage
from agents.offline.model import OfflineModel
from agents.offline.planner import plan_offline
from agents.registry import Registry
from agents.requests import AgentBrief, PlanHints
from agents.tasks.run import run_task
from agents.tools.agent import ToolAgent, ToolError, ToolOutput, schema_problems
from agents.tools.mcp import McpTools, ServerSpec
from app.config import SettingsError, from_env
from tests.mcp_servers import calls, stdio_entry
from tests.scripted import ScriptedModel


def test_mcp_servers_inline_or_from_a_file_and_each_entry_checked(tmp_path):
    entry = {"name": "wiki", "transport": "streamable-http", "url": "https://wiki.example/mcp",
             "headers": {"Authorization": "Bearer s3cret"}, "allow": ["search"]}
    assert from_env({"MCP_SERVERS": json.dumps([entry])}).mcp_servers == (entry,)
    path = tmp_path / "servers.json"
    path.write_text(json.dumps([{"name": "calc", "command": "calc-server"}]))
    [calc] = from_env({"MCP_SERVERS": str(path), "MCP_TIMEOUT_SECONDS": "5"}).mcp_servers
    assert calc["transport"] == "stdio" and from_env({"MCP_TIMEOUT_SECONDS": "5"}).mcp_timeout_seconds == 5
    assert from_env({"MCP_SERVERS": '[{"name": "a", "command": "x", "approve": true}]'}).mcp_servers[0]["approve"]
    assert "s3cret" not in repr(from_env({"MCP_SERVERS": json.dumps([entry])}))  # headers carry secrets
    bad = {
        "[": "not valid JSON", '{"name": "x"}': "must be a JSON list", '[{"name": "Bad Name", "command": "x"}]': "name",
        '[{"name": "a", "command": "x"}, {"name": "a", "command": "y"}]': "twice",
        '[{"name": "a", "transport": "sse", "url": "http://h"}]': "stdio or streamable-http",
        '[{"name": "a"}]': "needs its command", '[{"name": "a", "transport": "streamable-http"}]': "needs its url",
        '[{"name": "a", "command": "x", "args": "-v"}]': "args must be a JSON list",
        '[{"name": "a", "command": "x", "secret": 1}]': "unknown keys: secret",
        str(tmp_path / "missing.json"): "cannot be read",
    }
    for raw, said in bad.items():
        with pytest.raises(SettingsError, match=said):
            from_env({"MCP_SERVERS": raw})


async def test_a_call_past_the_timeout_fails_with_a_sentence_and_is_cancelled_at_the_server(tmp_path):
    log = tmp_path / "calls.jsonl"
    spec = ServerSpec(**stdio_entry(log))
    tools = McpTools([replace(spec, approve=["add"]), ServerSpec(name="gone", transport="stdio", command=str(tmp_path / "no-such-server"))], 60)
    try:
        agents = {a.name: a for a in await tools.discover()}
        assert agents["calc.add"].needs_approval and not agents["calc.launch"].needs_approval  # as listed
        assert "calc.slow" in agents and not [n for n in agents if n.startswith("gone.")]
        tools.connections[0].timeout = 2  # the call's own (the start may take long on a loaded machine)
        with pytest.raises(ToolError, match=r"did not answer within MCP_TIMEOUT_SECONDS \(2 s\)"):
            await tools.connections[0].call("slow", {"seconds": 60})
        for _ in range(200):  # the server heard of the cancellation (the SDK's courtesy cancel)
            if {"server": "calc", "tool": "slow", "event": "cancelled"} in calls(log):
                break
            await asyncio.sleep(0.05)
        assert {"server": "calc", "tool": "slow", "event": "cancelled"} in calls(log)
        tools.connections[0].timeout = 60  # the next call starts the server again: within the start's bound
        assert "is 5" in (await tools.connections[0].call("add", {"a": 2, "b": 3})).text  # the session goes on
    finally:
        await tools.close()


class Recorder:
    def __init__(self) -> None:
        self.calls: list[tuple[str, dict]] = []

    async def call(self, tool: str, arguments: dict) -> ToolOutput:
        self.calls.append((tool, arguments))
        return ToolOutput(text="ok")


SCHEMA = {"type": "object", "properties": {"a": {"type": "number"}, "b": {"type": "number"}}, "required": ["a", "b"]}


def context(model: object) -> TaskContext:
    return TaskContext(prompt="p", language="en", documents={}, predecessors={}, model=model)  # type: ignore[arg-type]


async def test_offline_the_arguments_are_the_json_the_instructions_carry():
    recorder = Recorder()
    agent = ToolAgent("calc", "add", "Add two numbers.", SCHEMA, recorder)
    result = await agent.run(TaskSpec("t1", "calc.add", 'Use calc.add with {"a": 2, "b": 3}'), context(OfflineModel()))
    assert recorder.calls == [("add", {"a": 2, "b": 3})] and "ok" in result.text
    with pytest.raises(ToolError, match="offline model cannot fill in the arguments of calc.add"):
        await agent.run(TaskSpec("t1", "calc.add", "Add two and three"), context(OfflineModel()))
    assert schema_problems({"a": 1}, SCHEMA) == "'b' is a required property"


async def test_a_tool_answering_in_another_language_is_not_called_again():
    class German(Recorder):
        async def call(self, tool: str, arguments: dict) -> ToolOutput:
            self.calls.append((tool, arguments))
            return ToolOutput(text="Die Summe der beiden Zahlen ist fünf, wie es die Rechnung des Servers heute "
                                   "ergeben hat, und das Ergebnis wurde sorgfältig geprüft und bestätigt.")

    recorder, registry = German(), Registry()
    registry.add(ToolAgent("calc", "add", "Add two numbers.", SCHEMA, recorder))
    model = ScriptedModel()
    model.complete = lambda request: _arguments(request)  # type: ignore[method-assign]
    await run_task(registry, TaskSpec("t1", "calc.add", "Add 2 and 3."), context(model))
    assert len(recorder.calls) == 1  # a built-in agent writing German for an English user would be asked again


async def _arguments(request: ModelRequest) -> ModelResponse:
    return ModelResponse(text='{"a": 2, "b": 3}', data={"a": 2, "b": 3})


def test_the_offline_planner_plans_a_tool_task_only_when_the_request_names_it():
    agents = (AgentBrief("summarizer", "s"), AgentBrief("calc.add", "Add two numbers."))
    named = plan_offline(PlanHints(prompt='Please use calc.add with {"a": 2, "b": 3}.', language="en", agents=agents))
    assert [t["agent"] for t in named["objWorkplan"]] == ["calc.add"]
    assert '{"a": 2, "b": 3}' in named["objWorkplan"][0]["instructions"]
    unnamed = plan_offline(PlanHints(prompt="Please add 2 and 3.", language="en", agents=agents))
    assert "calc.add" not in [t["agent"] for t in unnamed["objWorkplan"]]



async def test_a_call_needing_approval_is_prepared_once_and_run_exactly_as_prepared():
    recorder, registry = Recorder(), Registry()
    agent = ToolAgent("calc", "add", "Add two numbers.", SCHEMA, recorder, needs_approval=True)
    registry.add(agent)
    asked: list[ModelRequest] = []

    async def answer(request: ModelRequest) -> ModelResponse:
        asked.append(request)
        data = {"a": 2, "b": 3} if len(asked) == 1 else {"a": "two"}
        return ModelResponse(text=json.dumps(data), data=data, usage=Usage(4, 6, calls=1))

    model = ScriptedModel()
    model.complete = answer  # type: ignore[method-assign]
    spec = TaskSpec("t1", "calc.add", "Add 2 and 3.")
    made = await agent.prepare(spec, context(model))
    assert made.data == {"arguments": {"a": 2, "b": 3}} and made.usage.total_tokens == 10 and recorder.calls == []
    shown = registry.approval_request(spec, made.data)
    assert shown["arguments"] == {"a": 2, "b": 3} and shown["tool"] == "add" and shown["taskId"] == "t1"
    approved = context(model)
    approved.prepared = made.data
    result = await run_task(registry, spec, approved)
    assert recorder.calls == [("add", {"a": 2, "b": 3})] and len(asked) == 1  # no new model call
    assert result.meta["arguments"] == {"a": 2, "b": 3}
    with pytest.raises(ToolError, match="do not fit the tool's input schema") as bad:  # a bad set: nothing to approve
        await agent.prepare(spec, context(model))
    assert bad.value.usage.total_tokens == 10  # type: ignore[attr-defined]


def test_what_an_agent_prepared_is_shown_when_it_does_not_describe_its_call():
    class Sender:
        name, description, needs_approval = "sender", "Sends a message.", True

        async def run(self, task: TaskSpec, context: TaskContext) -> object:
            raise AssertionError("not run")

    registry = Registry()
    registry.add(Sender())  # type: ignore[arg-type]
    shown = registry.approval_request(TaskSpec("t1", "sender", "Send it."), {"to": "ops", "name": "not this"})
    assert shown["to"] == "ops" and shown["name"] == "sender"  # what was prepared never hides the agent's name
