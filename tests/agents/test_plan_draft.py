"""A round's plan drafted as a person's flow (`agents.planning.as_flow.plan_definition`), without a server:
the draft is one the service takes (`agents.flows.Read.of`), its instructions literal text with the
request as an input, reserved task ids renamed, `dependsOn` as edges. Over HTTP: tests/rounds/test_flow_offline.py
(a round saved as a flow runs as the round did)."""

from __future__ import annotations

from agents.base import OutputSpec, Plan, TaskSpec
from agents.flows import Read
from agents.round import plan_definition

REQUEST = "Summarise report.pdf for {{ the board }}."


def test_a_plan_becomes_a_draft_the_service_takes() -> None:
    plan = Plan(language="en", answer="On it.", tasks=[
        TaskSpec(id="start", agent="summarizer", instructions=f"Do this: {REQUEST}", inputs=["report.pdf"],
                 outputs=[OutputSpec(name="summary.md", type="md", purpose="the summary")]),
        TaskSpec(id="t2", agent="writer", instructions="Write a letter from summary.md.", inputs=["summary.md"],
                 depends_on=["start"], outputs=[OutputSpec(name="letter.docx", type="docx", purpose="the letter")]),
    ])
    draft = plan_definition(plan, "board", REQUEST, [7])
    read = Read.of(draft, agents=("summarizer", "writer"), max_nodes=50)
    nodes = {n.id: n for n in read.version.definition.nodes}
    assert list(nodes) == ["start", "task_1", "t2", "end"]  # the task called "start" is renamed
    assert nodes["task_1"].config["instructions"] == "Do this: {{ inputs.request }}"
    assert nodes["task_1"].config["inputs"] == ["{{ inputs.documents }}"]
    assert nodes["t2"].config["inputs"] == ["{{ task_1.files }}"]
    assert {(e.source, e.target) for e in read.version.definition.edges} == {
        ("start", "task_1"), ("task_1", "t2"), ("t2", "end")}
    assert read.version.definition.inputs["request"].default == REQUEST
    assert read.version.definition.inputs["documents"].default == [7]
    assert read.version.definition.outputs == {"t2": "{{ t2.output }}"}


def test_braces_in_instructions_stay_text() -> None:
    plan = Plan(language="en", answer="", tasks=[TaskSpec(id="a", agent="writer", instructions="Keep {{ x }} and {% y %}.")])
    draft = plan_definition(plan, "braces", "", [])
    read = Read.of(draft, agents=("writer",), max_nodes=50)
    [node] = [n for n in read.version.definition.nodes if n.id == "a"]
    assert "{{ '{{' }}" in node.config["instructions"] and not read.version.definition.inputs
