"""The project manager: plans a round from the request and writes its plan message (its final review:
`agents.planning.review`; what the planning call shows a model: `agents.planning.prompt`)."""

from __future__ import annotations

import logging
import re
from dataclasses import dataclass, field, replace
from typing import Any

from msgspec import structs

from agents.base import DocumentText, Plan
from agents.errors import PlanError, PlanFormatError
from agents.knowledge.memory import (
    PriorRound,
    Turn,
    catalogue_descriptions,
    continued_request,
    fit_history,
    previous_hint,
    render_catalogue,
)
from agents.language import detect_in_conversation, detect_language, detector_loaded, load_detector, summarize
from agents.model import Model, ModelOutputError, ModelRequest, Usage
from agents.phrases import say
from agents.planning.cut_answer import complete_answer
from agents.planning.fixes import PARSED, VALID, FixContext, apply_fixes
from agents.planning.notices import unreadable_note
from agents.planning.plan import parse_plan, plan_schema, validate_plan
from agents.planning.prompt import AGENT_BRIEFS, PLAN_SYSTEM, beginning, examples, makers, short_description
from agents.planning.repairs import close_json
from agents.planning.slips import compared
from agents.registry import Registry
from agents.requests import AgentBrief, PlanHints
from agents.tasks.calls import Ledger, context_tokens
from agents.tasks.hints import doc_facts
from agents.tasks.inputs import language_name
from agents.toolkit.cpu import off_loop, off_loop_if_long, text_size
from agents.toolkit.tables import document_tables
from agents.toolkit.tokens import count_tokens, fit_to_budget

PM_NAME = "project_manager"
SHORT_PROMPT_WORDS = 3  # up to this many words, the model's userLanguage may break a tie
DOC_TOKENS = 120  # of statistics and first sentences per document in the planning prompt
log = logging.getLogger("foreman.planner")


@dataclass
class RoundInput:
    """What the project manager plans from: the request, its documents and earlier rounds."""

    prompt: str
    documents: list[DocumentText]
    history: list[tuple[str, str]] = field(default_factory=list)  # (role, content), oldest first
    turns: list[Turn] = field(default_factory=list)  # the first turns of `history` with their stored shorter forms
    previous: PriorRound | None = None  # the latest earlier round (to continue it after a stop)
    round: int = 0
    changes: str = ""  # a revision at the user's request: the plan proposed and the changes (`agents.planning.replan`)


@dataclass
class PlanLimits:
    """Bounds on a plan and on the planning prompt."""

    max_tasks: int = 8
    context_tokens: int | None = None  # None: the model's own context size
    output_tokens: int = 2000  # kept free for the plan itself
    history_share: float = 0.3  # of the room left after the request and the agents
    fixes_off: frozenset[str] = frozenset()  # PLAN_FIXES_OFF: fixes not made (`agents.planning.fixes`)


@dataclass
class PlanOutcome:
    """A validated plan and what making it cost."""

    plan: Plan
    usage: Usage
    model: str
    offline: bool
    repairs: list[str] = field(default_factory=list)  # fixes made without the model, for the log
    unread: list[str] = field(default_factory=list)  # documents that could not be read
    readable: int = 0  # documents that could
    meta: dict[str, Any] = field(default_factory=dict)  # for the plan message's metadata (citations)

    @property
    def record(self) -> dict[str, Any]:
        """The plan as its message stores it (`Plan.record`)."""
        return self.plan.record()

    @property
    def message(self) -> str:
        """The project manager's chat message for the plan (`render_plan_message`)."""
        return render_plan_message(self.plan)


def request_language(inp: RoundInput) -> str:
    """The language of the user's request. A prompt of a word or two says little ("continue", "ok" are
    words of several languages): in a conversation, the language the user has written in is the prior
    its evidence has to outweigh ("Et ensuite ?" after German requests is French, "continue" is not)."""
    earlier = " ".join(re.sub(r"^\[round \d+\]\s*", "", c) for r, c in inp.history if r == "user")[-2000:]
    if not earlier.strip():
        return detect_language(inp.prompt, default="en")
    usual = detect_language(earlier, default="en")
    return detect_in_conversation(inp.prompt, usual) if inp.prompt.strip() else usual


