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
  compile and 16 us per evaluation: 10x and 11x less.

Scope: `inputs` (a mapping), each node id as a top-level name holding `{"output", "files"}`, and
inside a map or loop body `item`, `index`, `iteration`. Compiled programs are cached.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Mapping
from typing import Any, Final

import cel

from agents.flows.errors import ExpressionError

MAX_LENGTH: Final = 4_000  # characters; a condition longer than a page is a mistake, not a condition
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


@functools.lru_cache(maxsize=2048)
def _compiled(expr: str) -> Any:
    if len(expr) > MAX_LENGTH:
        raise ExpressionError(f"expression longer than {MAX_LENGTH} characters")
    if not expr.strip():
        raise ExpressionError("empty expression")
    try:
        return cel.compile(expr)
    except Exception as error:  # the bindings raise ValueError for syntax; anything else is one too
        raise ExpressionError(_first_line(error)) from None


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
    program = _compiled(expr)
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
    tokens = [(m.lastgroup, m.group()) for m in _TOKEN.finditer(expr) if m.lastgroup != "space"]
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
