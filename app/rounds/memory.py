"""What a round remembers of the rounds before it, at a cost that does not grow with the conversation.

Each ended round's turns (request, plan, outcome) are shortened once and stored with their token
counts (`round_memory`). A round that ends through its final step (or with the manager's answer alone)
stores its row from the typed values it holds (`ended_round`: the request, the plans, the tasks'
outcomes, the final text); any other round's row is computed from its messages the first time a later
round reaches it (`_compute`: a stopped or failed round, a round one of whose messages was deleted
since, a round that ended before the rows or the typed records existed), decoding the plan and the
tasks' records its journal wrote (`app.rounds.records`). A round then reads the newest rounds, a page
at a time, until their turns fill the most history a planning prompt could hold (`agents.round.history_reach`), plus the
few older rounds its request refers back to: by number ("the summary of round 2") or by the words
of their requests. Before this (bench/conversation_cost.py, docs/benchmarks.md), round 120 of one
workflow cost 4.3x the CPU of rounds 3-7, because every round read every message and shortened every
turn again (`fit_history`: 21 % of the server's samples at round 100, the message reads 18 %).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

from sqlalchemy.engine import Connection

from agents.base import Plan
from agents.round import (
    PriorRound,
    PriorTask,
    TaskOutcome,
    Turn,
    off_loop,
    plan_record,
    prior_tasks,
    recall_terms,
    round_turns,
    rounds_named,
)
from app.rounds.records import plan_of, record_of
from app.store.repository import Repository
from app.store.tables import DocumentRow, MessageRow, RoundMemoryRow, stored_id

PAGE = 8  # rounds read at a time, newest first (a round is about 3 turns of some 60 tokens once shortened)
RECALLED = 2  # older rounds the words of a request bring back at most


@dataclass
class Recollection:
    """The earlier rounds a round reads: those in reach, oldest first, and the newest one in full."""

    rounds: list[RoundMemoryRow]
    previous: PriorRound | None


def turns_of(row: RoundMemoryRow) -> list[Turn]:
    return [Turn.from_record(t) for t in row.turns]


def _least(turn: Turn) -> int:
    # The fewest tokens the turn can take in a planning prompt (`Turn.within`): what a budget must at least hold.
    sizes = [s for t, s in ((turn.short, turn.short_tokens), (turn.shorter, turn.shorter_tokens)) if t]
    return min([turn.tokens, *sizes])


class Memory:
    """Reads and stores what rounds remember of each other; `reach` is the most history a plan can show."""

    def __init__(self, repo: Repository, reach: int) -> None:
        self.repo = repo
        self.reach = reach

    async def remember(self, workflow_id: str, ended: PriorRound, messages: Mapping[str, int]) -> None:
        """Store what later rounds remember of this round, which just ended (`ended_round`); `messages`: the
        id of the message each task's outcome was written in."""
        await self.repo.memory.remember([memory_row(workflow_id, ended, messages)])

    async def remembering(self, workflow_id: str, ended: PriorRound,
                          messages: Mapping[str, int]) -> Callable[[Connection], None]:
        """`remember` as a write inside the transaction that ends the round (its last message's: one
        commit fewer per round, and the row lands only with that message). The row is made off the
        loop: shortening the turns and counting their tokens is milliseconds of CPU."""
        row = await off_loop(memory_row, workflow_id, ended, messages)
        return lambda conn: self.repo.memory.remember_tx(conn, [row])

    async def recollect(self, workflow_id: str, round_no: int, prompt: str) -> Recollection:
        """The rounds before `round_no` in reach of its planning prompt (the newest whose turns fit
        `reach`, and those the prompt refers back to), and the newest earlier round in full."""
        if round_no <= 1:
            return Recollection([], None)
        kept: list[RoundMemoryRow] = []
        size, last = 0, round_no - 1
        while last >= 1 and size < self.reach:
            first = max(1, last - PAGE + 1)
            stored = await self.repo.memory.rounds(workflow_id, first, last)
            missing = [n for n in range(first, last + 1) if n not in stored]
            stored.update(await self._compute(workflow_id, missing, round_no))
            for n in range(last, first - 1, -1):
                # The newest round's turns are shown whole when they fit; older ones at least shortened.
                size += sum(t.tokens if not kept else _least(t) for t in turns_of(stored[n]))
                kept.append(stored[n])
                if size >= self.reach:
                    break
            last = first - 1
        oldest = kept[-1].round if kept else round_no
        recalled = await self._recalled(workflow_id, oldest, prompt)
        newest = next((r for r in kept if r.turns or r.finished), None)
        previous = await self._in_full(workflow_id, newest.round, round_no) if newest else None
        # The recalled rounds come just before the newest one: the history keeps the newest turns first
        # when it must leave some out, and these are what the request is about (their tags say when).
        window = sorted(kept, key=lambda r: r.round)
        return Recollection([*window[:-1], *recalled, *window[-1:]], previous)

    async def _recalled(self, workflow_id: str, before: int, prompt: str) -> list[RoundMemoryRow]:
        if before <= 1:
            return []
        named = [n for n in rounds_named(prompt) if 1 <= n < before][:RECALLED]
        worded = await self.repo.memory.recall(workflow_id, before, recall_terms(prompt), RECALLED)
        wanted = list(dict.fromkeys([*named, *worded]))[:RECALLED]
        found: dict[int, RoundMemoryRow] = {}
        for n in wanted:
            found.update(await self.repo.memory.rounds(workflow_id, n, n))
        found.update(await self._compute(workflow_id, [n for n in wanted if n not in found], before))
        return [found[n] for n in sorted(found) if found[n].turns]

    async def _in_full(self, workflow_id: str, round_no: int, before: int) -> PriorRound | None:
        messages = await self.repo.messages.rounds_messages(workflow_id, [round_no])
        completed = await self.repo.messages.completed_rounds(workflow_id, before, since=round_no)
        rounds = prior_rounds(messages, completed & {round_no})
        return rounds[-1] if rounds else None

    async def _compute(self, workflow_id: str, rounds: Sequence[int], before: int) -> dict[int, RoundMemoryRow]:
        """The memory of these ended rounds from their messages, stored: the rounds that did not store
        their own when they ended (see the module's docstring)."""
        if not rounds:
            return {}
        messages = await self.repo.messages.rounds_messages(workflow_id, rounds)
        completed = await self.repo.messages.completed_rounds(workflow_id, before, since=min(rounds))
        found = {r.round: r for r in prior_rounds(messages, completed & set(rounds))}
        ids: dict[int, dict[str, int]] = {}
        for m, _ in messages:
            record = record_of(m)
            if record is not None and record.delivered:
                ids.setdefault(m.round, {})[record.task_id] = stored_id(m)
        rows = await off_loop(lambda: {n: memory_row(workflow_id, found.get(n) or PriorRound(round=n), ids.get(n, {}))
                                       for n in rounds})
        await self.repo.memory.remember(list(rows.values()))
        return rows


