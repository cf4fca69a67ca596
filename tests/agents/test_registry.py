"""The agent registry: duplicates, validation and third-party agents from entry points."""

from __future__ import annotations

import sys
import textwrap

import pytest

from agents.base import TaskContext, TaskResult, TaskSpec
from agents.errors import DuplicateAgentError, RegistryError, UnknownAgentError
from agents.offline import OfflineModel
from agents.registry import Registry, build_registry
from tests.agents.conftest import play_round, text_document

PLUGIN = '''
from agents.base import TaskResult


class EchoAgent:
    name = "{name}"
    description = "Echoes the task's instructions back, shouting."

    async def run(self, task, context):
        return TaskResult(text=task.instructions.upper())
'''


class Quiet:
    name = "quiet"
    description = "Says nothing."

    async def run(self, task: TaskSpec, context: TaskContext) -> TaskResult:
        return TaskResult(text="")


def install_plugin(tmp_path, monkeypatch, agent_name: str = "echo", module: str = "foreman_echo_plugin",
                   target: str = "EchoAgent") -> None:
    """A real distribution on sys.path whose entry_points.txt registers an agent."""
    (tmp_path / f"{module}.py").write_text(PLUGIN.format(name=agent_name))
    info = tmp_path / f"{module}-1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {module}\nVersion: 1.0\n")
    (info / "entry_points.txt").write_text(textwrap.dedent(f"""\
        [foreman.agents]
        {agent_name} = {module}:{target}
        """))
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.delitem(sys.modules, module, raising=False)


def test_builtins_are_registered_with_names_and_descriptions():
    registry = build_registry(entry_points=False)
    assert registry.names() == ["analyst", "summarizer", "writer", "translator", "data_extractor"]
    assert all(len(d["description"]) > 40 for d in registry.descriptions())
    assert registry.source("writer") == "built-in"


def test_a_duplicate_name_is_an_error():
    registry = Registry()
    registry.add(Quiet())
    with pytest.raises(DuplicateAgentError, match="agent name 'quiet' from plug-in is already registered by built-in"):
        registry.add(Quiet(), source="plug-in")


def test_an_object_that_is_not_an_agent_is_refused():
    class NoRun:
        name = "norun"
        description = "x"

    with pytest.raises(RegistryError, match="does not implement the Agent protocol"):
        Registry().add(NoRun())  # type: ignore[arg-type]
    bad_name = Quiet()
    bad_name.name = "Bad Name"
    with pytest.raises(RegistryError, match="invalid name"):
        Registry().add(bad_name)


def test_an_unknown_agent_names_the_known_ones():
    with pytest.raises(UnknownAgentError, match="no agent named 'poet' is registered; known agents: analyst"):
        build_registry(entry_points=False).get("poet")


def test_an_entry_point_agent_is_loaded(tmp_path, monkeypatch):
    install_plugin(tmp_path, monkeypatch)
    registry = build_registry()
    assert "echo" in registry
    assert registry.source("echo") == "entry point 'echo = foreman_echo_plugin:EchoAgent'"
    assert build_registry(entry_points=False).names() == registry.names()[:-1]


def test_an_entry_point_clashing_with_a_builtin_is_an_error(tmp_path, monkeypatch):
    install_plugin(tmp_path, monkeypatch, agent_name="summarizer", module="foreman_clash_plugin")
    clash = "agent name 'summarizer' from entry point .* already registered by built-in"
    with pytest.raises(DuplicateAgentError, match=clash):
        build_registry()


def test_a_broken_entry_point_says_which_one(tmp_path, monkeypatch):
    install_plugin(tmp_path, monkeypatch, module="foreman_broken_plugin", target="Missing")
    with pytest.raises(RegistryError, match="entry point 'echo = foreman_broken_plugin:Missing' failed to load"):
        build_registry()


async def test_an_entry_point_agent_is_planned_and_run(tmp_path, monkeypatch):
    install_plugin(tmp_path, monkeypatch)
    registry = build_registry()
    doc = text_document("notes.txt", "The meeting is on Monday. Bring the budget.")
    done = await play_round("Please use the echo agent on my notes.", [doc], OfflineModel(), registry)
    echo_tasks = [t for t in done.plan.plan.tasks if t.agent == "echo"]
    assert len(echo_tasks) == 1
    assert done.results[echo_tasks[0].id].text == "PLEASE USE THE ECHO AGENT ON MY NOTES."
    assert f"{echo_tasks[0].id} (echo)" in done.final.text


def test_a_tool_the_registry_refuses_is_left_out_with_a_warning_and_the_rest_join(caplog):
    """An MCP server's tools join as agents; one whose name no agent may have is logged and not offered to
    the planner, instead of keeping the service from starting (`Registry.add_tools`)."""
    from agents.tools.agent import ToolAgent

    def tool(name: str) -> ToolAgent:
        return ToolAgent(server="files", tool=name, summary="Lists files.", input_schema={"type": "object"},
                         caller=None)  # type: ignore[arg-type]  # never called

    registry = Registry()
    with caplog.at_level("WARNING", logger="agents.registry"):
        registry.add_tools([tool("list files!"), tool("list_files")])
    assert "files.list_files" in registry and "files.list files!" not in registry
    assert any("list files!" in r.getMessage() and "not offered to the planner" in r.getMessage()
               for r in caplog.records)
