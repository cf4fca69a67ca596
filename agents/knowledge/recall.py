"""What a round remembers of the rounds before it, at a cost that does not grow with the conversation: the
deciding, over rows the app stores and reads (`RoundMemory`, the port `app.rounds.memory` implements).

Each ended round's turns (request, plan, outcome) are shortened once and stored with their token counts
(`Remembered`, made by `Remembered.of` from the round as `PriorRound.of` builds it). A round then reads the
newest rounds, a page at a time, until their turns fill the most history a planning prompt could hold
(`reach`, `agents.planning.manager.history_reach`), plus the few older rounds its request refers back
to: by number ("the summary of round 2") or by the words of their requests (`recollect`). A round whose
row is missing (stopped, failed, a message deleted since, ended before the rows existed) is remembered
from its messages the first time a later round reaches it, and stored. Before this
(bench/conversation_cost.py, docs/benchmarks.md), round 120 of one workflow cost 4.3x the CPU of rounds
3-7, because every round read every message and shortened every turn again (`fit_history`: 21 % of the
server's samples at round 100, the message reads 18 %).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from agents.base import DocumentText
from agents.knowledge.memory import (
    PriorRound,
    PriorTask,
    Turn,
    answer_documents,
    recall_terms,
    round_turns,
)
from agents.language import rounds_named
from agents.toolkit.cpu import off_loop

# Rounds read first, newest first (a round is about 3 turns of some 60 tokens once shortened); each page after
# it twice the one before, so the 45 rounds an offline model's reach holds are 3 reads, not 6.
PAGE = 8
RECALLED = 2  # older rounds the words of a request bring back at most


def least(turn: Turn) -> int:
    """The fewest tokens the turn can take in a planning prompt (`Turn.within`): what a budget must at least hold."""
    sizes = [s for t, s in ((turn.short, turn.short_tokens), (turn.shorter, turn.shorter_tokens)) if t]
    return min([turn.tokens, *sizes])


@dataclass(frozen=True)
class Remembered:
    """What later rounds remember of an ended round, as it is stored: its turns with their shorter forms and
    token counts, what its tasks delivered (task id, agent, the id of the message holding the text: a task
    reused from an earlier round has none in this one), whether it finished, the stemmed words of its request."""

    round: int
    turns: tuple[Turn, ...] = ()
    delivered: tuple[tuple[str, str, int], ...] = ()
    finished: bool = False
    terms: tuple[str, ...] = ()

    @property
    def size(self) -> int:
        """The fewest tokens its turns take in a planning prompt."""
        return sum(least(t) for t in self.turns)

    def turn_records(self) -> list[list[Any]]:
        """The turns as stored (JSON)."""
        return [t.record() for t in self.turns]

    @classmethod
    async def of(cls, r: PriorRound) -> Remembered:
        """What later rounds remember of round `r` (`remembered`), made in a worker thread: shortening the
        turns and counting their tokens is milliseconds of CPU, which the event loop does not wait for."""
        return await off_loop(remembered, r)

    @classmethod
    def from_records(cls, round_no: int, turns: Sequence[Sequence[Any]], delivered: Sequence[Sequence[Any]],
                     finished: bool, terms: Sequence[str]) -> Remembered:
        """The row `turn_records` and the other fields stored."""
        return cls(round_no, tuple(Turn.from_record(t) for t in turns),
                   tuple((str(tid), str(agent), int(mid)) for tid, agent, mid in delivered), finished, tuple(terms))


def remembered(r: PriorRound) -> Remembered:
    """What later rounds remember of round `r`: its shortened turns (the CPU this memory saves them), what its
    tasks delivered, whether it finished, the words of its request."""
    turns = round_turns(r)
    delivered = tuple((t.id, t.agent, t.message) for t in r.tasks
                      if t.delivered and t.text.strip() and t.message is not None)
    terms = recall_terms(r.request) if r.request.strip() else []
    return Remembered(r.round, tuple(turns), delivered, r.finished, tuple(terms))


class RoundMemory(Protocol):
    """One workflow's stored memory of its rounds, the app's (`app.rounds.memory`): the port `recollect`
    reads through."""

    async def stored(self, first: int, last: int) -> dict[int, Remembered]:
        """The rows stored of rounds `first` to `last` (both included), by round."""

    async def ended(self, rounds: Sequence[int], before: int) -> list[PriorRound]:
        """These rounds (ended before round `before`) from what their messages say (`PriorRound.of`), oldest first."""

    async def keep(self, rows: Sequence[Remembered]) -> None:
        """Store these rows (a row stored meanwhile keeps its own)."""

    async def worded(self, before: int, terms: Sequence[str], limit: int) -> list[int]:
        """The rounds before `before` whose request shares the most of `terms`, best first."""

    async def texts(self, message_ids: Sequence[int]) -> dict[int, str]:
        """The texts of these messages, by id (those still there)."""


@dataclass
class Recollection:
    """What a round reads of the rounds before it: their turns (those in reach, oldest first), what their
    steps delivered as documents the planner can name ("summary-round-2.md"), and the newest one in full."""

    rounds: list[Remembered]
    turns: list[Turn]
    documents: list[DocumentText]
    previous: PriorRound | None


async def recollect(memory: RoundMemory, round_no: int, prompt: str, reach: int) -> Recollection:
    """The rounds before `round_no` in reach of its planning prompt (the newest whose turns fit `reach`, and
    those the prompt refers back to), and the newest earlier round in full."""
    if round_no <= 1:
        return Recollection([], [], [], None)
    kept: list[Remembered] = []
    size, last, page = 0, round_no - 1, PAGE
    while last >= 1 and size < reach:
        first = max(1, last - page + 1)
        stored = await memory.stored(first, last)
        for n in range(last, first - 1, -1):
            if n not in stored:  # the rows missing from here down, at most a first page's worth at a time
                missing = [m for m in range(n, max(first, n - PAGE + 1) - 1, -1) if m not in stored]
                stored.update(await _computed(memory, sorted(missing), round_no))
            # The newest round's turns are shown whole when they fit; older ones at least shortened.
            size += sum(t.tokens if not kept else least(t) for t in stored[n].turns)
            kept.append(stored[n])
            if size >= reach:
                break
        last, page = first - 1, 2 * page
    oldest = kept[-1].round if kept else round_no
    recalled = await _recalled(memory, oldest, prompt)
    newest = next((r for r in kept if r.turns or r.finished), None)
    ended = await memory.ended([newest.round], round_no) if newest else []
    # The recalled rounds come just before the newest one: the history keeps the newest turns first when it
    # must leave some out, and these are what the request is about (their tags say when).
    window = sorted(kept, key=lambda r: r.round)
    rounds = [*window[:-1], *recalled, *window[-1:]]
    texts = await memory.texts([mid for r in rounds for _, _, mid in r.delivered])
    delivered = [PriorRound(round=r.round, finished=r.finished,
                            tasks=[PriorTask(id=tid, agent=agent, instructions="", delivered=True, text=texts[mid])
                                   for tid, agent, mid in r.delivered if mid in texts])
                 for r in rounds]
    return Recollection(rounds, [t for r in rounds for t in r.turns], answer_documents(delivered),
                        ended[-1] if ended else None)


async def _recalled(memory: RoundMemory, before: int, prompt: str) -> list[Remembered]:
    if before <= 1:
        return []
    named = [n for n in rounds_named(prompt) if 1 <= n < before][:RECALLED]
    worded = await memory.worded(before, recall_terms(prompt), RECALLED)
    wanted = list(dict.fromkeys([*named, *worded]))[:RECALLED]
    found: dict[int, Remembered] = {}
    for n in wanted:
        found.update(await memory.stored(n, n))
    found.update(await _computed(memory, [n for n in wanted if n not in found], before))
    return [found[n] for n in sorted(found) if found[n].turns]


async def _computed(memory: RoundMemory, rounds: Sequence[int], before: int) -> dict[int, Remembered]:
    """The memory of these ended rounds from their messages, stored: the rounds that did not store their own
    when they ended."""
    if not rounds:
        return {}
    found = {r.round: r for r in await memory.ended(rounds, before)}
    rows = await off_loop(lambda: {n: remembered(found.get(n) or PriorRound(round=n)) for n in rounds})
    await memory.keep(list(rows.values()))
    return rows
