"""What a round remembers of its workflow: earlier rounds, the document catalogue, references
to documents by name or kind, and which finished tasks a continued round reuses. Pure, no I/O."""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from agents.base import DocumentText, Plan
from agents.language import ANSWER, query_terms, split_sentences, summaries, wants_continuation
from agents.requests import Interrupted, InterruptedTask
from agents.toolkit.tokens import count_tokens

HISTORY_SENTENCES = 2  # an older round's turn is kept as this many of its most informative sentences


@dataclass
class PriorTask:
    """A task planned in an earlier round and what it delivered (nothing when it did not finish)."""

    id: str
    agent: str
    instructions: str
    inputs: list[str] = field(default_factory=list)
    outputs: list[dict[str, Any]] = field(default_factory=list)  # as the plan wrote them
    depends_on: list[str] = field(default_factory=list)
    delivered: bool = False
    text: str = ""
    files: list[int] = field(default_factory=list)
    message: int | None = None  # the id of the message its outcome was written in (None: reused, or not known)


def prior_tasks(record: Mapping[str, Any]) -> list[PriorTask]:
    """The tasks of a plan as `agents.base.Plan.record` stored it, as an earlier round's (none delivered yet)."""
    return [PriorTask(id=t["id"], agent=t["agent"], instructions=t.get("instructions", ""),
                      inputs=list(t.get("inputs", [])), outputs=list(t.get("outputs", [])),
                      # Plans stored before the wire went camelCase carry `depends_on`.
                      depends_on=list(t.get("dependsOn", t.get("depends_on", []))))
            for t in record.get("tasks", [])]


class Delivery(Protocol):
    """What a task of an ended round delivered, as its outcome says (`agents.journal.TaskOutcome`)."""

    @property
    def delivered(self) -> bool: ...

    @property
    def text(self) -> str: ...

    @property
    def files(self) -> list[int]: ...


@dataclass
class PriorRound:
    """An earlier round as the conversation shows it."""

    round: int
    request: str = ""
    answer: str = ""  # the project manager's answer to the request
    tasks: list[PriorTask] = field(default_factory=list)
    final: str = ""  # the final message; empty when the round was stopped or failed before it
    finished: bool = False
    final_documents: list[dict[str, Any]] = field(default_factory=list)

    @property
    def interrupted(self) -> bool:
        return not self.finished and bool(self.tasks)

    @property
    def undelivered(self) -> list[PriorTask]:
        return [t for t in self.tasks if not t.delivered]

    @classmethod
    def of(cls, round_no: int, *, request: str = "", answer: str = "", plan: Plan | None = None,
           outcomes: Mapping[str, Delivery] | None = None, final: str = "", finished: bool = False,
           messages: Mapping[str, int] | None = None) -> PriorRound:
        """An ended round as later rounds see it: its request, the manager's answer to it, its last plan with
        what each task delivered (`outcomes`; `messages`: the id of the message each task's outcome was written
        in), its final message, and whether it finished."""
        record = plan.record() if plan is not None else {"tasks": [], "finalDocuments": []}
        tasks = prior_tasks(record)
        for task in tasks:
            outcome = (outcomes or {}).get(task.id)
            if outcome is not None and outcome.delivered:
                task.delivered, task.text, task.files = True, outcome.text, list(outcome.files)
                task.message = (messages or {}).get(task.id)
        return cls(round=round_no, request=request, answer=answer, tasks=tasks, final=final, finished=finished,
                   final_documents=list(record["finalDocuments"]))


def history_entries(rounds: Sequence[PriorRound]) -> list[tuple[str, str]]:
    """The earlier rounds as (role, content) turns, oldest first: request, plan, outcome."""
    out: list[tuple[str, str]] = []
    for r in rounds:
        tag = f"[round {r.round}]"
        if r.request.strip():
            out.append(("user", f"{tag} {r.request.strip()}"))
        if r.answer.strip() or r.tasks:
            steps = "; ".join(f"{t.id} {t.agent}: {_clip(t.instructions)} "
                              f"({'delivered' if t.delivered else 'not delivered'})" for t in r.tasks)
            out.append(("assistant", f"{tag} Plan: {r.answer.strip()}" + (f" Tasks: {steps}." if steps else "")))
        if r.final.strip():
            out.append(("assistant", f"{tag} Final answer: {r.final.strip()}"))
        elif r.interrupted:
            out.append(("assistant", f"{tag} This round was stopped before it finished. To continue it, plan "
                                     "the same tasks again with the same ids, agents and instructions: a task "
                                     "marked delivered, listed without outputs, is reused and not run again."))
    return out


def _clip(text: str, words: int = 30) -> str:
    parts = text.split()
    return " ".join(parts) if len(parts) <= words else " ".join(parts[:words]) + " …"


