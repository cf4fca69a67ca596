"""What a round reads of the rounds before it (`agents.knowledge.recall.recollect`) through an in-memory
`RoundMemory`: the newest rounds in reach, a page at a time; older rounds its request names by number or by
their words; a missing row remembered from the round's messages and kept; the newest round in full; what
earlier steps delivered as documents. On a real database: tests/rounds/test_conversation_memory.py."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from dataclasses import dataclass, field

from agents.base import OutputSpec, Plan, TaskSpec
from agents.journal import TaskOutcome
from agents.knowledge.memory import PriorRound
from agents.knowledge.recall import Recollection, Remembered, recall_terms, recollect, remembered

TOPICS = ["greetings for Monday", "a name for a cat", "a motto for the week", "a title for a blog post",
          "a colour for a kitchen", "the namespaces section of the manual", "a recipe with lentils"]


def ended(n: int) -> PriorRound:
    """Round `n`: a request about its topic, a summarizer's task that delivered (in message 100 + n)."""
    plan = Plan(language="en", answer=f"I will write about {TOPICS[n % len(TOPICS)]}.",
                tasks=[TaskSpec(id="t1", agent="summarizer", instructions="Summarise.",
                                outputs=[OutputSpec(name="summary.md", type="md", purpose="the summary")])])
    return PriorRound.of(n, request=f"Write about {TOPICS[n % len(TOPICS)]}.", answer=plan.answer, plan=plan,
                       outcomes={"t1": TaskOutcome("t1", ok=True, text=f"Summary {n}.")}, final=f"Done {n}.",
                       finished=True, messages={"t1": 100 + n})


@dataclass
class Stored:
    """A workflow's rounds: those whose memory row is stored, and every round's messages (`ended`)."""

    rows: dict[int, Remembered] = field(default_factory=dict)
    rounds: dict[int, PriorRound] = field(default_factory=dict)
    pages: list[tuple[int, int]] = field(default_factory=list)
    decoded: list[list[int]] = field(default_factory=list)

    async def stored(self, first: int, last: int) -> dict[int, Remembered]:
        self.pages.append((first, last))
        return {n: r for n, r in self.rows.items() if first <= n <= last}

    async def ended(self, rounds: Sequence[int], before: int) -> list[PriorRound]:
        self.decoded.append(list(rounds))
        return [self.rounds[n] for n in sorted(rounds) if n in self.rounds and n < before]

    async def keep(self, rows: Sequence[Remembered]) -> None:
        self.rows.update({r.round: r for r in rows if r.round not in self.rows})

    async def worded(self, before: int, terms: Sequence[str], limit: int) -> list[int]:
        shared = {n: len(set(terms) & set(r.terms)) for n, r in self.rows.items() if n < before}
        return sorted((n for n, k in shared.items() if k >= min(2, len(terms))), key=lambda n: (-shared[n], -n))[:limit]

    async def texts(self, message_ids: Sequence[int]) -> dict[int, str]:
        return {mid: f"Summary {mid - 100}." for mid in message_ids}


def conversation(rounds: int, stored: bool = True) -> Stored:
    memory = Stored(rounds={n: ended(n) for n in range(1, rounds + 1)})
    if stored:
        memory.rows = {n: remembered(r) for n, r in memory.rounds.items()}
    return memory


def recollected(memory: Stored, round_no: int, prompt: str, reach: int = 120) -> Recollection:
    return asyncio.run(recollect(memory, round_no, prompt, reach))


def test_a_round_reads_the_newest_rounds_in_reach_and_the_newest_in_full() -> None:
    memory = conversation(30)
    found = recollected(memory, 31, "Say hello again.")
    shown = [r.round for r in found.rounds]
    assert shown == sorted(shown) and shown[-1] == 30 and 1 not in shown
    assert min(first for first, _ in memory.pages) > 1  # the older pages are never read
    assert memory.decoded == [[30]]  # only the newest round's messages, to have it in full
    assert found.previous is not None and found.previous.round == 30 and found.previous.finished
    assert [t.delivered for t in found.previous.tasks] == [True]
    assert found.turns == [t for r in found.rounds for t in r.turns]
    assert found.turns[0].text.startswith(f"[round {shown[0]}]")
    assert "summary-round-30.md" in [d.name for d in found.documents]


def test_a_request_brings_back_older_rounds_by_number_and_by_words() -> None:
    memory = conversation(30)
    named = recollected(memory, 31, "Translate the summary of round 2.")
    assert 2 in [r.round for r in named.rounds] and named.rounds[-1].round == 30  # just before the newest
    assert "summary-round-2.md" in [d.name for d in named.documents]
    window = {r.round for r in recollected(memory, 31, "Say hello again.").rounds}
    worded = recollected(memory, 31, "What did the namespaces section of the manual say?")
    brought = [r.round for r in worded.rounds if r.round not in window]
    assert brought and all("namespaces" in TOPICS[n % len(TOPICS)] for n in brought)
    assert set(recall_terms("the namespaces section")) <= set(memory.rows[brought[0]].terms)


def test_a_round_without_a_row_is_remembered_from_its_messages_once() -> None:
    memory = conversation(3, stored=False)
    first = recollected(memory, 4, "Say hello again.", reach=10_000)
    assert [r.round for r in first.rounds] == [1, 2, 3] and sorted(memory.rows) == [1, 2, 3]
    assert memory.rows[2] == remembered(ended(2))
    assert memory.rows[2].delivered == (("t1", "summarizer", 102),)
    memory.decoded.clear()
    again = recollected(memory, 4, "Say hello again.", reach=10_000)
    assert memory.decoded == [[3]] and again.turns == first.turns  # only the newest, in full


def test_the_first_round_remembers_nothing_and_a_stored_row_reads_back_the_same() -> None:
    assert recollected(conversation(0), 1, "Hello.") == Recollection([], [], [], None)
    row = remembered(ended(5))
    assert Remembered.from_records(row.round, row.turn_records(), [list(d) for d in row.delivered], row.finished,
                                   list(row.terms)) == row
    assert row.size <= sum(t.tokens for t in row.turns) and row.size > 0
    assert remembered(PriorRound.of(6, request="Hi.")).delivered == ()  # nothing planned, nothing delivered


def test_the_rounds_in_reach_are_read_in_pages_each_twice_the_one_before() -> None:
    # Late in a long conversation a round's reach holds dozens of rounds: a few reads, not one per 8 rounds.
    memory = conversation(60)
    found = recollected(memory, 61, "Say hello again.", reach=100_000)
    assert [r.round for r in found.rounds] == list(range(1, 61))
    assert memory.pages == [(53, 60), (37, 52), (5, 36), (1, 4)]
    missing = conversation(20, stored=False)
    recollected(missing, 21, "Say hello again.", reach=100_000)
    assert missing.decoded[:-1] == [list(range(13, 21)), list(range(5, 13)), list(range(1, 5))]  # 8 at a time