def _one_or_two_words(prompt: str) -> bool:
    return len(re.findall(r"\w+", prompt)) <= 2


def _reply_language(inp: RoundInput, detected: str, model_says: str) -> str:
    """The detector decides; the model's `userLanguage` only breaks the tie on a prompt too short
    for the detector (a word or two, where it falls back to its default) that has no conversation
    before it to go by."""
    conversation = any(r == "user" for r, _ in inp.history)
    if len(inp.prompt.split()) <= SHORT_PROMPT_WORDS and model_says and \
            not (conversation and _one_or_two_words(inp.prompt)) and not detect_language(inp.prompt, default=""):
        return model_says
    return detected


async def make_plan(inp: RoundInput, model: Model, registry: Registry,
                    limits: PlanLimits | None = None) -> PlanOutcome:
    """Ask the model for a work plan, validate it and repair it: first without the model (safe,
    logged fixes), then once by the model, shown its own answer and the exact errors."""
    limits = limits or PlanLimits()
    inp = replace(inp, prompt=continued_request(inp.prompt, inp.previous))
    if not detector_loaded():  # a process that skipped the start-up load: load it in a thread
        await off_loop(load_detector)
    language = request_language(inp)
    # A file that could not be read is not planned over: the answer says why and what to do.
    unread = [d for d in inp.documents if d.problem]
    inp = replace(inp, documents=[d for d in inp.documents if not d.problem])
    # Sizing, table-finding and summarising long documents: seconds of CPU, kept off the loop.
    size = len(inp.prompt) + sum(text_size(d.items) for d in inp.documents)
    request = await off_loop_if_long(size, _plan_request, inp, model, registry, limits, language)
    ledger = Ledger(model)
    facts, earlier = _catalogue_facts(request), [c for role, c in _hints(request).history if role == "assistant"]
    names = frozenset(registry.names())
    context = FixContext(
        request=inp.prompt, uploads=tuple(d.name for d in inp.documents),
        formats={a: f for a, f in registry.formats().items() if a in names}, facts=facts,
        catalogue=catalogue_descriptions(facts), earlier=earlier,
        replanned=[t.instructions for t in inp.previous.tasks] if inp.previous and inp.previous.interrupted else [],
        examples=list(dict.fromkeys(examples(True) + examples(False))))
    check = _Checker(registry.names(), [d.name for d in inp.documents], limits.max_tasks, context,
                     limits.fixes_off, registry.formats())
    first = await check.ask(ledger, request)
    outcome = first
    if first.errors:
        outcome = await check.ask(ledger, _second_request(request, first, limits, model))
        if outcome.errors:
            raise PlanError("The project manager could not make a valid work plan, even after "
                            "one repair: " + "; ".join(outcome.errors), errors=outcome.errors,
                            usage=ledger.usage)
    plan = outcome.plan
    assert plan is not None
    plan.language = _reply_language(inp, language, plan.language)
    repairs = first.repairs + (outcome.repairs if outcome is not first else [])
    # Comparing every task's instructions with the catalogue and the earlier turns is CPU work: a long one off the loop.
    fixed: tuple[Plan, list[str]] = await off_loop_if_long(
        compared(plan, context.catalogue, earlier), apply_fixes, plan, context, VALID, limits.fixes_off)
    plan, notes = fixed
    repairs += notes
    if not model.extractive and "cut_answer" not in limits.fixes_off:  # an answer cut mid-sentence is finished
        plan.answer, fix = await complete_answer(ledger, plan.answer, inp.prompt, plan.language, PM_NAME)
        if fix:
            log.warning("plan repaired (cut_answer): %s", fix)
            repairs.append(fix)
    note = unreadable_note(unread, plan.language)
    if note and model.extractive and not inp.documents and not plan.tasks:
        # Nothing readable was sent: the note (which file, why, what to do) is the whole answer, not
        # also a request to upload documents the user just sent.
        plan.answer = f"{say('offline_plan', plan.language)}\n\n{note}"
    elif note:
        plan.answer = f"{plan.answer.strip()}\n\n{note}".strip()
    return PlanOutcome(plan=plan, usage=ledger.usage, model=ledger.model_name, offline=ledger.offline,
                       repairs=repairs, unread=[d.name for d in unread], readable=len(inp.documents))


