"""The scope model calls are made in (`agents.model.CallScope`): scopes nest, each changing only what it
names, and a call's text streams into the scope's draft only when it writes the message's prose."""

from __future__ import annotations

import asyncio

from agents.model import STREAMED_FIELD, CallScope, ModelRequest, no_draft
from agents.requests import TaskHints


class _Draft:
    def text(self, piece: str) -> None: ...

    def lead(self, text: str) -> None: ...

    def mark(self) -> int:
        return 0

    def retract(self, mark: int) -> None: ...


async def _current() -> CallScope:
    return CallScope.current()


async def test_scopes_nest_and_tasks_started_inside_share_the_rounds_budget():
    with CallScope.entered(workflow="w", round_no=3, retries=2, tokens=100) as round_scope:
        with CallScope.entered(task="t1") as task_scope:
            assert (task_scope.workflow, task_scope.round_no, task_scope.task) == ("w", 3, "t1")
            assert task_scope.budget is round_scope.budget
            seen = await asyncio.create_task(_current())  # a task started inside copies the context
            assert seen.task == "t1" and seen.budget is round_scope.budget
        assert CallScope.current().task is None and CallScope.current().round_no == 3
    assert CallScope.current() == CallScope()


def test_only_the_messages_prose_streams_and_of_a_plan_its_answer_field():
    draft = _Draft()
    prose = ModelRequest(purpose="task", messages=[])
    with CallScope.entered(draft=draft):
        scope = CallScope.current()
        assert scope.stream(prose) is not None and scope.stream(prose).field is None
        plan = scope.stream(ModelRequest(purpose="plan", messages=[], schema={}, schema_name="plan"))
        assert plan is not None and plan.sink is draft and plan.field == STREAMED_FIELD
        assert scope.stream(ModelRequest(purpose="task", messages=[], schema={}, schema_name="table")) is None
        assert scope.stream(ModelRequest(purpose="map", messages=[])) is None
        last = ModelRequest(purpose="reduce", messages=[], hints=TaskHints(agent="summarizer", last=True))
        assert scope.stream(last) is not None
        with no_draft():
            assert CallScope.current().stream(prose) is None
    assert CallScope.current().stream(prose) is None
