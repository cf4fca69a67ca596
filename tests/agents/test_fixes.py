"""The declared pipeline of a plan's fixes: the declared order, one log line per change, each fix off by name."""

from __future__ import annotations

import logging
from dataclasses import fields

import pytest

from agents.base import OutputSpec, Plan, TaskSpec
from agents.planning.fixes import FIX_NAMES, FIXES, PARSED, VALID, FixContext, apply_fixes, unknown_fixes
from agents.registry import build_registry
from app.config import Settings, from_env
from app.config.declare import declared

AGENTS = frozenset({"analyst", "data_extractor", "summarizer", "translator", "writer"})
FORMATS = build_registry(entry_points=False).formats()


def _plan() -> Plan:
    return Plan(language="en", answer="On it.", tasks=[
        TaskSpec("t1", "Summarizer", "Summarise a.txt.", ["a.txt"], [OutputSpec("summary.xlsx")], ["t1"])])


def test_every_fix_of_a_stage_runs_in_the_declared_order_and_is_logged_with_its_name(
        caplog: pytest.LogCaptureFixture) -> None:
    context = FixContext(agents=AGENTS, uploads=("a.txt",), formats=FORMATS)
    with caplog.at_level(logging.WARNING, logger="foreman.planner"):
        fixed, notes = apply_fixes(_plan(), context, PARSED)
    [task] = fixed.tasks
    assert task.agent == "data_extractor"  # named, then given to the one agent that makes .xlsx
    assert task.depends_on == []
    said = [r.getMessage() for r in caplog.records]
    assert [s.split(")")[0] for s in said] == ["plan repaired (agent_names", "plan repaired (deliverable",
                                               "plan repaired (structure"]
    assert len(notes) == 3


def test_a_fix_switched_off_by_name_leaves_its_slip_and_the_others_still_run() -> None:
    context = FixContext(agents=AGENTS, uploads=("a.txt",), formats=FORMATS)
    fixed, notes = apply_fixes(_plan(), context, PARSED, off={"agent_names"})
    [task] = fixed.tasks
    assert task.agent == "Summarizer" and task.depends_on == []
    assert [n for n in notes if "unknown agent" in n] == []


def test_the_valid_stage_does_the_request_for_instructions_that_copy_a_worked_example() -> None:
    plan = Plan(language="en", answer="Reading it.", tasks=[
        TaskSpec("t1", "analyst", "What is the capital of France? Cite the passage.", ["kettle.pdf"])])
    context = FixContext(request="How long is the warranty?", agents=AGENTS, uploads=("kettle.pdf",),
                         examples=[("What is the capital of France?", '{"objWorkplan": []}')])
    assert apply_fixes(plan, context, VALID)[0].tasks[0].instructions == "How long is the warranty?"
    assert apply_fixes(plan, context, VALID, off={"examples"})[0] == plan


def test_the_names_are_unique_and_the_setting_takes_them_and_names_each() -> None:
    assert len(set(FIX_NAMES)) == len(FIX_NAMES) == len(FIXES) + 3
    settings = from_env({"PLAN_FIXES_OFF": "pointed, formats,pointed"})
    assert settings.plan_fixes_off == ("pointed", "formats")
    assert unknown_fixes(settings.plan_fixes_off) == []
    assert unknown_fixes(["pointer"]) == ["pointer"]
    [item] = [f for f in fields(Settings) if f.name == "plan_fixes_off"]
    said = declared(item)
    assert said is not None and all(f"`{name}`" in said.help for name in FIX_NAMES)


def test_a_name_that_is_no_fix_is_refused_at_start_up(tmp_path) -> None:
    from app.config import SettingsError
    from app.main import build_runtime, offline_model

    settings = from_env({"PLAN_FIXES_OFF": "pointed,pointer", "DATA_DIR": str(tmp_path)})
    with pytest.raises(SettingsError, match="PLAN_FIXES_OFF names no fix: pointer"):
        build_runtime(settings, offline_model(), build_registry(entry_points=False))