@dataclass
class _Attempt:
    """One planning call's result: the plan (repaired), what is still wrong, what was fixed."""

    plan: Plan | None
    errors: list[str]
    answer: str
    repairs: list[str] = field(default_factory=list)
    truncated: bool = False


@dataclass
class _Checker:
    agents: list[str]
    documents: list[str]
    max_tasks: int
    context: FixContext
    off: frozenset[str] = frozenset()  # fixes not made
    formats: dict[str, tuple[str, ...]] = field(default_factory=dict)  # what each agent delivers

    async def ask(self, ledger: Ledger, request: ModelRequest) -> _Attempt:
        """One planning call, parsed, repaired without the model where that is safe, validated."""
        try:
            response = await ledger.ask(request)
        except ModelOutputError as exc:  # answered, but not with valid JSON: worth one repair
            return _Attempt(None, [f"the answer is not a valid plan: {exc}"], "")
        data, repairs, truncated = response.data, [], False
        if response.finish_reason == "length":
            truncated = True
            # What the client parsed from a cut answer may be an inner object; close the whole.
            data = close_json(response.text)
            if data is not None:
                repairs.append(f"the answer was cut at the token limit ({request.max_tokens} "
                               "tokens); its unfinished end was dropped")
            else:
                return _Attempt(None, [f"the answer was cut off at the token limit ({request.max_tokens} "
                                       "tokens) before the JSON was complete"],
                                response.text, truncated=True)
        try:
            plan = parse_plan(data if data is not None else response.text)
        except PlanFormatError as exc:
            return _Attempt(None, exc.errors, response.text, truncated=truncated)
        for fix in repairs:
            log.warning("plan repaired: %s", fix)
        plan, fixes = apply_fixes(plan, self.context, PARSED, self.off)
        errors = validate_plan(plan, self.agents, self.documents, self.max_tasks, self.formats)
        return _Attempt(plan, errors, response.text, repairs + fixes, truncated)


def _second_request(request: ModelRequest, first: _Attempt, limits: PlanLimits,
                    model: Model) -> ModelRequest:
    """A cut answer is asked again with more room when the window has it (else more briefly);
    any other is shown back to the model with the exact errors."""
    window = limits.context_tokens or context_tokens(model, PM_NAME)
    used = sum(count_tokens(m["content"]) for m in request.messages) + 50
    room = min(window - used, 2 * (request.max_tokens or 0))
    if first.truncated and room > (request.max_tokens or 0):
        return replace(request, purpose="repair", max_tokens=room,
                       hints=structs.replace(_hints(request), errors=tuple(first.errors)))
    listed = "\n".join(f"- {e}" for e in first.errors)
    shorter = "Keep it short: fewer tasks and shorter texts.\n" if first.truncated else ""
    return replace(
        request, purpose="repair",
        messages=request.messages + [
            {"role": "assistant", "content": first.answer or "(empty answer)"},
            {"role": "user", "content": f"This plan cannot run:\n{listed}\n{shorter}"
                                        "Answer with the corrected plan as JSON only."}],
        hints=structs.replace(_hints(request), errors=tuple(first.errors)))


