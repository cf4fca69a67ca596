"""What a round remembers of the rounds before it: the rows kept of each ended round (`round_memory`) and
the rounds decoded from their messages, behind the port `Runner.recollect` reads through
(`agents.knowledge.recall` decides which rounds and turns a round reads, and what a row holds).

A round that ends through its final step (or with the manager's answer alone) stores its row from the
typed values it holds (`steps.write_final`, through `remembering`); any other round's row is made from its
messages the first time a later round reaches it (`WorkflowMemory.ended`: a stopped or failed round, a
round one of whose messages was deleted since, a round that ended before the rows or the typed records
existed), decoding the plan and the tasks' records its journal wrote (`app.rounds.records`).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from sqlalchemy.engine import Connection

from agents.base import Plan
from agents.round import PriorRound, Remembered, TaskOutcome
from app.rounds.records import plan_of, record_of
from app.store.records import StoredMemory
from app.store.repository import Repository
from app.store.tables import DocumentRow, MessageRow, RoundMemoryRow, stored_id


def row_of(workflow_id: str, remembered: Remembered) -> RoundMemoryRow:
    """The row stored of a round's memory (its words between spaces: `recall` finds ` word `)."""
    terms = remembered.terms
    return RoundMemoryRow(workflow_id=workflow_id, round=remembered.round, turns=remembered.turn_records(),
                          delivered=[list(d) for d in remembered.delivered], size=remembered.size,
                          finished=remembered.finished, terms=f" {' '.join(terms)} " if terms else "")


def remembered_of(row: StoredMemory) -> Remembered:
    return Remembered.from_records(row.round, row.turns, row.delivered, row.finished, row.terms.split())


@dataclass(frozen=True)
class WorkflowMemory:
    """One workflow's rounds' memory in the service's database (`Runner.recollect`'s port)."""

    repo: Repository
    workflow_id: str

    async def stored(self, first: int, last: int) -> dict[int, Remembered]:
        rows = await self.repo.memory.rounds(self.workflow_id, first, last)
        return {n: remembered_of(row) for n, row in rows.items()}

    async def ended(self, rounds: Sequence[int], before: int) -> list[PriorRound]:
        messages = await self.repo.messages.rounds_messages(self.workflow_id, rounds)
        completed = await self.repo.messages.completed_rounds(self.workflow_id, before, since=min(rounds))
        return prior_rounds(messages, completed & set(rounds))

    async def keep(self, rows: Sequence[Remembered]) -> None:
        await self.repo.memory.remember([row_of(self.workflow_id, r) for r in rows])

    async def worded(self, before: int, terms: Sequence[str], limit: int) -> list[int]:
        return await self.repo.memory.recall(self.workflow_id, before, terms, limit)

    async def texts(self, message_ids: Sequence[int]) -> dict[int, str]:
        return await self.repo.messages.texts(self.workflow_id, list(message_ids))


class Memory:
    """Reads and stores what rounds remember of each other."""

    def __init__(self, repo: Repository) -> None:
        self.repo = repo

    def of(self, workflow_id: str) -> WorkflowMemory:
        """The workflow's rounds' memory, for `Runner.recollect`."""
        return WorkflowMemory(self.repo, workflow_id)

    async def remembering(self, workflow_id: str, ended: PriorRound) -> Callable[[Connection], None]:
        """What later rounds remember of this round, which just ended (`PriorRound.of`), as a write
        inside the transaction that ends the round (its last message's: one commit fewer per round, and the
        row lands only with that message)."""
        row = row_of(workflow_id, await Remembered.of(ended))
        return lambda conn: self.repo.memory.remember_tx(conn, [row])


def prior_rounds(messages: list[tuple[MessageRow, list[DocumentRow]]], completed: set[int]) -> list[PriorRound]:
    """Earlier rounds from their messages: the request, the manager's answer (that of its last plan message
    that is not a revision's, `replan` keys), the last plan and what each task delivered (decoded from the
    records the journal wrote, `app.rounds.records`), with the message it was written in; `completed` are
    the rounds that finished (the others were stopped or failed)."""
    rounds: dict[int, _Read] = {n: _Read(finished=True) for n in completed}
    for message, docs in messages:
        r = rounds.setdefault(message.round, _Read())
        meta = message.meta or {}
        if message.status == "first" and message.role == "user":
            r.request = message.content
        elif message.status == "last":
            r.final, r.finished = message.content, True
        elif "plan" in meta:
            r.plan = plan_of(message)
            if not message.key.startswith(f"{message.workflow_id}:{message.round}:replan:") or not r.answer:
                r.answer = r.plan.answer
        elif (task := record_of(message)) is not None and task.delivered:
            r.outcomes[task.task_id] = task.outcome(message.content, [d.file_id for d in docs], message.tokens_used)
            r.messages[task.task_id] = stored_id(message)
    return [PriorRound.of(n, request=r.request, answer=r.answer, plan=r.plan, outcomes=r.outcomes, final=r.final,
                          finished=r.finished, messages=r.messages) for n, r in sorted(rounds.items())]


@dataclass
class _Read:
    """A round as its messages are read, before it becomes a `PriorRound`."""

    request: str = ""
    answer: str = ""
    plan: Plan | None = None
    final: str = ""
    finished: bool = False
    outcomes: dict[str, TaskOutcome] = field(default_factory=dict)
    messages: dict[str, int] = field(default_factory=dict)
