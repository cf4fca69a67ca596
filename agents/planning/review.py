"""The project manager's final review of a round: a few sentences by the model on what the agents
delivered against the plan, and a checklist of what was delivered and what is missing, written without it."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from agents.base import OutputFile, Plan, TaskResult
from agents.language import language_name as cldr_name
from agents.model import Model, ModelRequest, Usage
from agents.phrases import say
from agents.planning.manager import PM_NAME, RoundInput
from agents.planning.notices import nothing_delivered
from agents.planning.plan import plan_to_json
from agents.requests import FinalHints, Review
from agents.tasks.calls import Ledger, context_tokens, messages
from agents.tasks.inputs import language_name
from agents.tasks.outputs import delivers
from agents.toolkit.tokens import fit_to_budget_off_loop

FINAL_SYSTEM = """Write only in {language}. You are the project manager. Write the final message of \
this round to the user: review in a few sentences what the agents delivered against the plan. A checklist \
of delivered and missing items is appended to your message automatically: do not repeat it, and \
never claim results that are not in the material."""


@dataclass
@dataclass
class FinalOutcome:
    """The final message of a round and what writing it cost."""

    text: str
    usage: Usage
    model: str
    offline: bool


async def write_final(inp: RoundInput, plan: Plan, results: dict[str, TaskResult | None],
                      skipped: dict[str, str], delivered: list[OutputFile], model: Model,
                      failures: dict[str, str] | None = None, stand_in: bool = False) -> FinalOutcome:
    """The round's `last` message: a review by the model plus a checklist of delivered and missing.

    `failures` says why each failed task failed (by task id), for the checklist. `stand_in`: `model`
    writes in place of the round's model, whose review call failed (the round itself was not offline).
    """
    lang = plan.language
    review = _review(plan, results, skipped, delivered)
    review["reasons"] = dict(failures or {})
    texts = [r.text for r in results.values() if r is not None]
    excerpts = await fit_to_budget_off_loop(texts, max(256, context_tokens(model, PM_NAME) // 2))
    material = "\n\n".join(f"Result:\n{e}" for e in excerpts) or "no results"
    # The plan without its own answer: written before any task ran, and over documents it is drawn from
    # their list only; a small model reviewing the round repeated it instead of what the agents found.
    shown = {k: v for k, v in plan_to_json(plan).items() if k != "objUserResponse"}
    user = (f"Request:\n{inp.prompt}\n\nPlan:\n{json.dumps(shown, ensure_ascii=False)}\n\n"
            f"Review:\n{json.dumps(review, ensure_ascii=False)}\n\n{material}")
    request = ModelRequest(
        purpose="final",
        messages=messages(FINAL_SYSTEM.format(language=language_name(lang)), user),
        agent=PM_NAME,
        hints=FinalHints(prompt=inp.prompt, language=lang, stand_in=stand_in, review=Review(
            delivered=tuple(review["delivered"]), missing=tuple(review["missing"]), done=tuple(review["done"]),
            failed=tuple(review["failed"]), skipped=tuple((t, r) for t, r in review["skipped"]))),
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
    missing = [d.name for d in plan.final_documents if not delivers(d.name, names)]
    # Done, but still in another language after its redo (`agents.tasks.run`): not what was asked.
    foreign = [[t, r.meta["languageMismatch"], r.meta.get("languageWritten", "")] for t in done
               if (r := results[t]) is not None and r.meta.get("languageMismatch")]
    return {"delivered": names, "done": done, "failed": failed,
            "skipped": [[t, skipped[t]] for t in skipped], "missing": missing, "wrongLanguage": foreign}


def _checklist(plan: Plan, review: dict[str, Any], lang: str) -> str:
    agents = {t.id: t.agent for t in plan.tasks}
    deps = {t.id: t.depends_on for t in plan.tasks}
    broken = set(review["failed"]) | {t for t, _ in review["skipped"]}
    # "Delivered: no documents" only where documents were planned: a question answered asks for none.
    planned = plan.final_documents or any(t.outputs for t in plan.tasks)
    blocks = [f"**{say('delivered', lang)}:** " + (", ".join(review["delivered"]) or say("nothing_delivered", lang))
              ] if review["delivered"] or planned else []
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
    missing += [say("doc_never_produced", lang, name=name) for name in review["missing"]
                if not any(name in m for m in missing)]  # a failed step's reason may have said it
    missing += [say("wrong_language", lang, id=t, agent=agents.get(t, "?"), wanted=cldr_name(wanted, lang),
                    written=cldr_name(written, lang) if written else "?") for t, wanted, written in review["wrongLanguage"]]
    if missing:
        blocks.append(f"**{say('missing', lang)}:**\n" + "\n".join(f"- {m}" for m in missing))
    return "\n\n".join(blocks)
