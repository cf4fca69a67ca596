"""The project manager: plans a round from the request, writes its plan message and the final review."""

from __future__ import annotations

import json
from dataclasses import dataclass, field, replace
from typing import Any

from agents.base import DocumentText, OutputFile, Plan, TaskResult
from agents.calls import Ledger, context_tokens, messages
from agents.errors import PlanError, PlanFormatError
from agents.hints import doc_facts
from agents.inputs import language_name
from agents.notices import nothing_delivered, unreadable_note
from agents.memory import PriorRound, fit_history, previous_hint, render_catalogue
from agents.phrases import say
from agents.plan import PLAN_SCHEMA, parse_plan, plan_to_json, validate_plan
from agents.registry import Registry
from agents.toolkit.language import detect_language
from agents.toolkit.sentences import summarize
from agents.toolkit.tables import find_tables
from agents.toolkit.cpu import off_loop_if_long, text_size
from agents.toolkit.tokens import count_tokens, fit_to_budget
from app.model import Model, ModelOutputError, ModelRequest, Usage

PM_NAME = "project_manager"

PLAN_SYSTEM = """You are the project manager of a team of agents. Read the user's request, the \
documents (name, size, summary) and the agents' descriptions, then answer with a JSON work plan:
- userLanguage: ISO 639-1 code of the language the user writes in;
- objUserResponse: your answer to the user in that language: what you understood and will do;
- objWorkplan: tasks, each {{id, agent, instructions, inputs, outputs, dependsOn}}. `agent` is one \
of the agents listed; `inputs` are uploaded document names or outputs of tasks this task depends \
on; `outputs` are the files the task delivers ({{name with extension, type, purpose}}); \
`dependsOn` lists the ids of tasks whose results it needs. Tasks without dependencies run in \
parallel. At most {max_tasks} tasks; none when the request needs no agent;
- objFinalDocuments: the task outputs the user receives at the end."""

FINAL_SYSTEM = """You are the project manager. Write the final message of this round to the user \
in {language}: review in a few sentences what the agents delivered against the plan. A checklist \
of delivered and missing items is appended to your message automatically: do not repeat it, and \
never claim results that are not in the material."""


@dataclass
class RoundInput:
    """What the project manager plans from: the request, its documents and earlier rounds."""

    prompt: str
    documents: list[DocumentText]
    history: list[tuple[str, str]] = field(default_factory=list)  # (role, content), oldest first
    previous: PriorRound | None = None  # the latest earlier round (to continue it after a stop)
    round: int = 0


@dataclass
class PlanLimits:
    """Bounds on a plan and on the planning prompt."""

    max_tasks: int = 8
    context_tokens: int | None = None  # None: the model's own context size
    output_tokens: int = 2000  # kept free for the plan itself
    history_share: float = 0.3  # of the room left after the request and the agents


@dataclass
class PlanOutcome:
    """A validated plan and what making it cost."""

    plan: Plan
    usage: Usage
    model: str
    offline: bool


@dataclass
class FinalOutcome:
    """The final message of a round and what writing it cost."""

    text: str
    usage: Usage
    model: str
    offline: bool


def request_language(inp: RoundInput) -> str:
    """The language of the user's request (earlier user turns help when the prompt is short)."""
    earlier = " ".join(c for r, c in inp.history if r == "user")[-2000:]
    fallback = detect_language(earlier, default="en") if earlier.strip() else "en"
    return detect_language(inp.prompt, default=fallback) if inp.prompt.strip() else fallback


