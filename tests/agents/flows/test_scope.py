"""A run's inputs against the definition, and the one scope templates and expressions share."""

from __future__ import annotations

import pytest

from agents.flows import expressions, templates
from agents.flows.definition import FlowDefinition
from agents.flows.scope import InputError, node_value, resolve_inputs, scope

DEFN = FlowDefinition.decode({"name": "x", "inputs": {
    "word": {"type": "string"}, "n": {"type": "number", "default": 2}, "flag": {"type": "boolean", "default": False},
    "docs": {"type": "files", "default": []}, "note": {"type": "string", "default": None}}})


def test_defaults_fill_what_is_not_given() -> None:
    assert resolve_inputs(DEFN, {"word": "fox", "n": 2.5}) == {"word": "fox", "n": 2.5, "flag": False, "docs": [],
                                                               "note": None}


def test_every_bad_input_is_named_at_once() -> None:
    with pytest.raises(InputError) as caught:
        resolve_inputs(DEFN, {"n": True, "flag": "yes", "docs": [1, {"id": 2}], "extra": 1})
    assert caught.value.problems == {
        "extra": "the flow has no such input", "word": "required, and not given",
        "n": "expected a number, got bool", "flag": "expected true or false, got str",
        "docs": "expected a list of file ids"}


def test_templates_and_expressions_read_the_same_scope() -> None:
    names = scope({"word": "fox"}, {"n1": node_value({"score": 3}, ["f1"]), "skipped": node_value(None)},
                  item="a", index=0, iteration=2)
    assert templates.render("{{ inputs.word }} {{ n1.output.score }} {{ n1.files[0] }} [{{ skipped.output }}]"
                            " {{ item }}{{ index }} {{ iteration }}", names) == "fox 3 f1 [] a0 2"
    assert expressions.evaluate("n1.output.score > 2 && skipped.output == null && item == 'a' && iteration == 2",
                                names) is True
    assert "item" not in scope({}, {}) and "iteration" not in scope({}, {})
