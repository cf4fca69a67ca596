"""A person's edit of a plan under review through `Runner.edited` (`agents.planning.edit`), without a server:
the checked plan with its record and message, or one `PlanEditError` listing every problem in the wire's
names. Over HTTP and MCP: tests/services/test_plan_review.py, tests/services/test_plan_edit_limits.py."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from agents.base import DocumentText, Plan
from agents.errors import PlanEditError
from agents.offline.model import OfflineModel
from agents.registry import build_registry
from agents.round import EditedPlan, Limits, RoundInput, Runner, render_plan_message

CURRENT = Plan(language="en", answer="Here is the plan.")


class Waiting:
    """A round under review: its readable `documents` and its `broken` ones; `reads` counts its input's reads."""

    def __init__(self, documents: tuple[str, ...] = ("report.csv",), broken: tuple[str, ...] = ()) -> None:
        self.documents, self.broken, self.reads = documents, broken, 0

    async def inputs(self) -> RoundInput:
        self.reads += 1
        docs = [DocumentText(name=n, ext="csv", mime="text/csv", size=1, items=[]) for n in self.documents]
        docs += [DocumentText(name=n, ext="pdf", mime="application/pdf", size=1, items=[], problem="encrypted")
                 for n in self.broken]
        return RoundInput(prompt="Compare.", documents=docs)

    def edit(self, raw: Any) -> EditedPlan:
        runner = Runner(OfflineModel(), build_registry(entry_points=False), Limits(max_tasks=3))
        return asyncio.run(runner.edited(raw, CURRENT, self.inputs, lambda name: name.rsplit("/", 1)[-1]))

    def refused(self, raw: Any) -> list[str]:
        with pytest.raises(PlanEditError) as caught:
            self.edit(raw)
        return caught.value.problems


def test_an_edit_comes_back_checked_with_its_record_and_message() -> None:
    done = Waiting().edit({"tasks": [{"id": "a", "agent": "analyst", "instructions": "Compare the rows.", "inputs": ["report.csv"],
                            "outputs": [{"name": "notes.md", "type": "md", "purpose": "the notes"}]}],
                 "finalDocuments": [{"name": "notes.md", "type": "md", "purpose": "the notes"}]})
    assert [t.id for t in done.plan.tasks] == ["a"] and done.plan.language == "en"
    assert done.plan.answer == "Here is the plan."
    assert done.record["tasks"][0] == {"id": "a", "agent": "analyst", "instructions": "Compare the rows.",
                                       "inputs": ["report.csv"], "dependsOn": [],
                                       "outputs": [{"name": "notes.md", "type": "md", "purpose": "the notes"}]}
    assert done.message == render_plan_message(done.plan)


def test_too_many_tasks_is_told_alone_before_the_round_is_read() -> None:
    tasks = [{"id": f"t{i}", "agent": "nobody", "instructions": ""} for i in range(10)]
    waiting = Waiting()
    assert waiting.refused({"tasks": tasks, "finalDocuments": [], "extra": 1}) == [
        "the plan has 10 tasks; at most 3 are allowed"]
    assert waiting.reads == 0


def test_every_problem_at_once_in_the_wires_names() -> None:
    problems = Waiting(broken=("scan.pdf",)).refused({"tasks": [{"id": "a", "agent": "nobody", "instructions": "x", "inputs": ["scan.pdf"],
                                   "outputs": [{"name": "dir/out.md", "type": "md", "purpose": "p"}]}],
                        "finalDocuments": [], "notes": "?"})
    assert problems[0] == "plan has unknown fields ['notes']: only tasks and finalDocuments are taken"
    assert any("nobody" in p for p in problems)
    assert any("scan.pdf" in p for p in problems)  # an unreadable document is no input
    assert "task 'a': output 'dir/out.md' is not a plain file name (no folders or control characters): " \
           "name it 'out.md'" in problems
    assert not any("objWorkplan" in p or "objFinalDocuments" in p for p in problems)


def test_an_edit_that_is_not_a_plan_is_refused_with_the_reason() -> None:
    assert Waiting().refused([1, 2])[0] == "plan must be an object with tasks and finalDocuments"
    assert any(p.startswith("tasks") for p in Waiting().refused({"tasks": "all of them", "finalDocuments": []}))