def ended_round(round_no: int, request: str, answer: str, plan: Plan, outcomes: Mapping[str, TaskOutcome],
                final: str) -> PriorRound:
    """A round that just ended, as later rounds remember it, from the typed values its end holds: the
    request, the manager's answer (to the request: a revision's reason is not it), the last plan, its
    tasks' outcomes and the final message."""
    record = plan_record(plan)
    tasks = prior_tasks(record)
    for task in tasks:
        outcome = outcomes.get(task.id)
        if outcome is not None and outcome.delivered:
            task.delivered, task.text, task.files = True, outcome.text, list(outcome.files)
    return PriorRound(round=round_no, request=request, answer=answer.strip(), tasks=tasks, final=final,
                      finished=True, final_documents=list(record["finalDocuments"]))


def memory_row(workflow_id: str, r: PriorRound, ids: Mapping[str, int]) -> RoundMemoryRow:
    """What later rounds remember of round `r`: its shortened turns and their size, what its tasks
    delivered (by the id of the message their outcome was written in: a task reused from an earlier
    round has none in this one), whether it finished, the words of its request."""
    turns = round_turns(r)
    delivered = [[t.id, t.agent, ids[t.id]] for t in r.tasks if t.delivered and t.text.strip() and t.id in ids]
    terms = recall_terms(r.request) if r.request.strip() else []
    return RoundMemoryRow(workflow_id=workflow_id, round=r.round, turns=[t.record() for t in turns],
                          delivered=delivered, size=sum(_least(t) for t in turns), finished=r.finished,
                          terms=f" {' '.join(terms)} " if terms else "")


def delivered_rounds(rows: Sequence[RoundMemoryRow], texts: dict[int, str]) -> list[PriorRound]:
    """The rounds with what their tasks delivered (`texts`: by message id), for `agents.round.answer_documents`."""
    return [PriorRound(round=row.round, finished=row.finished,
                       tasks=[PriorTask(id=tid, agent=agent, instructions="", delivered=True, text=texts[mid])
                              for tid, agent, mid in row.delivered if mid in texts])
            for row in rows]


def prior_rounds(messages: list[tuple[MessageRow, list[DocumentRow]]], completed: set[int]) -> list[PriorRound]:
    """Earlier rounds from their messages: the request, the manager's answer (that of its last plan message
    that is not a revision's, `replan` keys), the last plan and what each task delivered (decoded from the
    records the journal wrote, `app.rounds.records`); `completed` are the rounds that finished (the others
    were stopped or failed)."""
    rounds: dict[int, PriorRound] = {n: PriorRound(round=n, finished=True) for n in completed}
    results: dict[tuple[int, str], tuple[MessageRow, list[DocumentRow]]] = {}
    for message, docs in messages:
        r = rounds.setdefault(message.round, PriorRound(round=message.round))
        meta = message.meta or {}
        if message.status == "first" and message.role == "user":
            r.request = message.content
        elif message.status == "last":
            r.final, r.finished = message.content, True
        elif "plan" in meta:
            plan = plan_of(message)
            if not message.key.startswith(f"{message.workflow_id}:{message.round}:replan:") or not r.answer:
                r.answer = plan.answer
            record = plan_record(plan)
            r.final_documents, r.tasks = list(record["finalDocuments"]), prior_tasks(record)
        elif (task := record_of(message)) is not None and task.delivered:
            results[(message.round, task.task_id)] = (message, docs)
    for r in rounds.values():
        for t in r.tasks:
            found = results.get((r.round, t.id))
            if found is not None:
                t.delivered, t.text, t.files = True, found[0].content, [d.file_id for d in found[1]]
    return [rounds[n] for n in sorted(rounds)]