@dataclass(frozen=True)
class Turn:
    """A turn of the conversation with its shorter forms and their token counts, computed once when
    its round ends and stored with it (`turn_of`): a later round fits its history from these counts
    instead of shortening every earlier turn again."""

    role: str
    text: str
    tokens: int
    short: str = ""  # its most informative HISTORY_SENTENCES sentences, round tag kept
    short_tokens: int = 0
    shorter: str = ""  # its most informative sentence
    shorter_tokens: int = 0

    def within(self, budget: int) -> str:
        """The turn in `budget` tokens: whole when short (60 tokens at most), else its shorter forms;
        empty when none fits (`_sentences_within` on the stored forms)."""
        if budget <= 0:
            return ""
        if self.tokens <= min(budget, 60):
            return self.text
        for text, size in ((self.short, self.short_tokens), (self.shorter, self.shorter_tokens)):
            if text and size <= budget:
                return text
        return ""

    def record(self) -> list[Any]:
        """The turn as stored (JSON)."""
        return [self.role, self.text, self.tokens, self.short, self.short_tokens, self.shorter, self.shorter_tokens]

    @classmethod
    def from_record(cls, record: Sequence[Any]) -> Turn:
        role, text, tokens, short, short_tokens, shorter, shorter_tokens = record
        return cls(role, text, int(tokens), short, int(short_tokens), shorter, int(shorter_tokens))


def turn_of(role: str, content: str) -> Turn:
    """A turn with its shorter forms (the sentence ranking they take is the cost kept from later rounds)."""
    tokens = count_tokens(content)
    forms = _forms(content, range(HISTORY_SENTENCES, 0, -1))
    (short, short_tokens), (shorter, shorter_tokens) = [(f, count_tokens(f) if f else 0) for f in forms]
    return Turn(role, content, tokens, short, short_tokens, shorter, shorter_tokens)


def round_turns(r: PriorRound) -> list[Turn]:
    """An earlier round's turns (`history_entries`) with their shorter forms."""
    return [turn_of(role, content) for role, content in history_entries([r])]


def history_size(turns: Sequence[Turn], newest: bool = False) -> int:
    """Tokens the turns take at most in a planning prompt: whole for the newest round, else shortened."""
    return sum(t.tokens if newest or t.tokens <= 60 else (t.short_tokens or t.tokens) for t in turns)


def fit_history(history: Sequence[tuple[str, str] | Turn], budget: int) -> list[tuple[str, str]]:
    """The turns that fit `budget` tokens, newest first in priority, returned oldest first.

    The newest round's turns are kept whole when they fit; older turns, and any turn that
    does not fit, are summarised to whole sentences, never cut mid-sentence. What still does
    not fit is left out, oldest first. A `Turn` brings its shorter forms with it; a (role,
    content) pair has them computed here, when needed.
    """
    if budget <= 0 or not history:
        return []
    turns = [h if isinstance(h, Turn) else None for h in history]
    pairs = [(h.role, h.text) if isinstance(h, Turn) else h for h in history]
    newest = _round_of(pairs[-1][1])
    kept: list[tuple[str, str]] = []
    used = 0
    for (role, content), turn in zip(reversed(pairs), reversed(turns), strict=True):
        text = content
        size = turn.tokens if turn is not None else count_tokens(text)
        if _round_of(content) != newest or used + size > budget:
            text = turn.within(budget - used) if turn is not None else _sentences_within(content, budget - used)
            size = count_tokens(text) if text else 0
        if not text or used + size > budget:
            continue
        kept.append((role, text))
        used += size
    return list(reversed(kept))


def previous_requests(history: Sequence[tuple[str, str]], n: int) -> list[str]:
    """The user's requests of the latest `n` earlier rounds, newest first, without their round tags."""
    found = [content[len(_round_of(content)):].strip() for role, content in reversed(history) if role == "user"]
    return found[:n]


def _round_of(content: str) -> str:
    match = re.match(r"\[round \d+\]", content)
    return match.group(0) if match else ""


def _sentences_within(content: str, budget: int) -> str:
    """The content's most informative whole sentences (its round tag kept) within `budget` tokens."""
    if budget <= 0:
        return ""
    if count_tokens(content) <= min(budget, 60):
        return content  # short turns are kept as they are
    for n in range(HISTORY_SENTENCES, 0, -1):
        text = _sentences(content, n)
        if count_tokens(text) <= budget:
            return text
    return ""


def _sentences(content: str, n: int) -> str:
    """The content's `n` most informative whole sentences, its round tag kept."""
    return _forms(content, [n])[0]


