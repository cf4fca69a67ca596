"""Templates (`{{ inputs.word }}`, `{{ n1.output }}`): Jinja2's immutable sandbox, compiled once.

- The sandbox refuses attribute access to internals (`''.__class__.__mro__`), calls of unsafe
  methods, and, being immutable, changing the scope (`inputs.items.append(...)`); `*` and `**`
  are bounded so a template cannot ask for a gigabyte string; so are the text a render produces
  and the numbers all its `range()`s give together. What the sandbox cannot bound is a loop
  inside a loop over the data itself (`{% for a in l %}{% for b in l %}`): pure Python, so a
  thread renders it without stopping the event loop, but its time is the data's square.
- A name the scope lacks is an error at render time (`StrictUndefined`) rather than empty text;
  validation finds such names when the flow is saved (`template_names`), so at run time it only
  happens to data that lacks a field (`{{ n1.output.missing | default('') }}` is the way out).
- `None` (a skipped node's output) renders as empty text; a list or mapping renders as JSON, so
  a model reads `{"a": 1}` rather than Python's `{'a': 1}`.
"""

from __future__ import annotations

import contextvars
import functools
import json
import operator
from collections.abc import Mapping
from typing import Any, Final

import jinja2
from jinja2 import meta, nodes
from jinja2.exceptions import SecurityError
from jinja2.sandbox import ImmutableSandboxedEnvironment

from agents.flows.errors import TemplateError

MAX_LENGTH: Final = 100_000  # characters of template source
MAX_PRODUCT: Final = 1_000_000  # items or characters a `*` may produce
MAX_POWER: Final = 1_000  # the largest exponent `**` takes
MAX_OUTPUT: Final = 2_000_000  # characters a render may produce (a model's window is far less)
MAX_RANGE_ITEMS: Final = 100_000  # numbers all the `range()`s of one render may give, together
_RANGE_BUDGET: Final[contextvars.ContextVar[list[int] | None]] = contextvars.ContextVar("flow_template_range",
                                                                                        default=None)


def _finalize(value: Any) -> Any:
    if value is None:
        return ""
    if isinstance(value, (dict, list, tuple)):
        return json.dumps(value, ensure_ascii=False, default=str)
    return value


class _Sandbox(ImmutableSandboxedEnvironment):
    """The immutable sandbox with bounded `*` and `**`."""

    intercepted_binops = frozenset({"*", "**"})

    def getattr(self, obj: Any, attribute: str) -> Any:
        # A mapping's key before its method: `inputs.items` is the input named "items", not `dict.items`.
        if isinstance(obj, Mapping) and attribute in obj:
            return obj[attribute]
        return super().getattr(obj, attribute)

    def call_binop(self, context: jinja2.runtime.Context, operator_: str, left: Any, right: Any) -> Any:
        if operator_ == "**":
            if isinstance(right, (int, float)) and abs(right) > MAX_POWER:
                raise SecurityError(f"exponent over {MAX_POWER}")
            return operator.pow(left, right)
        for seq, count in ((left, right), (right, left)):
            if isinstance(seq, (str, list, tuple)) and isinstance(count, int) and len(seq) * count > MAX_PRODUCT:
                raise SecurityError(f"a product of over {MAX_PRODUCT:,} items")
        return operator.mul(left, right)


def _range(*args: int) -> range:
    """`range`, drawing on one budget per render: nested loops over `range` cannot spin for hours."""
    numbers = range(*args)
    left = _RANGE_BUDGET.get() or [MAX_RANGE_ITEMS]  # outside `render`: one range's own bound
    if len(numbers) > left[0]:
        raise SecurityError(f"ranges of over {MAX_RANGE_ITEMS:,} numbers in one template")
    left[0] -= len(numbers)
    return numbers


_ENV: Final = _Sandbox(undefined=jinja2.StrictUndefined, finalize=_finalize, autoescape=False,
                       keep_trailing_newline=True, cache_size=0)
_ENV.globals["range"] = _range
GLOBALS: Final = frozenset(_ENV.globals)  # names every template may read (`range`, `dict`, ...)


@functools.lru_cache(maxsize=1024)
def _compiled(template: str) -> jinja2.Template:
    if len(template) > MAX_LENGTH:
        raise TemplateError(f"template longer than {MAX_LENGTH:,} characters")
    try:
        return _ENV.from_string(template)
    except jinja2.TemplateSyntaxError as error:
        raise TemplateError(error.message or "syntax error", line=error.lineno) from None


@functools.lru_cache(maxsize=1024)
def _parsed(template: str) -> nodes.Template:
    if len(template) > MAX_LENGTH:
        raise TemplateError(f"template longer than {MAX_LENGTH:,} characters")
    try:
        return _ENV.parse(template)
    except jinja2.TemplateSyntaxError as error:
        raise TemplateError(error.message or "syntax error", line=error.lineno) from None


@functools.lru_cache(maxsize=1024)
def _free(template: str) -> frozenset[str]:
    """The names `template` reads from its scope, by Jinja's own scoping: all a render needs of it."""
    return frozenset(meta.find_undeclared_variables(_parsed(template)))


def check(template: str) -> TemplateError | None:
    """The syntax error in `template` (with its line), or None when it compiles."""
    try:
        _compiled(template)
    except TemplateError as error:
        return error
    return None


# A template of text and names only (`{{ item }}`, `{{ inputs.word }}`): its text, and each name as its base
# and the attributes read after it.
Substitutions = tuple[str | tuple[str, tuple[str, ...]], ...]


