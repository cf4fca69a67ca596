"""A round's agent work, one entry point (in the spirit of openai-agents' `Runner.run`, not using it).

The app gives the `Runner` the model, the agents' registry and the round's limits; with the round's
input (`RoundInput`: the request, its documents, the conversation so far) it plans, runs the plan's
tasks and revises the plan when a task failed or the user steered the round (its own model calls:
`_revised`), and writes the final review. What is durable is the app's: the `RoundHooks` it implements
are the round's journal port (read the input and the user's steering; write each task's outcome, a skip,
a wait, a revision the Runner made, the final review it wrote) and still run each task. The app builds
one Runner per process (`app.main.build_runtime`).
The plan, the prior rounds, the tasks and their outcomes cross from `app` into `agents` as the typed
values named here; the app imports this module (and the types of `agents.base`, `agents.model` and
`agents.errors`), not the planner, the scheduler, the memory or the re-planner one by one.
"""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Awaitable, Callable, Mapping, Sequence
from concurrent.futures import Executor
from dataclasses import dataclass, replace
from typing import Any

from agents.base import DocumentText, OutputFile, Plan, Retriever, TaskResult, TaskSpec
from agents.errors import PlanError
from agents.flows import (
    AgentConfig,
    Effects,
    FlowDefinition,
    FlowJournal,
    FlowLimits,
    FlowResult,
    FlowRunner,
    ItemRunner,
    Node,
    NodeRun,
)
from agents.journal import Ran, Review, RoundHooks, Start, TaskOutcome
from agents.knowledge.indexed import IndexRetriever, build_rows
from agents.knowledge.memory import PriorRound, continued_request, reusable
from agents.knowledge.recall import Recollection, Remembered, RoundMemory, recollect
from agents.knowledge.retrieval import PassageIndex
from agents.language import load_detector, load_names
from agents.model import CallScope, Model, ModelError
from agents.planning.as_flow import node_plan, plan_definition, run_plan
from agents.planning.edit import EditedPlan, checked_edit, oversized
from agents.planning.fixes import FIX_NAMES, unknown_fixes
from agents.planning.manager import (
    PlanLimits,
    PlanOutcome,
    RoundInput,
    history_reach,
    make_plan,
    render_plan_message,
)
from agents.planning.notices import unreadable_note
from agents.planning.own_answer import announced, grounded, presumes, ungrounded
from agents.planning.repairs import steps_announced, with_a_task
from agents.planning.replan import Revision, changes_prompt, revise_after_failures, revise_for_steer
from agents.planning.review import FinalOutcome, write_final
from agents.planning.scheduler import first_tasks
from agents.registry import Registry
from agents.tasks.outputs import capped
from agents.tasks.run import prepare_task, run_task, task_context
from agents.toolkit.cpu import off_loop, stop_processes, warm_processes
from agents.toolkit.tokens import load_tokenizer

__all__ = [
    "DEFERRED", "EditedPlan", "FinalOutcome", "Limits", "PlanOutcome", "PriorRound", "Ran", "Registry",
    "Remembered", "Review", "Revision", "RoundHooks", "RoundInput", "Runner", "Start", "TaskOutcome", "build_rows",
    "plan_definition", "render_plan_message"
]


DEFERRED = "deferred: the user steered the round before it started"  # a task left to the revision


@dataclass(frozen=True)
class Limits:
    """A round's bounds (the settings of the same names); a fix to leave out that names no fix is refused
    (ValueError), so that a typo in PLAN_FIXES_OFF does not measure the plan with every fix made."""

    max_tasks: int = 8  # MAX_TASKS_PER_PLAN
    task_concurrency: int = 4  # TASK_CONCURRENCY
    max_round_tokens: int | None = None  # MAX_ROUND_TOKENS
    max_replans: int = 2  # MAX_REPLANS: revisions after failures (a steer does not count)
    max_task_outputs: int = 20  # MAX_TASK_OUTPUTS: documents one task's message carries
    plan_fixes_off: frozenset[str] = frozenset()  # PLAN_FIXES_OFF: fixes of a plan not made (`agents.planning.fixes`)
    flow_node_runs: int = 1000  # FLOW_MAX_NODE_RUNS: node runs of one flow run, map items and iterations counted

    def __post_init__(self) -> None:
        if unknown := unknown_fixes(self.plan_fixes_off):
            raise ValueError(f"PLAN_FIXES_OFF names no fix: {', '.join(unknown)} "
                             f"(the fixes: {', '.join(FIX_NAMES)}).")