async def make_plan(inp: RoundInput, model: Model, registry: Registry,
                    limits: PlanLimits | None = None) -> PlanOutcome:
    """Ask the model for a work plan, validate it, repair it once; `PlanError` if still invalid."""
    limits = limits or PlanLimits()
    language = request_language(inp)
    # A file that could not be read is not planned over: the answer says why and what to do.
    unread = [d for d in inp.documents if d.problem]
    inp = replace(inp, documents=[d for d in inp.documents if not d.problem])
    # Sizing, table-finding and summarising long documents: seconds of CPU, kept off the loop.
    size = len(inp.prompt) + sum(text_size(d.items) for d in inp.documents)
    request = await off_loop_if_long(size, _plan_request, inp, model, registry, limits, language)
    ledger = Ledger(model)
    doc_names = [d.name for d in inp.documents]
    plan, errors, answer = await _attempt(ledger, request, registry, doc_names, limits)
    if errors:
        listed = "\n".join(f"- {e}" for e in errors)
        repair = ModelRequest(
            purpose="repair",
            messages=request.messages + [
                {"role": "assistant", "content": answer or "(no answer)"},
                {"role": "user", "content": f"This plan cannot run:\n{listed}\n"
                                            "Answer with the corrected plan as JSON only."},
            ],
            schema=PLAN_SCHEMA, schema_name="plan", agent=PM_NAME,
            hints=dict(request.hints, errors=errors), max_tokens=request.max_tokens,
        )
        plan, errors, _ = await _attempt(ledger, repair, registry, doc_names, limits)
        if errors:
            raise PlanError("The project manager could not make a valid work plan, even after "
                            "one repair: " + "; ".join(errors), errors=errors, usage=ledger.usage)
    assert plan is not None
    plan.language = plan.language or language  # the model named no usable language code
    note = unreadable_note(unread, plan.language)
    if note:
        plan.answer = f"{plan.answer.strip()}\n\n{note}".strip()
    return PlanOutcome(plan=plan, usage=ledger.usage, model=ledger.model_name, offline=ledger.offline)


async def _attempt(ledger: Ledger, request: ModelRequest, registry: Registry, doc_names: list[str],
                   limits: PlanLimits) -> tuple[Plan | None, list[str], str]:
    """One planning call: the plan, its errors (empty when valid) and the raw answer."""
    try:
        response = await ledger.ask(request)
    except ModelOutputError as exc:  # answered, but not with valid JSON: worth one repair
        return None, [f"the answer is not a valid plan: {exc}"], ""
    try:
        plan = parse_plan(response.data if response.data is not None else response.text)
    except PlanFormatError as exc:
        return None, exc.errors, response.text
    return plan, validate_plan(plan, registry.names(), doc_names, limits.max_tasks), response.text


