"""The declared pipeline of a plan's fixes: the declared order, one log line per change, each fix off by name."""

from __future__ import annotations

import logging
from dataclasses import fields

import pytest

from agents.base import Plan, TaskSpec
from agents.planning.fixes import FIX_NAMES, FIXES, VALID, FixContext, apply_fixes, unknown_fixes
from agents.registry import build_registry
from app.config import Settings, from_env
from app.config.declare import declared

FORMATS = build_registry(entry_points=False).formats()
EXAMPLES = [("What is the capital of France?", '{"objWorkplan": []}')]


def _plan() -> Plan:
    return Plan(language="en", answer="On it.", tasks=[
        TaskSpec("t1", "analyst", "What is the capital of France? Cite the passage.", ["kettle.pdf"])])


def _context() -> FixContext:
    return FixContext(request="Give me the warranty terms as a CSV file.", uploads=("kettle.pdf",), formats=FORMATS,
                      examples=EXAMPLES)


def test_every_fix_of_a_stage_runs_in_the_declared_order_and_is_logged_with_its_name(
        caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.WARNING, logger="foreman.planner"):
        fixed, notes = apply_fixes(_plan(), _context(), VALID)
    [task] = fixed.tasks
    assert task.instructions == "Give me the warranty terms as a CSV file."  # the request, not the example's
    assert (task.agent, [o.type for o in task.outputs]) == ("data_extractor", ["csv"])  # then the CSV asked for
    said = [r.getMessage() for r in caplog.records]
    assert list(dict.fromkeys(s.split(")")[0] for s in said)) == ["plan repaired (examples", "plan repaired (formats"]
    assert len(notes) == len(said) == 3


def test_a_fix_switched_off_by_name_leaves_its_slip_and_the_others_still_run() -> None:
    fixed, notes = apply_fixes(_plan(), _context(), VALID, off={"examples"})
    [task] = fixed.tasks
    assert task.instructions == _plan().tasks[0].instructions and [o.type for o in task.outputs] == ["csv"]
    assert [n for n in notes if "worked example" in n] == []


def test_the_valid_stage_does_the_request_for_instructions_that_copy_a_worked_example() -> None:
    plan = Plan(language="en", answer="Reading it.", tasks=[
        TaskSpec("t1", "analyst", "What is the capital of France? Cite the passage.", ["kettle.pdf"])])
    context = FixContext(request="How long is the warranty?", uploads=("kettle.pdf",), examples=EXAMPLES)
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
