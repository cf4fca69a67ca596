"""An in-memory implementation of the round's journal port (`agents.journal.RoundHooks`): the round's logic
without a server. What it writes is kept in a `Recorded` journal that outlives the `MemoryJournal` over it,
so a crash (an exception the Runner does not catch) and a resume (a new `MemoryJournal` over the same
`Recorded`) replay what was written, as the app's journal does from its database. The conformance test
(`tests/rounds/test_journal_port.py`) runs the same checks on it and on the app's journal."""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator, Mapping
from dataclasses import dataclass, field

from agents.base import Plan, TaskSpec
from agents.errors import PlanError
from agents.model import ModelError, Usage
from agents.round import (
    FinalOutcome,
    PlanOutcome,
    Ran,
    Review,
    Revision,
    RoundInput,
    Runner,
    Start,
    TaskOutcome,
)


@dataclass
class Recorded:
    """What a round's journal holds: the plan, every revision (why, the plan, whether the user's steering
    asked for it), each task's outcome (ok or failed; a skipped task is not finished), the skips, the
    user's steering posts and how many a revision took up, and how the round ended."""

    prompt: str
    plan: Plan | None = None
    revisions: list[tuple[str, Plan, bool]] = field(default_factory=list)
    outcomes: dict[str, TaskOutcome] = field(default_factory=dict)
    skipped: dict[str, str] = field(default_factory=dict)
    steers: list[str] = field(default_factory=list)
    handled: int = 0
    final: str | None = None
    failed: str | None = None


class MemoryJournal:
    """The journal port over a `Recorded` journal; tasks run with the Runner's registry and model."""

    def __init__(self, recorded: Recorded, runner: Runner) -> None:
        self.recorded, self.runner = recorded, runner
        self.parked: list[str] = []
        self.asked = 0  # the steering posts the revision being made takes up

    async def opened(self) -> Start | RoundInput | None:
        rec = self.recorded
        if rec.final is not None or rec.failed is not None:
            return None
        if rec.plan is None:
            return await self.input()
        plan = rec.revisions[-1][1] if rec.revisions else rec.plan
        return Start(plan, finished=dict(rec.outcomes), spent=sum(o.tokens for o in rec.outcomes.values()),
                     revisions=[why for why, _, _ in rec.revisions], steers=sum(s for _, _, s in rec.revisions))

    async def planned(self, outcome: PlanOutcome, seconds: float) -> Start | None:
        self.recorded.plan = outcome.plan
        if not outcome.plan.tasks:  # the answer is the round's last message
            self.recorded.final = outcome.plan.answer
            return None
        return Start(outcome.plan, spent=outcome.usage.total_tokens)

    async def unplanned(self, error: PlanError | ModelError, seconds: float) -> None:
        self.recorded.failed = f"Planning failed: {error}"

    @contextlib.asynccontextmanager
    async def step(self, name: str) -> AsyncIterator[None]:
        yield

    def live(self, name: str) -> contextlib.nullcontext[None]:
        return contextlib.nullcontext()

    async def reviewing(self, ran: Ran) -> Review:
        return Review.of(await self.input(), ran.plan, ran.outcomes, ran.skipped, [])

    async def ended(self, ran: Ran, review: Review, final: FinalOutcome, failed: ModelError | None,
                    seconds: float) -> None:
        self.recorded.final = final.text

    def begin(self, plan: Plan, finished: Mapping[str, TaskOutcome], may_replan: bool) -> None:
        pass

    async def steered(self) -> bool:
        return len(self.recorded.steers) > self.recorded.handled

    async def run(self, plan: Plan, task: TaskSpec, dependencies: dict[str, TaskOutcome]) -> TaskOutcome:
        inp = await self.input()
        try:
            result = await self.runner.run_task(plan, task, inp, texts={t: o.text for t, o in dependencies.items() if o.ok})
        except Exception as exc:  # an agent's failure is the task's, never the round's
            outcome = TaskOutcome(task.id, ok=False, error=str(exc) or type(exc).__name__,
                                  tokens=getattr(exc, "usage", Usage()).total_tokens)
        else:
            if result.question:  # nothing of it is written: it waits for the user
                self.parked.append(task.id)
                return TaskOutcome(task.id, ok=False, question=result.question, waiting=True)
            error = str(result.meta.get("undeliveredReason", ""))
            outcome = TaskOutcome(task.id, ok=True, text=result.text, tokens=result.usage.total_tokens,
                                  undelivered=result.undelivered, error=error)
        self.recorded.outcomes[task.id] = outcome
        return outcome

    async def skip(self, task: TaskSpec, reason: str) -> None:
        self.recorded.skipped[task.id] = reason

    async def park(self) -> bool:
        return bool(self.parked)

    async def input(self) -> RoundInput:
        return RoundInput(prompt=self.recorded.prompt, documents=[])

    async def steering(self) -> str | None:
        pending = self.recorded.steers[self.recorded.handled:]
        self.asked = len(pending)
        return "\n".join(pending) if pending else None

    async def revised(self, revision: Revision, usage: Usage | None, number: int, steer: bool,
                      seconds: float) -> bool:
        self.recorded.revisions.append((revision.why, revision.plan, steer))
        if steer:
            self.recorded.handled += self.asked
        return False