def _plan_request(inp: RoundInput, model: Model, registry: Registry, limits: PlanLimits,
                  language: str) -> ModelRequest:
    window = limits.context_tokens or context_tokens(model, PM_NAME)
    output = min(limits.output_tokens, window // 4)  # a small model cannot spare 2000 tokens
    budget = max(512, window - output)
    system = PLAN_SYSTEM.format(max_tasks=limits.max_tasks)
    agents = registry.descriptions()
    agent_lines = "\n".join(f"- {a['name']}: {a['description']}" for a in agents)
    [prompt] = fit_to_budget([inp.prompt], budget // 3)  # a pasted novel must not crowd out the rest
    fixed = count_tokens(system) + count_tokens(prompt) + count_tokens(agent_lines) + 100
    room = max(0, budget - fixed - 40 * len(inp.documents))  # each document line's name and sizes
    facts = [doc_facts(d, tables=len(find_tables(d.items))) for d in inp.documents]
    for fact, doc in zip(facts, inp.documents, strict=True):
        fact["summary"] = doc.summary or " ".join(summarize(doc.text, max_sentences=3))
    history_budget = int(room * limits.history_share) if inp.history else 0
    summaries = fit_to_budget([f["summary"] for f in facts], room - history_budget) if facts else []
    for fact, summary in zip(facts, summaries, strict=True):
        fact["summary"] = summary
    history = fit_history(inp.history, history_budget)
    doc_lines = render_catalogue(facts)
    history_lines = "\n".join(f"{role}: {content}" for role, content in history) or "none"
    user = (f"Request (written in {language_name(language)}):\n{prompt}\n\nAgents:\n{agent_lines}\n\n"
            f"Documents:\n{doc_lines}\n\nEarlier rounds:\n{history_lines}")
    hints: dict[str, Any] = {
        "kind": "plan", "prompt": inp.prompt, "language": language, "agents": agents,
        "documents": facts, "history": [list(h) for h in history], "max_tasks": limits.max_tasks,
        "previous": previous_hint(inp.previous),
    }
    return ModelRequest(purpose="plan", messages=messages(system, user), schema=PLAN_SCHEMA,
                        schema_name="plan", agent=PM_NAME, hints=hints, max_tokens=output)


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


async def write_final(inp: RoundInput, plan: Plan, results: dict[str, TaskResult | None],
                      skipped: dict[str, str], delivered: list[OutputFile], model: Model,
                      failures: dict[str, str] | None = None) -> FinalOutcome:
    """The round's `last` message: a review by the model plus a checklist of delivered and missing.

    `failures` says why each failed task failed (by task id), for the checklist.
    """
    lang = plan.language
    review = _review(plan, results, skipped, delivered)
    review["reasons"] = dict(failures or {})
    excerpts = fit_to_budget([r.text for r in results.values() if r is not None],
                             max(256, context_tokens(model, PM_NAME) // 2))
    material = "\n\n".join(f"Result:\n{e}" for e in excerpts) or "no results"
    user = (f"Request:\n{inp.prompt}\n\nPlan:\n{json.dumps(plan_to_json(plan), ensure_ascii=False)}\n\n"
            f"Review:\n{json.dumps(review, ensure_ascii=False)}\n\n{material}")
    request = ModelRequest(
        purpose="final",
        messages=messages(FINAL_SYSTEM.format(language=language_name(lang)), user),
        agent=PM_NAME,
        hints={"kind": "final", "prompt": inp.prompt, "language": lang, "review": review},
        max_tokens=800,
    )
    ledger = Ledger(model)
    opening = (await ledger.ask(request)).text.strip()
    if plan.tasks and not review["done"]:  # said plainly, whatever the model wrote
        opening = f"{nothing_delivered(lang)}\n\n{opening}".strip()
    text = f"{opening}\n\n{_checklist(plan, review, lang)}".strip()
    return FinalOutcome(text=text, usage=ledger.usage, model=ledger.model_name, offline=ledger.offline)


def _review(plan: Plan, results: dict[str, TaskResult | None], skipped: dict[str, str],
            delivered: list[OutputFile]) -> dict[str, Any]:
    done = [t.id for t in plan.tasks if results.get(t.id) is not None]
    # A task that neither finished nor was skipped did not deliver: count it as failed.
    failed = [t.id for t in plan.tasks if t.id not in done and t.id not in skipped]
    names = [f.name for f in delivered]
    missing = [d.name for d in plan.final_documents if d.name not in names]
    return {"delivered": names, "done": done, "failed": failed,
            "skipped": [[t, skipped[t]] for t in skipped], "missing": missing}


def _checklist(plan: Plan, review: dict[str, Any], lang: str) -> str:
    agents = {t.id: t.agent for t in plan.tasks}
    deps = {t.id: t.depends_on for t in plan.tasks}
    broken = set(review["failed"]) | {t for t, _ in review["skipped"]}
    blocks = [f"**{say('delivered', lang)}:** " + (", ".join(review["delivered"])
                                                    or say("nothing_delivered", lang))]
    if review["done"]:
        blocks.append(f"**{say('done_steps', lang)}:** "
                      + ", ".join(f"{t} ({agents.get(t, '?')})" for t in review["done"]))
    reasons = review.get("reasons", {})
    missing = [say("task_failed", lang, id=t, agent=agents.get(t, "?"))
               + (f": {reasons[t].rstrip('.')}" if reasons.get(t) else "") for t in review["failed"]]
    for task_id, reason in review["skipped"]:
        cause = next((d for d in deps.get(task_id, []) if d in broken), None)
        if cause:  # say it in the user's language rather than the scheduler's English
            reason = say("depends_on_broken", lang, id=cause, agent=agents.get(cause, "?"))
        missing.append(say("task_skipped", lang, id=task_id, agent=agents.get(task_id, "?"),
                           reason=reason))
    missing += [say("doc_never_produced", lang, name=name) for name in review["missing"]]
    if missing:
        blocks.append(f"**{say('missing', lang)}:**\n" + "\n".join(f"- {m}" for m in missing))
    return "\n\n".join(blocks)
