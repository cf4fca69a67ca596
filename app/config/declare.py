"""How a setting is declared: one field of `Settings` names its variable, help text and reader.

`setting(default, "VAR", "help")` is a dataclass field that carries a `Declared`: `from_env` reads
every declared field through it, and the docs table and `--help` are written from it, so a setting
is declared once. A field's type picks its reader (see `READERS`) unless it names its own `parse`
(the variable's text, checked) or `read` (the whole environment: prefixes, fallbacks).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import MISSING, Field, dataclass, field
from pathlib import Path
from typing import Any, TypeVar, overload

T = TypeVar("T")
N = TypeVar("N", int, float)
Parse = Callable[[str, str], Any]  # (the variable's text, stripped and not empty; its name) -> the value
Read = Callable[[Mapping[str, str], str], Any]  # (the environment, the variable's name) -> the value


class SettingsError(ValueError):
    """A setting that cannot be used; the message names the variable."""


@dataclass(frozen=True)
class Declared:
    """What one setting declares besides its field's name, type and default."""

    env: str  # the variable, as the docs name it ("LLM_MODEL_<AGENT>" for a prefix)
    help: str  # Markdown: the docs show it as it is, --help without backticks and links
    parse: Parse | None = None
    read: Read | None = None
    shown: str = ""  # the default as the docs show it, when the value itself does not say it well

    def value(self, env: Mapping[str, str], kind: Any, default: Any) -> Any:
        """This setting's value in `env`: its reader's, or the default when the variable is unset or empty."""
        if self.read is not None:
            return self.read(env, self.env)
        raw = env.get(self.env, "").strip()
        if not raw:
            return default
        parse = self.parse or READERS.get(kind)
        if parse is None:
            raise TypeError(f"{self.env}: no reader for {kind!r}; declare parse= or read=")
        return parse(raw, self.env)


@overload
def setting(default: T, env: str, help: str, *, parse: Parse | None = None, read: Read | None = None,
            shown: str = "", secret: bool = False) -> T: ...


@overload
def setting(*, factory: Callable[[], T], env: str, help: str, read: Read, shown: str = "") -> T: ...


def setting(default: Any = MISSING, env: str = "", help: str = "", *, parse: Parse | None = None,
            read: Read | None = None, shown: str = "", secret: bool = False,
            factory: Callable[[], Any] | None = None) -> Any:
    """A field of `Settings` read from the variable `env`; `secret` keeps its value out of the repr."""
    metadata = {"setting": Declared(env, help, parse, read, shown)}
    if factory is not None:
        return field(default_factory=factory, metadata=metadata)
    return field(default=default, repr=not secret, metadata=metadata)


def declared(item: Field[Any]) -> Declared | None:
    """The declaration a field of `Settings` carries; None for a field no variable sets."""
    found = item.metadata.get("setting")
    return found if isinstance(found, Declared) else None


def number(kind: Callable[[str], N], at_least: N | None = None, above: N | None = None) -> Callable[[str, str], N]:
    """A reader of a number of `kind`, never negative, and at least (or above) a bound when one is given."""
    def parse(raw: str, name: str) -> N:
        try:
            value = kind(raw)
        except ValueError:
            raise SettingsError(f"{name} must be a number, not {raw!r}.") from None
        if value < 0:
            raise SettingsError(f"{name} must not be negative.")
        if at_least is not None and value < at_least:
            raise SettingsError(f"{name} must be at least {at_least:g}.")
        if above is not None and value <= above:
            raise SettingsError(f"{name} must be more than {above:g}.")
        return value
    return parse


def flag(raw: str, name: str) -> bool:
    value = raw.strip().lower()
    if value in ("", "0", "false", "no", "off"):
        return False
    if value in ("1", "true", "yes", "on"):
        return True
    raise SettingsError(f"{name} must be true or false, not {raw!r}.")


def one_of(*choices: str) -> Parse:
    """A reader of one of `choices`, in any case."""
    def parse(raw: str, name: str) -> str:
        value = raw.lower()
        if value not in choices:
            raise SettingsError(f"{name} must be {' or '.join(choices)}, not {value!r}.")
        return value
    return parse


def listed(item: Callable[[str, str], str]) -> Parse:
    """A reader of a comma-separated list, each entry read by `item`, empty ones left out, repeats once."""
    def parse(raw: str, name: str) -> tuple[str, ...]:
        return tuple(dict.fromkeys(item(part.strip(), name) for part in raw.split(",") if part.strip()))
    return parse


def prefixed(parse: Parse) -> Read:
    """A reader of every variable named `PREFIX_<KEY>` (the declared name ends in `<...>`), by key in lower case."""
    def read(env: Mapping[str, str], name: str) -> dict[str, Any]:
        prefix = name[:name.index("<")]
        return {var[len(prefix):].lower(): parse(value.strip(), var)
                for var, value in env.items() if var.startswith(prefix) and value.strip()}
    return read


def or_else(other: str) -> Read:
    """A reader of a text that falls back to the variable `other` when unset."""
    def read(env: Mapping[str, str], name: str) -> str:
        return (env.get(name) or "").strip() or (env.get(other) or "").strip()
    return read


def _text(raw: str, name: str) -> str:
    return raw


def _path(raw: str, name: str) -> Path:
    return Path(raw)


READERS: dict[Any, Parse] = {
    str: _text, Path: _path, bool: flag, int: number(int), float: number(float), tuple[str, ...]: listed(_text),
}

_LINK = re.compile(r"\[([^\]]+)\]\(([^)\s]+)\)")


def plain(markdown: str) -> str:
    """Help text as a terminal shows it: no backticks, a link as its text and the page under docs/."""
    return _LINK.sub(lambda m: f"{m[1]} (docs/{m[2]})", markdown).replace("`", "")
