"""The fixes made to a model's plan without a model call: one declared, ordered list run by one loop. Pure.

Each fix is a named function `(plan, context) -> (plan, sentences)`: the plan changed or the same
one, and one sentence per change, which the loop logs the same way for every fix ("plan repaired
(name): ...") and the round writes as its warning logs. A fix is switched off by its name
(`PlanLimits.fixes_off`, the setting PLAN_FIXES_OFF), so what each earns can be measured
(`bench/heldout.py --fixes-off`).

Two stages, in this order: `PARSED` runs on every answer the planning call gives, before the plan is
validated (what is invalid and can be fixed safely: the repair call to the model is for the rest);
`VALID` runs once, on the validated plan with its language decided (a small model's slips in a plan
that would run: `agents.planning.slips`, `agents.planning.repairs`).

Three more steps of planning rewrite the plan's answer with a model call or in view of what the round
streams, and are switched off by the same setting, where they run: `cut_answer`
(`agents.planning.cut_answer`), `grounded` and `announced` (`agents.planning.own_answer`, in
`agents.round.Runner.plan`). `OTHER_STEPS` names them.

A fix stays while it earns something on a tuning set with a real model (Qwen2.5-Coder-0.5B; earns =
right 2, partly 1, all fixes on minus it off; docs/benchmarks.md, 30 Nov, third and fifth sessions):
`examples` 3 and `formats` 1 on the 52 tuning cases; on the requests that motivated the fixes
(tests/tuning/plan_fixes.py) `pointed` 2, `copied` 1, `structure` 1 (-1 on the 52). Five earned
nothing there and were dropped with their code: `agent_names` (a name nearly an agent's), `deliverable`
(a file its agent cannot make given to the agent that makes it), `answer_language` (a reply in
another language than the user's), `attached` (an attachment the plan left unread), `left_out` (a
document the request leaves out).
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from agents.base import Plan
from agents.planning.repairs import repair_structure, unexampled
from agents.planning.slips import asked_formats, pointed_inputs, uncopied

Stage = Literal["parsed", "valid"]
PARSED: Stage = "parsed"
VALID: Stage = "valid"
Fixed = tuple[Plan, list[str]]
log = logging.getLogger("foreman.planner")


@dataclass(frozen=True)
class FixContext:
    """What the fixes read besides the plan: the request and what the planning call showed the model."""

    request: str = ""  # the user's prompt
    uploads: tuple[str, ...] = ()  # the readable documents' names
    formats: Mapping[str, Collection[str]] = field(default_factory=dict)  # what each registered agent delivers
    facts: Sequence[Mapping[str, Any]] = ()  # the documents' catalogue facts (`agents.tasks.hints.doc_facts`)
    catalogue: Mapping[str, str] = field(default_factory=dict)  # `agents.knowledge.memory.catalogue_descriptions`
    earlier: Sequence[str] = ()  # the assistant's earlier turns the prompt showed
    replanned: Collection[str] = ()  # a stopped round's instructions, planned again word for word
    examples: Sequence[tuple[str, str]] = ()  # the planning prompt's worked examples (request, answer)


PlanFix = Callable[[Plan, FixContext], Fixed]


@dataclass(frozen=True)
class Fix:
    """One fix of the pipeline: its name (for PLAN_FIXES_OFF and the log), its stage and its function."""

    name: str
    stage: Stage
    run: PlanFix


FIXES: tuple[Fix, ...] = (
    # Dependencies, outputs, repeated tasks, cycles, inputs and final documents that cannot run.
    Fix("structure", PARSED, lambda p, c: repair_structure(p, c.uploads, c.formats)),
    # Instructions copying a worked example of the planning prompt: the user's request instead.
    Fix("examples", VALID, lambda p, c: unexampled(p, c.request, c.examples)),
    # Instructions copying the documents' catalogue lines or earlier turns: the copies taken out.
    Fix("copied", VALID, lambda p, c: uncopied(p, c.request, c.catalogue, c.earlier, c.replanned)),
    # The documents the request points at ("the second one"), read by first tasks that read none.
    Fix("pointed", VALID, lambda p, c: pointed_inputs(p, c.request, c.facts)),
    # A file type the request names (CSV, Excel) that no task delivers: the last task delivers it.
    Fix("formats", VALID, lambda p, c: asked_formats(p, c.request, c.formats, c.facts)),
)
OTHER_STEPS = ("cut_answer", "grounded", "announced")
FIX_NAMES = tuple(f.name for f in FIXES) + OTHER_STEPS


def apply_fixes(plan: Plan, context: FixContext, stage: Stage, off: Collection[str] = ()) -> Fixed:
    """The plan with the fixes of `stage` applied in the declared order (those named in `off` left
    out), and every change in a sentence, each logged as a warning with its fix's name."""
    notes: list[str] = []
    for fix in FIXES:
        if fix.stage != stage or fix.name in off:
            continue
        plan, said = fix.run(plan, context)
        for note in said:
            log.warning("plan repaired (%s): %s", fix.name, note)
        notes += said
    return plan, notes


def unknown_fixes(names: Collection[str]) -> list[str]:
    """The names in `names` that name no fix or step of planning (a setting with a typo)."""
    return [n for n in names if n not in FIX_NAMES]


def repair_plan(plan: Plan, agents: Collection[str], uploads: Collection[str], request: str = "",
                formats: Mapping[str, Collection[str]] | None = None) -> Fixed:
    """The `PARSED` stage alone, as the planning call's answer gets it: every fix of what is invalid.
    `request` is given to the fixes and read by none of them: a registered agent the model chose is
    kept whatever the request says."""
    known = frozenset(agents)
    return apply_fixes(plan, FixContext(request=request, uploads=tuple(uploads),
                                        formats={a: f for a, f in (formats or {}).items() if a in known}), PARSED)