class Runner:
    """A round's agent work with one model, one registry and the round's limits; `fallback` writes the
    final review when the model cannot (the service gives the offline model, `app.main.build_runtime`)."""

    def __init__(self, model: Model, registry: Registry, limits: Limits, index: PassageIndex | None = None,
                 fallback: Model | None = None) -> None:
        self.model, self.registry, self.limits = model, registry, limits
        # What the service's index finds (`index`, the app's), ranked here; None: passages ranked in memory.
        self.retriever: Retriever | None = IndexRetriever(index) if index is not None else None
        self.fallback = fallback
        # A flow's top-level nodes run as many at once as a plan's tasks do.
        self.flow_limits = FlowLimits(max_node_runs=limits.flow_node_runs, concurrency=limits.task_concurrency)
        # Tokens of earlier turns a plan of this model could show at most (`manager.history_reach`): a round
        # reads no more of its history (`recollect`).
        self.history_reach = history_reach(model)

    def warm_up(self, workers: Executor) -> asyncio.Future[None]:
        """Load what the agents read text with (the tokenizer, the language detector: about a second of CPU
        each; the names of languages, 0.4 s) in threads of their own, so that the first round does not wait for
        them; and start the agents' worker processes (long text work, `agents.toolkit.cpu`) from a thread of
        `workers`, each loading the tokenizer and the detector first: the future is done once they are up."""
        threading.Thread(target=load_tokenizer, name="foreman-tokenizer", daemon=True).start()
        threading.Thread(target=load_detector, name="foreman-language", daemon=True).start()
        threading.Thread(target=load_names, name="foreman-language-names", daemon=True).start()
        return asyncio.get_running_loop().run_in_executor(workers, warm_processes, load_tokenizer, load_detector)

    async def close(self) -> None:
        """The agents' worker processes end, waited for in the agents' own thread (the loop's default pool is
        DBOS's, closed before this). They are the process's: a process of several services closes one Runner."""
        await off_loop(stop_processes)

    async def run(self, hooks: RoundHooks) -> None:
        """A round's agent work: plan, tasks (revised as they go), final; each step written by `hooks`.
        It ends early when the round waits for the user: the round's next part runs it on."""
        async with hooks.step("plan"):
            opened = await hooks.opened()
            if not isinstance(opened, RoundInput):
                start = opened
            else:
                t0 = time.perf_counter()
                try:
                    with hooks.live("plan"):  # the answer streams
                        outcome = await self.plan(opened)
                except (PlanError, ModelError) as exc:
                    await hooks.unplanned(exc, time.perf_counter() - t0)
                    return
                start = await hooks.planned(outcome, time.perf_counter() - t0)
        if start is None:
            return
        ran = await self.run_tasks(start.plan, hooks, finished=start.finished, spent=start.spent,
                                   revisions=start.revisions, steers=start.steers)
        if ran is None:
            return
        async with hooks.step("final"):
            review = await hooks.reviewing(ran)
            t0 = time.perf_counter()
            with hooks.live("final"):
                final, failed = await self.final(review.inp, review.plan, review.results, review.skipped,
                                                 review.delivered, review.failures)
            await hooks.ended(ran, review, final, failed, time.perf_counter() - t0)

    async def run_flow(self, definition: FlowDefinition, effects: Effects, journal: FlowJournal,
                       inputs: Mapping[str, Any], secrets: Mapping[str, str] | None = None,
                       spread: ItemRunner | None = None) -> FlowResult:
        """Run a person's flow (or a sub-flow of it) on the engine a plan's tasks run on
        (`agents.planning.as_flow`), within this Runner's flow limits: through the app's `effects` and
        `journal`, to its end or its waits; `spread` runs a map's items elsewhere (`agents.flows.iteration`)."""
        return await FlowRunner(definition, effects, journal, self.flow_limits, secrets=secrets,
                                spread=spread).run(inputs)

    async def run_item(self, definition: FlowDefinition, effects: Effects, journal: FlowJournal,
                       inputs: Mapping[str, Any], body: Node, path: str, extra: Mapping[str, Any],
                       secrets: Mapping[str, str] | None = None) -> NodeRun:
        """One map item of a flow run that `spread` it here: its body run with what the run's nodes settled
        in view, and settled through `journal`."""
        runner = FlowRunner(definition, effects, journal, self.flow_limits, secrets=secrets)
        runner.inputs = dict(inputs)
        for at, recorded in (await journal.recorded()).items():
            runner.record(at, recorded)
        return await runner.item(body, path, extra)

    async def plan(self, inp: RoundInput) -> PlanOutcome:
        """The project manager's answer and plan for the request (raises `PlanError`, `ModelError`); an
        answer without a task over documents is the analyst's, from their passages, and a reply that tells
        what documents its tasks have yet to read hold is an announcement of the tasks (`agents.planning.own_answer`).
        A model that cannot make a valid plan even after a repair (Qwen2.5-Coder-0.5B ran to the token
        limit twice, repeating itself, over "Wie lange gilt die Garantie?") has the fallback plan the
        round, as it writes the final review when the model cannot; the tasks still run with the model."""
        sink = CallScope.current().draft
        mark = sink.mark() if sink is not None else None
        limits = PlanLimits(max_tasks=self.limits.max_tasks, fixes_off=self.limits.plan_fixes_off)
        try:
            outcome = await make_plan(inp, self.model, self.registry, limits)
        except PlanError as exc:
            if self.fallback is None:
                raise
            if sink is not None and mark is not None:
                sink.retract(mark)  # the model's cut answer is not the reply
            return await self._built_in_plan(inp, exc, limits)
        off = limits.fixes_off
        if "grounded" not in off and await ungrounded(outcome, inp, self.registry):
            outcome = await grounded(outcome, inp, self.model, self.registry, self.retriever, mark)
        elif "announced" not in off and await presumes(outcome, inp):
            outcome = announced(outcome, mark)
        return outcome

    async def _built_in_plan(self, inp: RoundInput, failed: PlanError, limits: PlanLimits) -> PlanOutcome:
        """The fallback's plan for a request the model could not plan, its tasks run by the model: its
        reply, written for a round without a model ("I work offline..."), is the announcement of its
        steps; a plan without tasks gets one that does the request (`repairs.with_a_task`)."""
        assert self.fallback is not None
        planned = await make_plan(inp, self.fallback, self.registry, limits)
        readable = [d.name for d in inp.documents if not d.problem]
        plan = with_a_task(planned.plan, continued_request(inp.prompt, inp.previous), readable, self.registry.names())
        plan = steps_announced(plan, plan.language)
        note = unreadable_note([d for d in inp.documents if d.problem], plan.language)
        plan.answer = f"{plan.answer}\n\n{note}".strip()
        return replace(planned, plan=plan, usage=failed.usage + planned.usage, repairs=[
            *planned.repairs, "the model could not make a valid work plan, even after one repair "
                              f"({'; '.join(failed.errors)}): the built-in planner made it, and its tasks "
                              "run with the model"])

    async def edited(self, edit: Any, current: Plan, inputs: Callable[[], Awaitable[RoundInput]],
                     file_name: Callable[[str], str]) -> EditedPlan:
        """A person's edit of the plan under review, checked by the rules a model's plan is (this Runner's
        registry and MAX_TASKS_PER_PLAN, the round's readable documents from `inputs`) and its output names
        by `file_name` (the name the service stores a file under), with its record and message; or
        `PlanEditError` listing every problem. A plan over the limit is told so alone, before anything else
        is read of it or of the round; the rest is checked in a worker thread, so a large edit never holds
        the event loop (`agents.planning.edit`)."""
        oversized(edit, self.limits.max_tasks)
        readable = [d.name for d in (await inputs()).documents if not d.problem]
        return await off_loop(checked_edit, edit, current, self.registry.names(), readable, self.limits.max_tasks,
                              self.registry.formats(), file_name)

    @staticmethod
    def revising(inp: RoundInput, plan: Plan, proposed: str, feedback: str) -> RoundInput:
        """What the plan under review is planned again from at the user's request: a model is shown the plan
        and the `feedback` as changes to make to it (`changes_prompt`); the offline one reads the request
        joined with the feedback, and the `proposed` plan's message in the history, as every model does."""
        return replace(inp, prompt=f"{inp.prompt}\n\n{feedback}".strip(),
                       history=[*inp.history, ("user", inp.prompt), ("assistant", proposed)],
                       changes=changes_prompt(plan, feedback) if feedback else "")

    @staticmethod
    def reused(plan: Plan, previous: PriorRound | None) -> dict[str, TaskOutcome]:
        """Tasks an interrupted previous round delivered are not run again: their results carry over."""
        return {tid: TaskOutcome(tid, ok=True, text=t.text, files=list(t.files))
                for tid, t in reusable(plan, previous).items()}

    async def recollect(self, memory: RoundMemory, round_no: int, prompt: str) -> Recollection:
        """What round `round_no` reads of the rounds before it through the app's `memory`: the newest in reach
        of a plan of this Runner's model (`history_reach`), and those its `prompt` refers back to."""
        return await recollect(memory, round_no, prompt, self.history_reach)

    def first_tasks(self, plan: Plan, finished: Mapping[str, TaskOutcome], spent: int) -> list[TaskSpec]:
        """The tasks the task phase starts first (the plan's write announces them)."""
        return first_tasks(plan, finished, concurrency=self.limits.task_concurrency,
                           max_tokens=self.limits.max_round_tokens, spent=spent)

    async def run_task(self, plan: Plan, task: TaskSpec, inp: RoundInput, *,
                       outputs: Mapping[str, list[DocumentText]] | None = None, texts: Mapping[str, str] | None = None,
                       progress: Callable[[str], Awaitable[None]] | None = None, answers: Sequence[tuple[str, str]] = (),
                       may_ask: bool = False, prepare: bool = False, prepared: dict[str, Any] | None = None) -> TaskResult:
        """Run one task's agent with what it sees of the round so far (`agents.tasks.run.task_context`, with
        this Runner's model and retriever: the round's request, documents and history; the output documents
        and the texts of the tasks it depends on that delivered, by task id), where it says how far it is
        (`progress`), the questions it asked with their `answers`, and whether it `may_ask` more. Its
        exceptions propagate: the task failed (an agent that asks more than MAX_QUESTIONS times fails it too).
        `prepare`: only what a task that waits for the user's approval makes ready to show (`meta["prepared"]`),
        not run; approved, it runs with what was `prepared`."""
        context = task_context(plan, task, prompt=inp.prompt, uploads=inp.documents, outputs=outputs or {},
                               model=self.model, results={t: TaskResult(text=text) for t, text in (texts or {}).items()},
                               history=inp.history, retriever=self.retriever)
        context.progress, context.answers, context.may_ask = progress, list(answers), may_ask
        if prepare:
            return await prepare_task(self.registry, task, context)
        context.prepared = prepared
        return await run_task(self.registry, task, context)

    async def run_node(self, path: str, config: AgentConfig, instructions: str, documents: list[DocumentText], *,
                       history: list[tuple[str, str]], round_no: int, outputs: Mapping[str, list[DocumentText]],
                       texts: Mapping[str, str], named: bool) -> TaskResult:
        """A person's agent node (at `path` of a flow run) run as the task of a plan of one (`node_plan`) over
        `documents`, after the agent nodes before it whose output documents and texts it reads (by node id);
        `named`: it reads `documents` by name (else, as a round's task that names none, the uploads and what
        those nodes delivered)."""
        plan = node_plan(path, config, instructions, [d.name for d in documents] if named else [], list(texts))
        inp = RoundInput(prompt=instructions, documents=documents, history=history, round=round_no)
        return await self.run_task(plan, plan.tasks[0], inp, outputs=outputs, texts=texts)

    async def capped(self, files: list[OutputFile], name: str) -> list[OutputFile]:
        """A task's documents, the ones past MAX_TASK_OUTPUTS in one archive named `name`."""
        return await capped(files, self.limits.max_task_outputs, name)

    async def run_tasks(self, plan: Plan, hooks: RoundHooks, *, finished: dict[str, TaskOutcome], spent: int,
                        revisions: list[str], steers: int) -> Ran | None:
        """Run the plan's tasks not `finished` (each as soon as its inputs are done), revising the plan
        when the user steered the round or a task failed (at most MAX_REPLANS revisions after failures,
        within the token budget), until nothing is left to run. `spent`: tokens the round spent so far;
        `revisions`, `steers`: revisions made before (a resumed round). None: the round waits for the
        user (a parked task, or a revision under review)."""
        limits, revisions = self.limits, list(revisions)
        deferred: set[str] = set()  # tasks not started because the user steered the round or is asked
        current = plan

        async def run(task: TaskSpec, dependencies: dict[str, TaskOutcome]) -> TaskOutcome:
            if deferred or await hooks.steered():
                deferred.add(task.id)  # the revision (or the user's decision) decides whether and how it runs
                return TaskOutcome(task.id, ok=False, error=DEFERRED)
            outcome = await hooks.run(current, task, dependencies)
            if outcome.waiting:
                deferred.add(task.id)
            return outcome

        async def skip(task: TaskSpec, reason: str) -> None:
            if deferred:  # what waits on a deferred task is left to the revision, not skipped
                deferred.add(task.id)
                return
            await hooks.skip(task, reason)

        def over() -> bool:
            return limits.max_round_tokens is not None and spent > limits.max_round_tokens

        while True:
            hooks.begin(current, finished, may_replan=len(revisions) - steers < limits.max_replans)
            deferred.clear()
            outcomes, skipped = await run_plan(current, run, skip, concurrency=limits.task_concurrency,
                                               finished=finished, max_tokens=limits.max_round_tokens, spent=spent)
            if await hooks.park():  # the round waits for the user; its next part runs the plan on
                return None
            outcomes = {t: o for t, o in outcomes.items() if t not in deferred}
            skipped = {t: r for t, r in skipped.items() if t not in deferred}
            spent += sum(o.tokens for t, o in outcomes.items() if t not in finished)
            request = None if over() else await hooks.steering()
            if request is not None:
                revision = await self._revised(hooks, current, outcomes, skipped, len(revisions) + 1, request)
                assert revision is not None  # a steer always revises (the plan goes on unchanged, said so)
                steers += 1
            else:
                if deferred or len(revisions) - steers >= limits.max_replans or over():
                    break
                revision = await self._revised(hooks, current, outcomes, skipped, len(revisions) - steers + 1)
                if revision is None:
                    break
                if revision.review:  # it waits for the user's review (the round's next part runs it)
                    return None
            current = revision.plan
            revisions.append(revision.why)
            finished = {t: o for t, o in outcomes.items() if o.ok}  # kept: they never run again
        ids = {t.id for t in current.tasks}
        return Ran(current, {t: o for t, o in outcomes.items() if t in ids},
                   {t: r for t, r in skipped.items() if t in ids}, revisions)

    async def _revised(self, hooks: RoundHooks, plan: Plan, outcomes: dict[str, TaskOutcome],
                       skipped: dict[str, str], number: int, request: str | None = None) -> Revision | None:
        """The plan revised with the user's steering `request`, or else after its failures, and journalled
        (its `review` set when it waits for the user's review); None: no revision after failures."""
        inp, t0 = await hooks.input(), time.perf_counter()
        if request is not None:
            revision, usage = await self.steer(inp, plan, outcomes, request, number)
        else:
            maybe, usage = await self.replan(inp, plan, outcomes, skipped, number)
            if maybe is None:
                return None
            revision = maybe
        revision.review = await hooks.revised(revision, usage, number, request is not None, time.perf_counter() - t0)
        return revision

    async def replan(self, inp: RoundInput, plan: Plan, outcomes: Mapping[str, TaskOutcome],
                     skipped: Mapping[str, str], number: int) -> tuple[Revision | None, Any]:
        """The plan revised after its failures, and the model's usage (None: not asked)."""
        return await revise_after_failures(inp, plan, outcomes, skipped, number, self.model, self.registry,
                                           self.limits.max_tasks)

    async def steer(self, inp: RoundInput, plan: Plan, outcomes: Mapping[str, TaskOutcome], request: str,
                    number: int) -> tuple[Revision, Any]:
        """The plan revised with the user's steering `request`, and the model's usage (None: not asked)."""
        return await revise_for_steer(inp, plan, outcomes, request, number, self.model, self.registry,
                                      self.limits.max_tasks)

    async def final(self, inp: RoundInput, plan: Plan, results: dict[str, TaskResult | None],
                    skipped: dict[str, str], delivered: list[OutputFile],
                    failures: dict[str, str]) -> tuple[FinalOutcome, ModelError | None]:
        """The final review of what was delivered against the plan; when the model cannot write it, the
        fallback's review (the offline model's: extractive, from the plan and the results) and the model's
        error. Without a fallback the error is raised."""
        try:
            return await write_final(inp, plan, results, skipped, delivered, self.model, failures=failures), None
        except ModelError as exc:
            if self.fallback is None:
                raise
            return await write_final(inp, plan, results, skipped, delivered, self.fallback,
                                     failures=failures, stand_in=not self.model.extractive), exc
