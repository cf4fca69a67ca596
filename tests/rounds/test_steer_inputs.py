"""Steering that steers (issue 50, item 9): what "only summarise the report, skip the ledger" leaves out,
in en/de/fr (`agents.language.left_out`, which reading a request's references sets aside), and a
revision that says what changed task by task. (The plan fix that took a left-out document out of a
model's revised plan earned nothing on its requests and was dropped: docs/benchmarks.md, 30 Nov, fifth
session.)"""

from __future__ import annotations

from agents.base import Plan, TaskSpec
from agents.language import left_out
from agents.planning.replan import differences

FACTS = [{"name": "annual-report.txt", "origin": "uploaded", "round": 1, "new": True, "ext": "txt"},
         {"name": "ledger.csv", "origin": "uploaded", "round": 1, "new": True, "ext": "csv"}]


def test_what_a_request_leaves_out_in_three_languages():
    for request in ("Actually, only summarise the report, skip the ledger.",
                    "Fasse doch nur den Bericht zusammen, ohne das Ledger.",
                    "Résume seulement le rapport, sans le ledger.",
                    "Summarise everything except the CSV."):
        assert left_out(request, FACTS) == ["ledger.csv"], request
    assert left_out("What is not in the ledger?", FACTS) == []
    assert left_out("Summarise both documents.", FACTS) == []


def _task(tid: str, inputs: list[str], instructions: str = "Summarise.", deps: list[str] | None = None) -> TaskSpec:
    return TaskSpec(id=tid, agent="summarizer", instructions=instructions, inputs=inputs, depends_on=deps or [])


def test_a_revision_says_what_changed_task_by_task():
    plan = Plan(language="en", answer="", tasks=[_task("t1", ["annual-report.txt"]), _task("t2", ["ledger.csv"]),
                                                 _task("t3", ["annual-report.txt", "ledger.csv"])])
    said = differences(plan.tasks[1:], [_task("t3-r1", ["annual-report.txt"], "Summarise the report only.")])
    assert said == ["t2 (summarizer of ledger.csv) dropped",
                    "summarizer task t3-r1 no longer reads ledger.csv and is now asked “Summarise the report only.”"]
