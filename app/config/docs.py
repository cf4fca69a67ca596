"""The settings' table, written from their declarations: docs/configuration.md and `python -m app --help`."""

from __future__ import annotations

import textwrap
from dataclasses import MISSING, dataclass, fields
from pathlib import Path
from typing import Any

from app.config.declare import declared, plain
from app.config.settings import Settings

DOCS_PAGE = "docs/configuration.md"
USAGE = """\
usage: python -m app           serve the API (migrates the database schema first)
       python -m app migrate   only migrate the database schema to the newest revision, then exit
                               (for operators who run migrations as a separate deploy step)"""


@dataclass(frozen=True)
class Row:
    """One setting as the docs show it, in Markdown."""

    env: str
    default: str
    help: str


def rows() -> list[Row]:
    """Every setting a variable sets, in the order `Settings` declares them."""
    found = []
    for item in fields(Settings):
        setting = declared(item)
        if setting is None:
            continue
        value = item.default if item.default_factory is MISSING else item.default_factory()
        found.append(Row(setting.env, setting.shown or _shown(value, setting.env), setting.help))
    return found


def _shown(value: Any, env: str) -> str:
    """A default as the docs show it: a word in backticks, a number as it is, sizes in MiB or GiB."""
    if isinstance(value, bool):
        return f"`{str(value).lower()}`"
    if isinstance(value, str | Path):
        return f"`{value}`" if str(value) else "unset"
    if isinstance(value, tuple | dict):
        return "empty"
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    if isinstance(value, int) and env.endswith("_BYTES") and value >= 1 << 20:
        for unit, size in (("GiB", 1 << 30), ("MiB", 1 << 20)):
            if value % size == 0:
                return f"{value // size} {unit}"
    return str(value)


def markdown() -> str:
    """docs/configuration.md, whole."""
    lines = ["# Configuration", "",
             "Environment variables, read once at start. `python -m app --help` prints this table; it is written "
             "from the settings' declarations in `app/config/settings.py` by `python -m app.config --markdown > "
             "docs/configuration.md`.", "",
             "| variable | default | meaning |", "|---|---|---|"]
    lines += [f"| `{row.env}` | {row.default} | {row.help} |" for row in rows()]
    return "\n".join(lines) + "\n"


def help_text(width: int = 100) -> str:
    """What `python -m app --help` prints: how to start it, then each setting, its default and meaning."""
    lines = [USAGE, "", f"Settings come from the environment ({DOCS_PAGE} has them as a table):", ""]
    for row in rows():
        lines.append(f"  {row.env} (default: {plain(row.default)})")
        lines += textwrap.wrap(plain(row.help), width, initial_indent=" " * 6, subsequent_indent=" " * 6)
    return "\n".join(lines)
