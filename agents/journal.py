"""The round's journal port: what the Runner (`agents.round`) reads and writes through the app, which
implements it (`app.rounds.hooks`), and the typed values that cross it (a task's outcome, where the
task phase starts, how it ended, what the final review reads). In-memory implementations test the
Runner's logic without a server (`tests/agents/test_round_runner.py`)."""

from __future__ import annotations

from collections.abc import Mapping
from contextlib import AbstractAsyncContextManager, AbstractContextManager
from dataclasses import dataclass, field
from typing import Any, Protocol

from agents.base import OutputFile, Plan, TaskResult, TaskSpec
from agents.errors import PlanError
from agents.model import ModelError, Usage
from agents.planning.manager import PlanOutcome, RoundInput
from agents.planning.replan import Revision
from agents.planning.review import FinalOutcome


@dataclass
class TaskOutcome:
    """What the scheduler, a revision and the final review need of a finished task."""

    task_id: str
    ok: bool
    text: str = ""
    files: list[int] = field(default_factory=list)
    tokens: int = 0
    error: str = ""
    undelivered: bool = False  # it ran, and said it could not do what it was asked (its text says why)
    question: str = ""  # its agent asks the user this before it can go on (nothing of it is written)
    prepared: dict[str, Any] | None = None  # made ready to run once the user approves (kind "tool"; nothing written)
    waiting: bool = False  # parked: it waits for the user (a question, an approval); nothing more starts

    @property
    def delivered(self) -> bool:
        return self.ok and not self.undelivered


@dataclass
class Start:
    """Where the task phase starts: the plan, the tasks finished before (an earlier round's, or this
    round's before a crash: they never run again), the tokens spent so far, and the revisions of the plan
    made before a crash (why each, and how many of them the user's steering asked for)."""

    plan: Plan
    finished: dict[str, TaskOutcome] = field(default_factory=dict)
    spent: int = 0
    revisions: list[str] = field(default_factory=list)
    steers: int = 0


@dataclass
class Ran:
    """How the task phase ended: the last plan, its tasks' outcomes, the skipped ones with why, and why
    each revision of the plan was made."""

    plan: Plan
    outcomes: dict[str, TaskOutcome]
    skipped: dict[str, str]
    revisions: list[str]


@dataclass
class Review:
    """What the final review reads: the round's input, the (last) plan with the tasks its revisions
    dropped, each task's result (None: not delivered), the skipped tasks and the failures with why, and
    the documents delivered."""

    inp: RoundInput
    plan: Plan
    results: dict[str, TaskResult | None]
    skipped: dict[str, str]
    delivered: list[OutputFile]
    failures: dict[str, str]

    @classmethod
    def of(cls, inp: RoundInput, plan: Plan, outcomes: Mapping[str, TaskOutcome], skipped: Mapping[str, str],
           delivered: list[OutputFile], dropped: Mapping[str, str] | None = None) -> Review:
        """What the final review reads of the task phase's `outcomes`: a task that ran but delivered nothing of
        what it was asked counts as not delivered, with its own reason; `dropped`: the tasks a revision dropped
        without a replacement (in `plan`), planned and not delivered, and why each."""
        results: dict[str, TaskResult | None] = {t: (TaskResult(text=o.text) if o.delivered else None)
                                                 for t, o in outcomes.items()}
        failures = {t: o.error or o.text for t, o in outcomes.items() if not o.delivered}
        dropped = dropped or {}
        return cls(inp, plan, {**results, **dict.fromkeys(dropped)}, dict(skipped), delivered, {**failures, **dropped})


class RoundHooks(Protocol):
    """What the app does for the runner; every write is the app's (and durable)."""

    async def opened(self) -> Start | RoundInput | None:
        """Where the round starts: a `Start` (the plan a resumed round or the user's decision goes on with,
        read back with what it finished), or the input the Runner plans from. None: nothing to run."""

    async def planned(self, outcome: PlanOutcome, seconds: float) -> Start | None:
        """Journal the plan the Runner made in `seconds`. None: nothing more to run now (an answer without
        tasks, a wait for the user's review)."""

    async def unplanned(self, error: PlanError | ModelError, seconds: float) -> None:
        """The Runner could not plan (nor its fallback): the round fails, saying why."""

    def step(self, name: str) -> AbstractAsyncContextManager[None]:
        """A step of the round (`"plan"`, `"final"`) runs inside: the app's gate (a draining process
        starts none)."""

    def live(self, name: str) -> AbstractContextManager[object]:
        """A step's model call (`"plan"`, `"final"`) runs inside: its message streams live as the model
        writes it, and it is traced."""

    async def reviewing(self, ran: Ran) -> Review:
        """The final step starts: what its review reads of what `ran` delivered."""

    async def ended(self, ran: Ran, review: Review, final: FinalOutcome, failed: ModelError | None,
                    seconds: float) -> None:
        """Journal the final review (the round's last message, written in `seconds`; `failed`: the model's
        error when the fallback wrote it): the round ends."""

    def begin(self, plan: Plan, finished: Mapping[str, TaskOutcome], may_replan: bool) -> None:
        """A pass over `plan` starts (the first, or after a revision); `finished` never run again."""

    async def steered(self) -> bool:
        """Whether the user steered the round and no revision took it up yet."""

    async def run(self, plan: Plan, task: TaskSpec, dependencies: dict[str, TaskOutcome]) -> TaskOutcome:
        """Run the task and journal its outcome (never raises: a failure is an outcome); an outcome
        `waiting` parks the task for the user."""

    async def skip(self, task: TaskSpec, reason: str) -> None:
        """Journal that the task was skipped, and why."""

    async def park(self) -> bool:
        """Write what the parked tasks wait for; True: some did, and this part of the round ends."""

    async def input(self) -> RoundInput:
        """The round's input: the request, its documents, the conversation so far."""

    async def steering(self) -> str | None:
        """The user's steering no revision took up yet (their messages, joined); None: nobody steered."""

    async def revised(self, revision: Revision, usage: Usage | None, number: int, steer: bool,
                      seconds: float) -> bool:
        """Journal a revision of the plan (`steer`: the user's steering asked for it; else failures did),
        made in `seconds` at the cost of `usage`. True: it waits for the user's review, and this part
        of the round ends (the round's next part runs it)."""
