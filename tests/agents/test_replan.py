"""The offline revision of a plan after a failure, and a model's revision merged on the finished tasks."""

from __future__ import annotations

import json

from agents.base import OutputSpec, Plan, TaskSpec
from agents.planning.replan import changes_prompt, merge_revision, revise_offline


def plan_of(*tasks: TaskSpec) -> Plan:
    return Plan(language="en", answer="Plan.", tasks=list(tasks),
                final_documents=[OutputSpec("tables.xlsx"), OutputSpec("report.docx")])


def test_the_failed_task_is_dropped_and_what_needed_it_runs_on_the_uploads():
    plan = plan_of(TaskSpec("t1", "data_extractor", "Extract.", inputs=["a.pdf"], outputs=[OutputSpec("tables.xlsx")]),
                   TaskSpec("t2", "writer", "Report.", inputs=["tables.xlsx"], outputs=[OutputSpec("report.docx")],
                            depends_on=["t1"]))
    revision = revise_offline(plan, done=set(), failed={"t1": "the file is damaged."},
                              skipped={"t2": "it depends on task 't1'"}, uploads=["a.pdf"])
    assert revision is not None
    assert [(t.id, t.inputs, t.depends_on) for t in revision.plan.tasks] == [("t2", ["a.pdf"], [])]
    assert [d.name for d in revision.plan.final_documents] == ["report.docx"]
    assert revision.dropped == ["t1"] and revision.added == ["t2"]
    assert "t1 (data_extractor) failed (the file is damaged) and is dropped" in revision.why
    assert "t2 (writer) works from a.pdf" in revision.why
    # What the app writes of it: its plan's record and its work plan (the answer stays the round's plan's).
    assert Plan.from_record(revision.record, "en", "Plan.") == revision.plan
    assert revision.work_plan.startswith("### Work plan") and "1. **writer** `t2`: Report. (inputs: a.pdf" in \
        revision.work_plan and "Plan." not in revision.work_plan


def test_a_task_whose_input_is_gone_is_dropped_too_and_nothing_to_rerun_is_no_revision():
    plan = plan_of(TaskSpec("t1", "data_extractor", "Extract.", outputs=[OutputSpec("tables.xlsx")]),
                   TaskSpec("t2", "writer", "Report.", inputs=["tables.xlsx"], depends_on=["t1"]))
    assert revise_offline(plan, set(), {"t1": "no tables"}, {"t2": "it depends on task 't1'"}, uploads=[]) is None


def test_finished_tasks_are_kept_and_a_models_ids_used_before_are_renamed():
    plan = plan_of(TaskSpec("t1", "analyst", "Count."), TaskSpec("t2", "analyst", "Chart."),
                   TaskSpec("t3", "writer", "Write.", depends_on=["t1", "t2"]))
    proposed = plan_of(TaskSpec("t1", "analyst", "Count."), TaskSpec("t2", "analyst", "Describe."),
                       TaskSpec("t3", "writer", "Write.", depends_on=["t1", "t2"]))
    merged = merge_revision(plan, proposed, done={"t1"}, used={"t1", "t2", "t3"}, number=1)
    assert [(t.id, t.depends_on) for t in merged.tasks] == [("t1", []), ("t2-r1", []), ("t3-r1", ["t1", "t2-r1"])]
    assert merged.tasks[0] is plan.tasks[0]


def test_a_revision_at_the_users_request_shows_the_plan_and_each_change_to_make():
    plan = plan_of(TaskSpec("t1", "writer", "Summarise the table.", inputs=["a.csv"], outputs=[OutputSpec("report.docx")]))
    said = changes_prompt(plan, "Also give me the table as Excel. Und kürzer, bitte!")
    shown = json.loads(said.split("\n")[1])
    assert [(t["id"], t["agent"], t["outputs"][0]["name"]) for t in shown["objWorkplan"]] == [("t1", "writer", "report.docx")]
    assert [d["name"] for d in shown["objFinalDocuments"]] == ["tables.xlsx", "report.docx"]
    assert "1. Also give me the table as Excel.\n2. Und kürzer, bitte!\n" in said
    assert said.endswith("list that document in objFinalDocuments.")