def _forms(content: str, sizes: Sequence[int]) -> list[str]:
    """`_sentences(content, n)` for each n of `sizes`, the sentences ranked once (`summaries`)."""
    tag = _round_of(content)
    body = content[len(tag):].strip()
    forms = []
    for n, sentences in zip(sizes, summaries(body, sizes), strict=True):
        sentences = sentences or split_sentences(body)[:n]
        forms.append(f"{tag} {' '.join(s.strip() for s in sentences)}".strip())
    return forms


def _size_label(size: int) -> str:
    if size >= 1 << 20:
        return f"{size / (1 << 20):.1f} MB"
    if size >= 1 << 10:
        return f"{size / (1 << 10):.0f} KB"
    return f"{size} bytes"


def render_catalogue(facts: Sequence[Mapping[str, Any]]) -> str:
    """The planner's compact view of the workflow's documents, one line each."""
    return "\n".join(f"- {name}{said}" for name, said in catalogue_descriptions(facts).items()) or "none"


def catalogue_descriptions(facts: Sequence[Mapping[str, Any]]) -> dict[str, str]:
    """Each document's name and what its catalogue line says of it after the name."""
    lines = {}
    for f in facts:
        parts = [str(f.get("ext") or f.get("mime") or "file"), _size_label(int(f.get("size") or 0))]
        if f.get("pages"):
            parts.append(f"{f['pages']} pages")
        if f.get("sheets"):
            parts.append(f"{f['sheets']} sheets")
        if f.get("tables"):
            parts.append(f"{f['tables']} tables")
        if f.get("round"):
            parts.append(f"round {f['round']}, {f.get('origin') or 'uploaded'}")
        summary = " ".join(str(f.get("summary") or "").split())
        lines[str(f["name"])] = f" ({', '.join(parts)})" + (f": {summary}" if summary else "")
    return lines


_KIND_OF_AGENT = {"summarizer": "summary", "translator": "translation", "analyst": "answer", "writer": "report",
                  "data_extractor": "extraction"}


def answer_documents(rounds: Sequence[PriorRound]) -> list[DocumentText]:
    """Every earlier step's text as a document the planner can name like an upload ("summary-round-2.md"),
    newest round first, in the order the user saw them within a round."""
    docs: list[DocumentText] = []
    for r in sorted(rounds, key=lambda r: -r.round):
        taken: dict[str, int] = {}
        for t in r.tasks:
            if not t.delivered or not t.text.strip():
                continue
            kind = _KIND_OF_AGENT.get(t.agent, t.agent.replace("_", "-"))
            taken[kind] = taken.get(kind, 0) + 1
            name = f"{kind}-round-{r.round}" + (f"-{taken[kind]}" if taken[kind] > 1 else "") + ".md"
            first = " ".join(t.text.split())[:160]
            docs.append(DocumentText(name=name, ext="md", mime="text/markdown", size=len(t.text.encode()),
                                     items=[(name, t.text)], summary=f"{t.agent}'s {kind} in round {r.round}: {first}",
                                     round=r.round, origin=ANSWER, new=False))
    return docs


def recall_terms(text: str) -> list[str]:
    """The stemmed words of a request that find the earlier turns it refers back to (the ranker's own
    terms, `agents.knowledge.retrieval.query_terms`, in the request's language)."""
    return sorted(set(query_terms(text, ())))


def continued_request(prompt: str, previous: PriorRound | None) -> str:
    """The request a "continue" carries on: the previous round's own, when that round ended (stopped,
    failed) before it had a plan, e.g. while its files were read; else the prompt as it is."""
    if previous is None or previous.finished or previous.tasks or not previous.request.strip():
        return prompt
    return previous.request if wants_continuation(prompt) and len(prompt.split()) <= 6 else prompt


def _same(a: str, b: str) -> bool:
    return " ".join(a.split()) == " ".join(b.split())


def reusable(plan: Plan, previous: PriorRound | None) -> dict[str, PriorTask]:
    """The plan's tasks that an interrupted previous round already delivered (same id, agent and
    instructions): their results are reused instead of running them again."""
    if previous is None or not previous.interrupted:
        return {}
    done = {t.id: t for t in previous.tasks if t.delivered}
    return {t.id: done[t.id] for t in plan.tasks
            if t.id in done and done[t.id].agent == t.agent and _same(done[t.id].instructions, t.instructions)}


def previous_hint(previous: PriorRound | None) -> Interrupted | None:
    """The interrupted previous round for a plan request's hints (`agents.requests.PlanHints`)."""
    if previous is None or not previous.interrupted:
        return None
    return Interrupted(round=previous.round, final_documents=tuple(previous.final_documents),
                       tasks=tuple(InterruptedTask(id=t.id, agent=t.agent, instructions=t.instructions,
                                                   inputs=tuple(t.inputs), outputs=tuple(t.outputs),
                                                   depends_on=tuple(t.depends_on), delivered=t.delivered)
                                   for t in previous.tasks))
