"""Readers of the settings whose text has a form of its own: keys, origins, URLs, temperatures, host and
variable names. Each refuses a bad value with a sentence naming its variable."""

from __future__ import annotations

import ipaddress
import re
from collections.abc import Mapping
from dataclasses import dataclass
from urllib.parse import urlsplit

from app.config.declare import SettingsError


@dataclass(frozen=True)
class ApiKey:
    """One `key:mandateId:userId` triple from API_KEYS."""

    key: str
    mandate_id: int
    user_id: int

    def __repr__(self) -> str:  # never print a secret
        return f"ApiKey(mandate_id={self.mandate_id}, user_id={self.user_id})"


def api_keys(raw: str, name: str) -> tuple[ApiKey, ...]:
    keys = []
    for part in filter(None, (p.strip() for p in raw.split(","))):
        fields = part.split(":")
        if len(fields) != 3 or not fields[0] or not fields[1].isdigit() or not fields[2].isdigit():
            raise SettingsError(f"{name} must hold key:mandateId:userId triples separated by commas.")
        keys.append(ApiKey(fields[0], int(fields[1]), int(fields[2])))
    if len({k.key for k in keys}) != len(keys):
        raise SettingsError(f"{name} lists the same key twice.")
    return tuple(keys)


def origins(raw: str, name: str) -> tuple[str, ...]:
    found = tuple(dict.fromkeys(o.strip().rstrip("/") for o in raw.split(",") if o.strip()))
    for origin in found:
        if origin != "*" and not (origin.startswith(("http://", "https://")) and "/" not in origin.split("://", 1)[1]):
            raise SettingsError(f"{name} must list origins such as https://app.example.com, not {origin!r}.")
    return found


def endpoint(raw: str, name: str = "OPENAI_BASE_URL") -> str:
    """An http(s) URL without credentials in it (they would be sent in the clear in every request line's logs
    and shown in errors; the key goes in OPENAI_API_KEY)."""
    url = raw.strip()
    if not url:
        return ""
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise SettingsError(f"{name} must be an http:// or https:// URL such as https://api.openai.com/v1.")
    if parts.username is not None or parts.password is not None:
        raise SettingsError(f"{name} must not carry a user name or password (user:password@host): give "
                            "the provider's key in OPENAI_API_KEY instead, or put a proxy in front that adds it.")
    return url


def redact_url(url: str) -> str:
    """`url` as logs show it: scheme, host, port and path; no credentials, query or fragment."""
    try:
        parts = urlsplit(url)
        host = parts.hostname or ""
        port = f":{parts.port}" if parts.port else ""
    except ValueError:
        return "(an unreadable URL)"
    if not parts.scheme or not host:
        return "(an unreadable URL)"
    host = f"[{host}]" if ":" in host else host
    return f"{parts.scheme}://{host}{port}{parts.path}"


def is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def temperature(raw: str, name: str) -> float:
    try:
        value = float(raw)
    except ValueError:
        raise SettingsError(f"{name} must be a number between 0 and 2, not {raw!r}.") from None
    if not 0 <= value <= 2:
        raise SettingsError(f"{name} must be between 0 and 2, not {raw!r}.")
    return value


def tracing(env: Mapping[str, str], name: str) -> bool:
    """Whether the environment asks for traces: an OTLP endpoint, and the OpenTelemetry SDK not disabled."""
    found = env.get("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT") or env.get(name) or ""
    return bool(found.strip()) and (env.get("OTEL_SDK_DISABLED") or "").strip().lower() != "true"


_HOST_PATTERN = re.compile(r"^(\*|(\*\.)?[a-z0-9]([a-z0-9-]*[a-z0-9])?(\.[a-z0-9]([a-z0-9-]*[a-z0-9])?)*)$")
_VARIABLE = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


def host_pattern(raw: str, name: str) -> str:
    """A host name (`api.example.com`), every host under a domain (`*.example.com`), or `*` (every host)."""
    host = raw.lower().rstrip(".")
    if not _HOST_PATTERN.match(host):
        raise SettingsError(f"{name} must list host names such as api.example.com or patterns such as "
                            f"*.example.com, not {raw!r}.")
    return host


def variable_name(raw: str, name: str) -> str:
    """The name of an environment variable (letters, digits and '_', not starting with a digit)."""
    if not _VARIABLE.match(raw):
        raise SettingsError(f"{name} must list names of environment variables, not {raw!r}.")
    return raw
