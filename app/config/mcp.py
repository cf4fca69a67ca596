"""MCP_SERVERS: the MCP servers whose tools become agents, each entry checked before anything starts."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from app.config.declare import SettingsError

_SERVER_NAME = re.compile(r"^[a-z][a-z0-9_-]{0,63}$")
_SERVER_KEYS = {"name", "transport", "command", "args", "env", "cwd", "url", "headers", "allow", "approve"}


def mcp_servers(raw: str, name: str = "MCP_SERVERS") -> tuple[dict[str, Any], ...]:
    """A JSON list of servers, inline or in the file `raw` names, each entry checked."""
    text = raw.strip()
    if not text:
        return ()
    if not text.startswith(("[", "{")):
        try:
            text = Path(text).read_text(encoding="utf-8")
        except OSError as exc:
            raise SettingsError(f"{name} names the file {text!r}, which cannot be read ({exc.strerror}).") from None
    try:
        servers = json.loads(text)
    except ValueError as exc:
        raise SettingsError(f"{name} is not valid JSON ({exc}).") from None
    if not isinstance(servers, list):
        raise SettingsError(f"{name} must be a JSON list of servers.")
    checked: list[dict[str, Any]] = []
    names: set[str] = set()
    for n, server in enumerate(servers, 1):
        checked.append(_server(server, f"{name} entry {n}", names, name))
    return tuple(checked)


def _server(server: Any, where: str, names: set[str], variable: str) -> dict[str, Any]:
    if not isinstance(server, dict):
        raise SettingsError(f"{where} must be an object.")
    name, transport = server.get("name"), server.get("transport", "stdio")
    if not isinstance(name, str) or not _SERVER_NAME.match(name):
        raise SettingsError(f"{where} needs a name of lowercase letters, digits, '_' or '-' (it prefixes "
                            "the tools' agent names).")
    if name in names:
        raise SettingsError(f"{variable} names the server {name!r} twice.")
    names.add(name)
    unknown = sorted(set(server) - _SERVER_KEYS)
    if unknown:
        raise SettingsError(f"{where} ({name}) has unknown keys: {', '.join(unknown)}.")
    if transport not in ("stdio", "streamable-http"):
        raise SettingsError(f"{where} ({name}): transport must be stdio or streamable-http, not {transport!r}.")
    need = "command" if transport == "stdio" else "url"
    if not isinstance(server.get(need), str) or not server[need].strip():
        raise SettingsError(f"{where} ({name}): a {transport} server needs its {need}.")
    if transport == "streamable-http" and not server["url"].startswith(("http://", "https://")):
        raise SettingsError(f"{where} ({name}): url must start with http:// or https://.")
    for key, kind in (("args", list), ("allow", list), ("approve", list), ("env", dict), ("headers", dict)):
        value = server.get(key)
        if key == "approve" and isinstance(value, bool):  # true: every tool; false: none
            continue
        items = value.values() if isinstance(value, dict) else value or ()
        if value is not None and (not isinstance(value, kind) or not all(isinstance(v, str) for v in items)):
            raise SettingsError(f"{where} ({name}): {key} must be a JSON {'object' if kind is dict else 'list'} "
                                "of strings.")
    return {**server, "transport": transport}
