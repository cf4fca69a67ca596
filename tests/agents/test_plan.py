"""Plan parsing, validation and scheduling."""

from __future__ import annotations

import asyncio
import json
from dataclasses import dataclass

import pytest

from agents.base import OutputSpec, Plan, TaskSpec
from agents.errors import PlanFormatError
from agents.planning.as_flow import run_plan
from agents.planning.plan import PLAN_SCHEMA, find_cycle, parse_plan, plan_to_json, validate_plan
from agents.planning.scheduler import first_tasks, schedule
from tests.harness import plan_of

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
    assert validate_plan(bad, AGENTS, DOCS, 2) == ["the plan has 3 tasks; at most 2 are allowed"]  # that alone
    errors = validate_plan(bad, AGENTS, DOCS, 3)
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
    ready, _ = schedule(p, set(), set(), set())
    assert [t.id for t in ready] == ["a", "b"]
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


@dataclass
class Done:
    ok: bool = True
    tokens: int = 0


class Tasks:
    """Runs tasks for `run_plan`: each waits for its gate when it has one, and records what it saw."""

    def __init__(self, **gates: asyncio.Event) -> None:
        self.gates = gates
        self.started: list[str] = []
        self.finished: list[str] = []
        self.seen: dict[str, list[str]] = {}
        self.skipped: list[tuple[str, str]] = []
        self.fail = set()

    async def run(self, t, dependencies):
        self.started.append(t.id)
        self.seen[t.id] = sorted(dependencies)
        if t.id in self.gates:
            await self.gates[t.id].wait()
        self.finished.append(t.id)
        return Done(ok=t.id not in self.fail, tokens=10)

    async def skip(self, t, reason):
        self.skipped.append((t.id, reason))


async def wait_until(check, what):
    async with asyncio.timeout(10):  # a deadline, not a measurement
        while not check():
            await asyncio.sleep(0)
    return what


async def test_a_slow_task_does_not_delay_a_task_whose_dependency_finished():
    slow = asyncio.Event()
    tasks = Tasks(a=slow)
    p = plan(task("a"), task("b"), task("c", deps=["b"]), task("d", deps=["a", "c"]))
    running = asyncio.create_task(run_plan(p, tasks.run, tasks.skip, concurrency=4))
    await wait_until(lambda: "c" in tasks.finished, "c done while a still runs")
    assert "a" not in tasks.finished and "d" not in tasks.started
    slow.set()
    outcomes, skipped = await running
    assert tasks.finished[-1] == "d" and set(outcomes) == {"a", "b", "c", "d"} and skipped == {}
    assert tasks.seen["d"] == ["a", "c"] and tasks.seen["c"] == ["b"]


async def test_at_most_concurrency_tasks_run_at_once_and_the_next_starts_when_one_ends():
    gates = {n: asyncio.Event() for n in "abc"}
    tasks = Tasks(**gates)
    running = asyncio.create_task(run_plan(plan(task("a"), task("b"), task("c")), tasks.run, tasks.skip,
                                           concurrency=2))
    await wait_until(lambda: len(tasks.started) == 2, "two started")
    await asyncio.sleep(0)
    assert tasks.started == ["a", "b"]
    gates["b"].set()
    await wait_until(lambda: "c" in tasks.started, "c started when b ended")
    assert "a" not in tasks.finished
    gates["a"].set(), gates["c"].set()
    await running


async def test_finished_tasks_do_not_run_and_failures_skip_their_dependents():
    tasks = Tasks()
    tasks.fail = {"b"}
    p = plan(task("a"), task("b"), task("c", deps=["b"]), task("d", deps=["c"]), task("e", deps=["a"]))
    outcomes, skipped = await run_plan(p, tasks.run, tasks.skip, concurrency=1, finished={"a": Done()})
    assert tasks.started == ["b", "e"] and tasks.seen["e"] == ["a"]
    assert skipped == {"c": "it depends on task 'b' (summarizer), which failed",
                       "d": "it depends on task 'c' (summarizer), which was skipped"}
    assert [t for t, _ in tasks.skipped] == ["c", "d"] and set(outcomes) == {"a", "b", "e"}


async def test_tasks_not_started_once_the_token_budget_is_spent_are_skipped():
    tasks = Tasks()
    p = plan(task("a"), task("b", deps=["a"]))
    outcomes, skipped = await run_plan(p, tasks.run, tasks.skip, concurrency=2, max_tokens=5)
    assert tasks.started == ["a"] and skipped == {"b": "the round's token budget (MAX_ROUND_TOKENS) is spent"}


async def test_cancelling_the_loop_cancels_the_running_tasks():
    tasks = Tasks(a=asyncio.Event(), b=asyncio.Event())
    running = asyncio.create_task(run_plan(plan(task("a"), task("b")), tasks.run, tasks.skip, concurrency=2))
    await wait_until(lambda: len(tasks.started) == 2, "both started")
    running.cancel()
    with pytest.raises(asyncio.CancelledError):
        await running
    assert tasks.finished == []


@pytest.mark.parametrize("tasks_, kwargs", [
    ([task("a"), task("b"), task("c", deps=["b"])], {"concurrency": 4}),
    ([task("a"), task("b"), task("c")], {"concurrency": 2}),
    ([task("a"), task("b"), task("e", deps=["a"])], {"concurrency": 4, "finished": {"a": Done()}}),
    ([task("a"), task("b", deps=["a"])], {"concurrency": 2, "max_tokens": 5, "spent": 10}),
], ids=["dependencies", "concurrency", "finished", "budget"])
async def test_first_tasks_are_the_tasks_the_scheduler_starts_first(tasks_, kwargs):
    """A round logs the start of these tasks with its plan: they must be exactly the ones that start then."""
    p = plan(*tasks_)
    gates = {t.id: asyncio.Event() for t in p.tasks}
    tasks = Tasks(**gates)
    running = asyncio.create_task(run_plan(p, tasks.run, tasks.skip, **kwargs))
    # Every gate is shut: what started before the first gate opens is the first wave.
    await wait_until(lambda: tasks.started or tasks.skipped or running.done(), "the first move")
    first = list(tasks.started)
    for gate in gates.values():
        gate.set()
    await running
    assert [t.id for t in first_tasks(p, **kwargs)] == first


async def test_no_task_is_announced_when_the_first_move_is_a_skip():
    """With a failed task's dependents to skip first, the tasks that start next announce themselves."""
    p = plan(task("a"), task("b", deps=["a"]), task("c"))
    assert first_tasks(p, {"a": Done(ok=False)}, concurrency=4) == []
    tasks = Tasks()
    await run_plan(p, tasks.run, tasks.skip, concurrency=4, finished={"a": Done(ok=False)})
    assert tasks.started == ["c"] and [t for t, _ in tasks.skipped] == ["b"]


def test_a_cycle_of_ten_thousand_tasks_is_found_without_recursion():
    count = 10_000
    plan = parse_plan(plan_of(count, chain=True))
    plan.tasks[0].depends_on.append(f"t{count}")
    errors = validate_plan(plan, ["analyst"], [], max_tasks=count)
    assert errors == ["tasks form a cycle: " + " -> ".join([f"t{i}" for i in range(1, count + 1)] + ["t1"])]


def test_a_plan_over_the_limit_is_told_its_size_alone():
    plan = parse_plan({**plan_of(20, chain=True), "objWorkplan": plan_of(20)["objWorkplan"] * 2})  # ids twice
    assert validate_plan(plan, ["nobody"], [], max_tasks=8) == ["the plan has 40 tasks; at most 8 are allowed"]
