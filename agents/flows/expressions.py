"""Conditions and `until`s: Google's Common Expression Language (CEL), never Python's `eval`.

CEL is the language OpenAI's Agent Builder and Kubernetes use for conditions: no I/O, no loops
beyond bounded macros, always terminates. It is evaluated by `common-expression-language` (import
`cel`), Python bindings of the Rust `cel` crate, rather than the pure-Python `cel-python` (`celpy`),
measured by `bench/flow_expressions.py` on this machine (2 cores shared), on 12 expressions a
flow's author writes:

- cel-python 0.5.0 gets 9 of 12 right: it raises on `inputs.n > 2.5` when `n` came as 3 (no
  int/double overload), on `inputs.n == null` and on `n1.output == 'yes'` when the output is a
  mapping (no heterogeneous equality, which the CEL spec has had since 2022), so a "number" input
  sent as `3` or `3.0` would decide a condition by accident. It costs 88 us per compile and 171 us
  per evaluation, and returns its own wrapper types (its BoolType is an int) to convert back.
- common-expression-language 0.10 gets 12 of 12, returns plain Python values, and costs 9 us per
  compile and 16 us per evaluation: 10x and 11x less. Its one weakness, `map` and `filter`
  quadratic in the list's length while holding the GIL, is fenced off below (`MAX_MACRO_ITEMS`).

Scope: `inputs` (a mapping), each node id as a top-level name holding `{"output", "files"}`, and
inside a map or loop body `item`, `index`, `iteration`. Compiled programs are cached.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Mapping
from typing import Any, Final, NamedTuple

import cel

from agents.flows.errors import ExpressionError

MAX_LENGTH: Final = 4_000  # characters; a condition longer than a page is a mistake, not a condition
# The Rust evaluator holds the GIL for a whole evaluation and its `map` and `filter` grow their result
# by copying it (quadratic: 1,000 items 22 ms of CPU, 2,000 82 ms; `exists` and `all` are linear,
# 0.3 ms per 1,000; bench/flow_expressions.py). cel-python is linear but 67 ms per 1,000 for both.
# So a macro inside a macro is refused when the flow is saved, and `map`/`filter` over more than
# this many items (or a text this long, which `split` would turn into one) when it runs.
MAX_MACRO_ITEMS: Final = 1_000
MAX_MACRO_TEXT: Final = 20_000
# Macros whose first argument is a variable bound inside the call, not a name from the scope.
_MACROS: Final = ("all", "exists", "exists_one", "map", "filter")

# CEL's lexical grammar, enough to find names outside string literals: strings (raw, bytes,
# triple-quoted), identifiers, and a dot. Anything else is one character.
_TOKEN = re.compile(r"""
    (?P<string>[rRbB]{0,2}(?:'''(?:\\.|[^\\])*?'''|\"\"\"(?:\\.|[^\\])*?\"\"\"|'(?:\\.|[^'\\\n])*'|"(?:\\.|[^"\\\n])*"))
  | (?P<number>\d[\w.]*)
  | (?P<ident>[A-Za-z_][A-Za-z0-9_]*)
  | (?P<space>\s+)
  | (?P<other>.)
""", re.VERBOSE | re.DOTALL)


class _Compiled(NamedTuple):
    program: Any
    accumulates: bool  # it calls `map` or `filter`, whose cost the data decides
    roots: frozenset[str]  # the scope's top-level names it reads (`inputs`, `n1`, `item`)


@functools.lru_cache(maxsize=2048)
def _compiled(expr: str) -> _Compiled:
    if len(expr) > MAX_LENGTH:
        raise ExpressionError(f"expression longer than {MAX_LENGTH} characters")
    if not expr.strip():
        raise ExpressionError("empty expression")
    try:
        program = cel.compile(expr)
    except Exception as error:  # the bindings raise ValueError for syntax; anything else is one too
        raise ExpressionError(_first_line(error)) from None
    macros, nested = _macro_calls(_tokens(expr))
    if nested:
        raise ExpressionError("a macro (map, filter, all, exists) inside another: its cost grows with the square"
                              " of the data; use a map node")
    return _Compiled(program, bool(macros & {"map", "filter"}), frozenset(n.split(".")[0] for n in expression_names(expr)))


def _tokens(expr: str) -> list[tuple[str | None, str]]:
    return [(m.lastgroup, m.group()) for m in _TOKEN.finditer(expr) if m.lastgroup != "space"]


def _macro_calls(tokens: list[tuple[str | None, str]]) -> tuple[set[str], bool]:
    """The macros `tokens` call, and whether one is called inside another's arguments."""
    called: set[str] = set()
    depth = 0  # parenthesis depth
    open_at: list[int] = []  # the depths at which a macro's call opened
    nested = False
    for i, token in enumerate(tokens):
        if token == ("other", "("):
            depth += 1
            if i >= 2 and tokens[i - 2] == ("other", ".") and tokens[i - 1][0] == "ident" and tokens[i - 1][1] in _MACROS:
                called.add(tokens[i - 1][1])
                nested = nested or bool(open_at)
                open_at.append(depth)
        elif token == ("other", ")"):
            if open_at and open_at[-1] == depth:
                open_at.pop()
            depth -= 1
    return called, nested


def _too_large(names: set[str], scope: Mapping[str, Any]) -> str | None:
    """Why the values `names` read are too large for `map` or `filter`, or None."""
    stack: list[Any] = []
    for name in names:
        value: Any = scope
        for part in name.split("."):
            if not isinstance(value, Mapping) or part not in value:
                break
            value = value[part]
        stack.append(value)
    while stack:
        value = stack.pop()
        if isinstance(value, list | tuple):
            if len(value) > MAX_MACRO_ITEMS:
                return f"a list of {len(value):,} items"
            stack.extend(value)
        elif isinstance(value, Mapping):
            stack.extend(value.values())
        elif isinstance(value, str) and len(value) > MAX_MACRO_TEXT:
            return f"a text of {len(value):,} characters"
    return None


def _first_line(error: BaseException) -> str:
    text = str(error).strip()
    # The parser's message is "Failed to parse expression '...': ERROR: <input>:1:11: Syntax error: ..."
    # followed by a caret picture; the picture is noise in a JSON error, the position is kept.
    head = text.splitlines()[0] if text else type(error).__name__
    if isinstance(error, KeyError):
        return f"no key {head} in the value read"
    return head.replace("Failed to parse expression", "cannot parse").replace("ERROR: <input>:", "at ").strip()


def check(expr: str) -> str | None:
    """What is wrong with `expr`'s syntax, or None when it parses."""
    try:
        _compiled(expr)
    except ExpressionError as error:
        return str(error)
    return None


def evaluate(expr: str, scope: Mapping[str, Any]) -> Any:
    """`expr`'s value in `scope`, as plain Python (bool, int, float, str, list, dict, None)."""
    program, accumulates, roots = _compiled(expr)
    if accumulates:
        why = _too_large(expression_names(expr), scope)
        if why:
            raise ExpressionError(f"{expr!r}: `map` and `filter` read {why}, over the limit of "
                                  f"{MAX_MACRO_ITEMS:,} items or {MAX_MACRO_TEXT:,} characters; use a map node")
    try:
        # The names it reads, converted to CEL values (the whole scope, every node's output, cost 3x as much);
        # on any error, again with the whole scope, so a name the reading of names missed fails alike.
        value = program.execute({name: scope[name] for name in roots if name in scope})
    except Exception:
        try:
            value = program.execute(dict(scope))
        except Exception as error:  # a missing key, a type with no such operator, division by zero
            raise ExpressionError(f"{expr!r}: {_first_line(error)}") from None
    return _plain(value)


def _plain(value: Any) -> Any:
    if isinstance(value, cel.OptionalValue):  # optional syntax (`a.?b`) ends in a plain value or None
        return _plain(value.value()) if value.has_value() else None
    if isinstance(value, list):
        return [_plain(v) for v in value]
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    return value


def expression_names(expr: str) -> set[str]:
    """The dotted names `expr` reads from its scope (`inputs.n`, `n1.output.score`, `item`).

    A chain stops at an index or a call (`inputs.items[0].a` gives `inputs.items`); a variable a
    macro binds (`x` in `l.map(x, x * 2)`) is not a scope name; a method's name (`contains`) is not.
    """
    tokens = _tokens(expr)
    bound = {tokens[i + 3][1] for i in range(len(tokens) - 4)
             if tokens[i] == ("other", ".") and tokens[i + 1][0] == "ident" and tokens[i + 1][1] in _MACROS
             and tokens[i + 2] == ("other", "(") and tokens[i + 3][0] == "ident" and tokens[i + 4] == ("other", ",")}
    names: set[str] = set()
    i = 0
    while i < len(tokens):
        kind, text = tokens[i]
        after_dot = i > 0 and tokens[i - 1] == ("other", ".")
        if kind != "ident" or after_dot or text in ("true", "false", "null", "in"):
            i += 1
            continue
        chain = [text]
        j = i + 1
        while j + 1 < len(tokens) and tokens[j] == ("other", ".") and tokens[j + 1][0] == "ident":
            chain.append(tokens[j + 1][1])
            j += 2
        if j < len(tokens) and tokens[j] == ("other", "("):
            chain.pop()  # `size(x)` or `x.contains(y)`: the last name is a function
        if chain and chain[0] not in bound and chain[0] not in ("has",):
            names.add(".".join(chain))
        i = j
    return names
