"""Plan parsing, validation and scheduling."""

from __future__ import annotations

import json

import pytest

from agents.base import OutputSpec, Plan, TaskSpec
from agents.errors import PlanFormatError
from agents.plan import PLAN_SCHEMA, find_cycle, parse_plan, plan_to_json, schedule, validate_plan, waves

AGENTS = ["analyst", "summarizer", "writer"]
DOCS = ["report.pdf", "data.csv"]


def task(id: str, agent: str = "summarizer", deps: list[str] | None = None, inputs: list[str] | None = None,
         outputs: list[str] | None = None, instructions: str = "do it") -> TaskSpec:
    return TaskSpec(id=id, agent=agent, instructions=instructions, inputs=inputs or [],
                    outputs=[OutputSpec(o) for o in outputs or []], depends_on=deps or [])


def plan(*tasks: TaskSpec, finals: list[str] | None = None) -> Plan:
    return Plan(language="en", answer="ok", tasks=list(tasks),
                final_documents=[OutputSpec(f) for f in finals or []])


def test_parse_plan_reads_the_schema_shape_from_text_with_a_fence():
    raw = {
        "userLanguage": "de", "objUserResponse": "Mache ich.",
        "objFinalDocuments": [{"name": "out.md", "type": "md", "purpose": "result"}],
        "objWorkplan": [{"id": "t1", "agent": "writer", "instructions": "write", "inputs": ["report.pdf"],
                         "outputs": [{"name": "out.md", "type": "md", "purpose": "result"}], "dependsOn": []}],
    }
    parsed = parse_plan("```json\n" + json.dumps(raw) + "\n```")
    assert parsed.language == "de"
    assert parsed.tasks[0].outputs[0].name == "out.md"
    assert plan_to_json(parsed) == raw


def test_parse_plan_lists_every_shape_error():
    with pytest.raises(PlanFormatError) as caught:
        parse_plan({"userLanguage": "en", "objUserResponse": 3,
                    "objWorkplan": [{"agent": "writer", "inputs": "report.pdf"}]})
    assert "objUserResponse must be a string" in caught.value.errors
    assert "objWorkplan[1] has no id" in caught.value.errors
    assert "objWorkplan[1].inputs must be a list of strings" in caught.value.errors


def test_parse_plan_rejects_text_that_is_not_json():
    with pytest.raises(PlanFormatError, match="not valid JSON"):
        parse_plan("I will summarise the document.")


def test_schema_requires_the_seed_fields():
    # The work plan comes first, so a grammar-constrained model plans before naming deliverables.
    assert PLAN_SCHEMA["required"] == ["userLanguage", "objUserResponse", "objWorkplan", "objFinalDocuments"]


def test_a_good_plan_has_no_errors():
    good = plan(task("t1", inputs=["report.pdf"], outputs=["sum.md"]),
                task("t2", "writer", deps=["t1"], inputs=["sum.md", "data.csv"], outputs=["final.docx"]),
                finals=["final.docx"])
    assert validate_plan(good, AGENTS, DOCS, 8) == []


def test_validation_names_each_problem_precisely():
    bad = plan(task("t1", "poet"), task("t1", instructions="  "), task("t3", deps=["t9"], inputs=["ghost.pdf"]),
               finals=["never.md"])
    errors = validate_plan(bad, AGENTS, DOCS, 2)
    assert "the plan has 3 tasks; at most 2 are allowed" in errors
    assert "task id 't1' is used by 2 tasks; ids must be unique" in errors
    assert any(e.startswith("task 't1': unknown agent 'poet'; available agents: analyst, summarizer, writer")
               for e in errors)
    assert "task 't1': instructions are empty" in errors
    assert "task 't3' depends on 't9', which is not in the plan" in errors
    assert ("task 't3': input 'ghost.pdf' is neither an uploaded document (uploaded: data.csv, report.pdf) "
            "nor an output of a task") in errors
    assert "final document 'never.md' is not an output of any task" in errors


def test_an_input_from_a_task_it_does_not_depend_on_is_an_error():
    p = plan(task("t1", outputs=["a.md"]), task("t2", inputs=["a.md"]))
    assert validate_plan(p, AGENTS, DOCS, 8) == [
        "task 't2': input 'a.md' is an output of task 't1', but 't2' does not depend on 't1'"]


def test_an_input_from_a_transitive_dependency_is_fine():
    p = plan(task("t1", outputs=["a.md"]), task("t2", deps=["t1"]), task("t3", deps=["t2"], inputs=["a.md"]))
    assert validate_plan(p, AGENTS, DOCS, 8) == []


def test_a_cycle_is_reported_with_its_path():
    p = plan(task("a", deps=["c"]), task("b", deps=["a"]), task("c", deps=["b"]))
    assert find_cycle(p) in (["a", "b", "c", "a"], ["b", "c", "a", "b"], ["c", "a", "b", "c"])
    errors = validate_plan(p, AGENTS, DOCS, 8)
    assert len(errors) == 1 and errors[0].startswith("tasks form a cycle: ")


def test_a_task_depending_on_itself_is_a_cycle():
    assert find_cycle(plan(task("a", deps=["a"]))) == ["a", "a"]


def test_two_tasks_producing_the_same_file_is_an_error():
    p = plan(task("t1", outputs=["x.md"]), task("t2", outputs=["x.md"]))
    assert validate_plan(p, AGENTS, DOCS, 8) == ["task 't2': output 'x.md' is also produced by task 't1'"]


def test_schedule_runs_independent_tasks_together_and_waits_for_dependencies():
    p = plan(task("a"), task("b"), task("c", deps=["a", "b"]), task("d", deps=["c"]))
    assert [[t.id for t in wave] for wave in waves(p)] == [["a", "b"], ["c"], ["d"]]
    ready, skip = schedule(p, {"a"}, set(), set())
    assert [t.id for t in ready] == ["b"] and skip == []
    ready, _ = schedule(p, {"a", "b"}, set(), set())
    assert [t.id for t in ready] == ["c"]


def test_dependents_of_a_failed_task_are_skipped_with_a_reason():
    p = plan(task("a"), task("b", "writer", deps=["a"]), task("c", deps=["b"]), task("d"))
    ready, skip = schedule(p, set(), {"a"}, set())
    assert [t.id for t in ready] == ["d"]
    assert [(t.id, r) for t, r in skip] == [("b", "it depends on task 'a' (summarizer), which failed")]
    # The skip propagates: what depends on a skipped task is skipped in the next pass.
    ready, skip = schedule(p, {"d"}, {"a"}, {"b"})
    assert ready == []
    assert [(t.id, r) for t, r in skip] == [("c", "it depends on task 'b' (writer), which was skipped")]
    assert schedule(p, {"d"}, {"a"}, {"b", "c"}) == ([], [])


@pytest.mark.parametrize("written, code", [("de", "de"), ("de-CH", "de"), ("German", "de"), ("français", "fr"),
                                           ("ISO 639-1 code of the user's language", ""), ("", "")])
def test_the_plan_language_is_read_as_an_iso_code(written, code):
    raw = {"userLanguage": written, "objUserResponse": "", "objFinalDocuments": [], "objWorkplan": []}
    assert parse_plan(raw).language == code
