"""A flow's expression language: common-expression-language (what agents/flows/expressions.py uses)
against cel-python, on the expressions a flow's author writes.

    .venv/bin/python bench/flow_expressions.py [--rounds N]

For each library: which of the expressions it evaluates to the right value, CPU per compile and
per evaluation of a compiled program (process time, median of the rounds), and how `map` and
`exists` over a list scale with its length (x2 is linear, x4 quadratic). cel-python is measured only
when installed (`pip install cel-python`; it is not a dependency). Also: a template render through
agents/flows/templates.py, cached, for scale.
"""

from __future__ import annotations

import argparse
import functools
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
from agents.flows import templates  # noqa: E402

SCOPE: dict[str, Any] = {"inputs": {"n": 3, "word": "a fox", "items": [1, 2, 3]}, "iteration": 3, "index": 0,
                         "item": {"name": "x"}, "n1": {"output": {"score": 0.7}, "files": []},
                         "skipped": {"output": None, "files": []}}
CASES: list[tuple[str, Any]] = [
    ("inputs.n > 2", True),
    ("iteration >= 3", True),
    ("size(inputs.items) > 0", True),
    ("inputs.word.contains('fox')", True),
    ("n1.output.score > 0.5 && size(inputs.items) > 2", True),
    ("inputs.n > 2.5", True),  # an int input against a double literal
    ("skipped.output == null", True),
    ("n1.output == null", False),  # heterogeneous equality
    ("inputs.n == null", False),
    ("n1.output == 'yes'", False),
    ("item.name + '!'", "x!"),
    ("inputs.items.map(x, x * 2)", [2, 4, 6]),
]


def _cpu(fn: Callable[[], object], count: int) -> float:
    start = time.process_time()
    for _ in range(count):
        fn()
    return (time.process_time() - start) / count


def rust_cel() -> tuple[Callable[[str], Any], Callable[[Any, dict[str, Any]], Any]]:
    import cel
    return cel.compile, lambda program, scope: program.execute(scope)


def celpy_lib() -> tuple[Callable[[str], Any], Callable[[Any, dict[str, Any]], Any]]:
    import logging

    import celpy
    from celpy.adapter import json_to_cel
    logging.getLogger("celpy").setLevel(logging.ERROR)
    env = celpy.Environment()

    def plain(value: Any) -> Any:  # celpy's wrapper types back to Python, as a flow would need
        if isinstance(value, list):
            return [plain(v) for v in value]
        if isinstance(value, dict):
            return {str(k): plain(v) for k, v in value.items()}
        if isinstance(value, celpy.celtypes.BoolType):  # an int subclass: test it first
            return bool(value)
        for kind in (int, float, str):
            if isinstance(value, kind):
                return kind(value)
        return value

    return (lambda expr: env.program(env.compile(expr)),
            lambda program, scope: plain(program.evaluate(json_to_cel(scope))))


def measure(name: str, lib: Callable[[], tuple[Callable[[str], Any], Callable[[Any, dict[str, Any]], Any]]],
            rounds: int) -> tuple[float, float] | None:
    try:
        compile_, run = lib()
    except ImportError:
        print(f"{name}: not installed, skipped")
        return None
    right = []
    for expr, want in CASES:
        try:
            got = run(compile_(expr), SCOPE)
            ok = got == want and type(got) is type(want)
        except Exception as error:  # noqa: BLE001 - a refusal is what is being counted
            got, ok = f"error: {str(error)[:60]}", False
        right.append(ok)
        if not ok:
            print(f"  {name} wrong on {expr!r}: {got!r}")
    compiles, evals = [], []
    for _ in range(rounds):
        for expr, _want in CASES[:5]:
            compiles.append(_cpu(functools.partial(compile_, expr), 50))
            evals.append(_cpu(functools.partial(run, compile_(expr), SCOPE), 200))
    c, e = statistics.median(compiles), statistics.median(evals)
    print(f"{name:<28} right {sum(right)}/{len(CASES)}   compile {c * 1e6:7.1f} us   evaluate {e * 1e6:7.1f} us")
    for expr in ("inputs.l.map(a, a * 2).size()", "inputs.l.exists(a, a == -1)"):
        program = compile_(expr)
        costs = [_cpu(functools.partial(run, program, {"inputs": {"l": list(range(n))}}), 1) for n in (500, 1_000, 2_000)]
        print(f"  {expr:<32} 500 / 1,000 / 2,000 items: " + " / ".join(f"{c * 1000:.1f}" for c in costs)
              + f" ms (2,000 / 1,000: x{costs[2] / costs[1]:.1f})")
    return c, e


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    ours = measure("common-expression-language", rust_cel, args.rounds)
    other = measure("cel-python", celpy_lib, args.rounds)
    if ours and other:
        print(f"cel-python / common-expression-language: compile x{other[0] / ours[0]:.1f}, "
              f"evaluate x{other[1] / ours[1]:.1f}")
    text = "{{ inputs.word }} and {{ n1.output.score }} ({{ inputs.items | length }})"
    templates.render(text, SCOPE)
    print(f"template render (cached):    {_cpu(lambda: templates.render(text, SCOPE), 2000) * 1e6:7.1f} us")
    fresh = iter(range(10**9))
    print(f"template names (uncached):   {_cpu(lambda: templates.template_names(f'{next(fresh)} {text}'), 500) * 1e6:7.1f}"
          " us (a parse each)")


if __name__ == "__main__":
    main()
