"""Expressions (CEL): values as plain Python, parse errors, and the names an expression reads."""

from __future__ import annotations

from typing import Any

import pytest

from agents.flows.errors import ExpressionError
from agents.flows.expressions import check, evaluate, expression_names

SCOPE = {"inputs": {"n": 3, "word": "a fox", "items": [1, 2, 3]}, "iteration": 3, "index": 0, "item": {"name": "x"},
         "n1": {"output": {"score": 0.7, "tags": ["a"]}, "files": []}, "skipped": {"output": None, "files": []}}


@pytest.mark.parametrize(("expr", "value"), [
    ("inputs.n > 2", True),
    ("inputs.n > 2.5", True),  # an int input against a double: numbers compare across types
    ("inputs.n == 3.0", True),
    ("iteration >= 3", True),
    ("size(inputs.items) > 0", True),
    ("inputs.word.contains('fox')", True),
    ("n1.output.score > 0.5 && 'a' in n1.output.tags", True),
    ("skipped.output == null", True),
    ("n1.output == null", False),  # heterogeneous equality: false, not an error
    ("item.name + '!'", "x!"),
    ("inputs.items.map(x, x * 2)", [2, 4, 6]),
    ("inputs.items.filter(x, x > index + 1)", [2, 3]),
    ("{'a': [1, 2.5, null, true]}", {"a": [1, 2.5, None, True]}),
    ("has(inputs.missing)", False),
])
def test_evaluates_to_plain_python(expr: str, value: Any) -> None:
    result = evaluate(expr, SCOPE)
    assert result == value and type(result) is type(value)


@pytest.mark.parametrize("expr", ["inputs.missing > 1", "nope == 1", "inputs.n / 0", "inputs.word + 1"])
def test_an_evaluation_failure_is_an_expression_error(expr: str) -> None:
    with pytest.raises(ExpressionError):
        evaluate(expr, SCOPE)


@pytest.mark.parametrize("expr", ["inputs.n >", "", "(", "a ? b", "x" * 5000])
def test_a_bad_expression_is_reported_not_raised(expr: str) -> None:
    assert check(expr)
    with pytest.raises(ExpressionError):
        evaluate(expr, SCOPE)


def test_python_is_not_an_expression() -> None:
    with pytest.raises(ExpressionError):
        evaluate("__import__('os').system('echo pwned')", SCOPE)


def test_the_names_an_expression_reads() -> None:
    assert expression_names("inputs.n > 2 && size(inputs.items) > 0") == {"inputs.n", "inputs.items"}
    assert expression_names("n1.output.score > 0.5 || iteration >= 3") == {"n1.output.score", "iteration"}
    assert expression_names("inputs.word.contains('a.b c') && 'n2.output' != ''") == {"inputs.word"}
    assert expression_names("inputs.items.map(x, x.a * 2).size() > item") == {"inputs.items", "item"}
    assert expression_names("inputs.items[0].a == index") == {"inputs.items", "index"}
    assert expression_names("true || null == false") == set()


@pytest.mark.parametrize("expr", ["inputs.items.map(a, inputs.items.map(b, a * b))",
                                  "inputs.items.exists(a, inputs.items.filter(b, b == a).size() > 1)"])
def test_a_macro_inside_a_macro_is_refused_when_saved(expr: str) -> None:
    assert "inside another" in (check(expr) or "")


def test_map_and_filter_over_a_large_list_are_refused_before_they_run() -> None:
    # The evaluator holds the GIL and its map copies its result each step: 100,000 items would stop
    # the process for minutes, so the limit is checked on the data first.
    assert evaluate("inputs.l.map(a, a * 2).size()", {"inputs": {"l": list(range(1_000))}}) == 1_000
    with pytest.raises(ExpressionError, match="100,000 items"):
        evaluate("inputs.l.map(a, a * 2).size()", {"inputs": {"l": list(range(100_000))}})
    with pytest.raises(ExpressionError, match="characters"):
        evaluate("inputs.s.split(',').filter(a, a != '').size()", {"inputs": {"s": "a," * 50_000}})
    assert evaluate("inputs.l.exists(a, a == -1)", {"inputs": {"l": list(range(100_000))}}) is False


def test_only_the_names_an_expression_reads_are_converted() -> None:
    """CEL converts its whole activation: a condition over `inputs` converted every node's output too (381 us
    against 30 us with 50 outputs of 20 KB), and one output CEL cannot hold failed a condition that never
    reads it. Now the names it reads are converted; an error retries with the whole scope, so a name the
    reading of names missed fails as before."""
    scope = {**SCOPE, "n9": {"output": object(), "files": []}}  # a value CEL has no type for
    assert evaluate("inputs.n > 2", scope) is True
    with pytest.raises(ExpressionError):
        evaluate("n9.output == null", scope)