def _plan_request(inp: RoundInput, model: Model, registry: Registry, limits: PlanLimits,
                  language: str) -> ModelRequest:
    window = limits.context_tokens or context_tokens(model, PM_NAME)
    # A plan rarely needs 600 tokens; a small model that loops would fill any room it gets, and a
    # cut answer is salvaged or asked again with more room (`_second_request`).
    output = min(limits.output_tokens, max(256, window // 6))
    budget = max(512, window - output)
    agents = registry.descriptions()
    # A few words each: a small model copies long descriptions into its plan instead of choosing.
    agent_lines = ", ".join(f"{a['name']} ({AGENT_BRIEFS.get(a['name']) or short_description(a['description'])})"
                            for a in agents)
    system = PLAN_SYSTEM.format(max_tasks=limits.max_tasks, agents=agent_lines, files=makers(agents))
    [prompt] = fit_to_budget([inp.prompt], budget // 3)  # a pasted novel must not crowd out the rest
    fixed = count_tokens(system) + count_tokens(prompt) + 60
    room = max(0, budget - fixed - 40 * len(inp.documents))  # each document line's name and sizes
    facts = [doc_facts(d, tables=len(document_tables(d))) for d in inp.documents]
    for i, doc in enumerate(inp.documents):
        # The statistics say how big; the first sentences say what it is about.
        stats = doc.summary or " ".join(summarize(doc.text, max_sentences=2))
        start = beginning(doc)
        facts[i] = structs.replace(facts[i], summary=f"begins \"{start}\"; {stats}" if start and doc.summary else stats)
    history_budget = int(room * limits.history_share) if inp.history else 0
    summaries = fit_to_budget([f.summary for f in facts], min(room - history_budget,
                                                              DOC_TOKENS * len(facts))) if facts else []
    facts = [structs.replace(fact, summary=summary) for fact, summary in zip(facts, summaries, strict=True)]
    history = fit_history(_turns(inp), history_budget)
    user = f"Request (written in {language_name(language)}):\n{prompt}"
    # "Documents: none" is the cue, matching the answer-only example, that no agent has material.
    user += ("\n\nDocuments:\n" + render_catalogue([structs.asdict(f) for f in facts])) if facts else "\n\nDocuments: none"
    if history:
        user += "\n\nEarlier rounds:\n" + "\n".join(f"{role}: {content}" for role, content in history)
    if inp.changes:
        user += f"\n\n{inp.changes}"
    hints = PlanHints(prompt=inp.prompt, language=language, documents=tuple(facts),
                      agents=tuple(AgentBrief(a["name"], a["description"]) for a in agents),
                      history=tuple(history), max_tasks=limits.max_tasks, previous=previous_hint(inp.previous))
    turns = [{"role": "system", "content": system}]
    for asked, answered in examples(bool(facts)):
        turns += [{"role": "user", "content": asked}, {"role": "assistant", "content": answered}]
    turns.append({"role": "user", "content": user})
    return ModelRequest(purpose="plan", messages=turns,
                        schema=plan_schema(registry.names(), limits.max_tasks), schema_name="plan",
                        agent=PM_NAME, hints=hints, max_tokens=output, temperature=0.0, validate=False)


def _hints(request: ModelRequest) -> PlanHints:
    assert isinstance(request.hints, PlanHints), "a plan request carries PlanHints"
    return request.hints


def _catalogue_facts(request: ModelRequest) -> list[dict[str, Any]]:
    """The plan request's documents as the catalogue and the slip checks read them."""
    return [structs.asdict(f) for f in _hints(request).documents]


def _turns(inp: RoundInput) -> list[tuple[str, str] | Turn]:
    """The history with the stored shorter forms of the turns the app read (`RoundInput.turns`), so
    fitting it shortens nothing again; turns added since (a revision's) are plain pairs."""
    n = len(inp.turns)
    if n and n <= len(inp.history) and all((t.role, t.text) == h for t, h in zip(inp.turns, inp.history)):
        return [*inp.turns, *inp.history[n:]]
    return list(inp.history)


def history_reach(model: Model) -> int:
    """Tokens of earlier turns a planning prompt could hold at most with this model: a round reads
    the newest turns up to this size (more could never be shown)."""
    return int(context_tokens(model, PM_NAME) * PlanLimits().history_share)


def render_plan_message(plan: Plan) -> str:
    """The project manager's chat message: its answer and the work plan as Markdown."""
    lang = plan.language
    lines = [plan.answer.strip()]
    if plan.tasks:
        lines += ["", f"### {say('work_plan', lang)}", ""]
        for number, task in enumerate(plan.tasks, 1):
            instructions = " ".join(task.instructions.split())
            if len(instructions) > 300:
                instructions = instructions[:297] + "…"
            details = []
            if task.inputs:
                details.append(f"{say('inputs', lang)}: {', '.join(task.inputs)}")
            if task.outputs:
                details.append(f"{say('outputs', lang)}: {', '.join(o.name for o in task.outputs)}")
            if task.depends_on:
                details.append(f"{say('after', lang)}: {', '.join(task.depends_on)}")
            suffix = f" ({'; '.join(details)})" if details else ""
            lines.append(f"{number}. **{task.agent}** `{task.id}`: {instructions}{suffix}")
    if plan.final_documents:
        lines += ["", f"**{say('documents_to_deliver', lang)}:** "
                      + ", ".join(d.name for d in plan.final_documents)]
    return "\n".join(lines)