@functools.lru_cache(maxsize=1024)
def _substitutions(template: str) -> Substitutions | None:
    """`template` as text and dotted names when that is all it is (no filter, index, call, test or tag);
    else None."""
    body = _parsed(template).body
    if len(body) != 1 or not isinstance(body[0], nodes.Output):
        return None
    parts: list[str | tuple[str, tuple[str, ...]]] = []
    for node in body[0].nodes:
        if isinstance(node, nodes.TemplateData):
            parts.append(node.data)  # as Jinja's lexer left it ("\r\n" as "\n")
            continue
        attributes: list[str] = []
        while isinstance(node, nodes.Getattr):
            attributes.append(node.attr)
            node = node.node
        if not isinstance(node, nodes.Name) or node.ctx != "load" or node.name == "self":  # Jinja's own `self`
            return None
        parts.append((node.name, tuple(reversed(attributes))))
    return tuple(parts)


def _substituted(parts: Substitutions, scope: Mapping[str, Any]) -> str | None:
    """What Jinja renders of a template of names, looked up as its compiled code looks them up (the sandbox's
    `getattr`, then `_finalize` and `str`) without a context to build; None when Jinja must say what fails (a
    name or attribute missing, refused, or raising) or the text is too long."""
    out: list[str] = []
    size = 0
    for part in parts:
        if isinstance(part, str):
            text = part
        else:
            name, attributes = part
            if name not in scope:
                return None
            value = scope[name]
            try:
                for attribute in attributes:
                    value = _ENV.getattr(value, attribute)
                    if isinstance(value, jinja2.Undefined):
                        return None
                text = str(_finalize(value))
            except Exception:  # noqa: BLE001 - Jinja renders it again and says what failed
                return None
        size += len(text)
        if size > MAX_OUTPUT:
            return None
        out.append(text)
    return "".join(out)


def render(template: str, scope: Mapping[str, Any]) -> str:
    """`template` rendered in `scope`; a `TemplateError` says what failed (an undefined name, a refused access)."""
    if "{" not in template and "\r" not in template and len(template) <= min(MAX_LENGTH, MAX_OUTPUT):
        return template  # plain text renders as itself (Jinja only turns "\r\n" into "\n"): no context to build
    compiled = _compiled(template)
    names = _substitutions(template)
    if names is not None:  # text and names: Jinja's render built a context per call, 10x the lookups' own cost
        done = _substituted(names, scope)
        if done is not None:
            return done
    budget = _RANGE_BUDGET.set([MAX_RANGE_ITEMS])
    try:
        parts: list[str] = []
        size = 0
        # Only the names it reads: Jinja copies its variables into a new context on every render, and a
        # flow's scope holds every node's output (a map item's render copied them all, 20 times a map).
        for part in compiled.generate({name: scope[name] for name in _free(template) if name in scope}):
            size += len(part)
            if size > MAX_OUTPUT:
                raise TemplateError(f"the text grew over {MAX_OUTPUT:,} characters")
            parts.append(part)
        return "".join(parts)
    except jinja2.TemplateError as error:  # UndefinedError, SecurityError, and runtime syntax errors
        raise TemplateError(error.message or type(error).__name__, line=getattr(error, "lineno", None)) from None
    except (TypeError, ValueError, ArithmeticError, LookupError) as error:  # `{{ 1 / 0 }}`, `{{ 'a' + 1 }}`
        raise TemplateError(f"{type(error).__name__}: {error}") from None
    finally:
        _RANGE_BUDGET.reset(budget)


def template_names(template: str) -> set[str]:
    """The dotted names `template` reads from its scope (`inputs.word`, `n1.output`, `item`).

    Names the template binds itself (`{% for x in ... %}`, `{% set %}`) are left out; a chain
    stops at a computed index (`inputs.items[i]` gives `inputs.items`) and leaves out a called
    method (`inputs.word.upper()` gives `inputs.word`). Raises `TemplateError` on bad syntax.
    """
    if not any(mark in template for mark in ("{{", "{%", "{#")):
        return set()  # plain text: nothing to parse (most agent instructions and messages)
    tree = _parsed(template)
    found: dict[str, str] = {}  # dotted name -> its base name
    binds = False
    stack: list[nodes.Node] = [tree]
    while stack:
        node = stack.pop()
        if isinstance(node, nodes.Call) and isinstance(node.node, (nodes.Getattr, nodes.Getitem)):
            _chain(node.node, found, stack, drop_last=True)
            stack.extend(child for child in node.iter_child_nodes() if child is not node.node)
        elif isinstance(node, nodes.Name) and node.ctx != "load":
            binds = True
        elif isinstance(node, (nodes.Getattr, nodes.Getitem, nodes.Name)):
            _chain(node, found, stack, drop_last=False)
        else:
            binds = binds or isinstance(node, (nodes.Macro, nodes.CallBlock, nodes.For))
            stack.extend(node.iter_child_nodes())
    if not binds:
        return set(found)
    # Jinja's own scoping (meta) says which names the template binds; it costs as much as parsing,
    # so only templates that bind a name pay it.
    free = meta.find_undeclared_variables(tree)
    return {name for name, base in found.items() if base in free}


def _chain(node: nodes.Node, found: dict[str, str], stack: list[nodes.Node], *, drop_last: bool) -> None:
    """Record the dotted name `node` reads when its base is a name; queue computed indexes."""
    path: list[str | None] = []
    while isinstance(node, (nodes.Getattr, nodes.Getitem)):
        if isinstance(node, nodes.Getattr):
            path.append(node.attr)
        elif isinstance(node.arg, nodes.Const) and isinstance(node.arg.value, str):
            path.append(node.arg.value)
        else:
            path.append(None)
            stack.append(node.arg)
        node = node.node
    if not isinstance(node, nodes.Name):
        stack.append(node)
        return
    if drop_last and path:
        path = path[1:]
    parts = [node.name]
    for part in reversed(path):
        if part is None:
            break
        parts.append(part)
    found[".".join(parts)] = node.name
