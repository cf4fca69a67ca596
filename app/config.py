"""Settings, read once from an environment mapping by `from_env`."""

from __future__ import annotations

import ipaddress
import json
import os
import re
import secrets
import socket
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar
from urllib.parse import urlsplit

from extractors.limits import ExtractionLimits

N = TypeVar("N", int, float)


class SettingsError(ValueError):
    """A setting that cannot be used; the message names the variable."""


@dataclass(frozen=True)
class ApiKey:
    """One `key:mandateId:userId` triple from API_KEYS."""

    key: str
    mandate_id: int
    user_id: int

    def __repr__(self) -> str:  # never print a secret
        return f"ApiKey(mandate_id={self.mandate_id}, user_id={self.user_id})"


@dataclass(frozen=True)
class Settings:
    """Everything configurable; docs/configuration.md describes each variable."""

    host: str = "127.0.0.1"
    port: int = 8000
    data_dir: Path = Path("data")
    database_url: str = ""
    openai_api_key: str = field(default="", repr=False)
    openai_base_url: str = ""
    llm_model: str = "gpt-4o-mini"
    agent_models: Mapping[str, str] = field(default_factory=dict)
    api_keys: tuple[ApiKey, ...] = field(default=(), repr=False)
    max_upload_bytes: int = 50 * 1024 * 1024
    max_prompt_chars: int = 100_000  # longer text belongs in an attached file
    max_concurrent_rounds: int = 8
    llm_timeout_seconds: float = 60.0
    llm_max_retries: int = 3
    llm_context_tokens: int = 0  # 0: the model family's known context size
    llm_temperature: float | None = None  # None: each call kind's own (planning 0, writing 0.5)
    agent_temperatures: Mapping[str, float] = field(default_factory=dict)
    log_model_io: bool = False
    log_format: str = "plain"
    # MCP servers whose tools become agents (`<server>.<tool>`): checked entries of MCP_SERVERS; their
    # headers and env may carry secrets, so they stay out of the settings' repr.
    mcp_servers: tuple[Mapping[str, Any], ...] = field(default=(), repr=False)
    mcp_timeout_seconds: float = 60.0
    mcp_max_result_bytes: int = 10_000_000  # one tool call's answer; a larger one is dropped, its server restarted
    tracing: bool = False  # an OTLP endpoint is set (OTEL_EXPORTER_OTLP_[TRACES_]ENDPOINT): rounds are traced
    round_retry_budget: int = 12
    max_tasks_per_plan: int = 8
    max_round_tokens: int = 200_000
    max_round_seconds: float = 900.0
    review_timeout_seconds: float = 86_400.0  # a round waiting for the user this long ends stopped
    max_replans: int = 2  # revisions of a round's plan after a task failed or was skipped
    agent_questions: bool = False  # a real model behind a built-in agent may ask the user (agents.questions)
    round_max_attempts: int = 3  # attempts of a round that may fail by an error inside it (crashes do not count)
    task_concurrency: int = 4
    max_task_outputs: int = 20  # documents of one task; the rest arrive bundled in one ZIP
    extract_timeout_seconds: float = 120.0
    # Bounds on what one upload may become while it is read (see extractors.limits); 0 turns one off.
    max_inflated_part_bytes: int = 128 << 20  # one part of a DOCX/XLSX/PPTX/ODF/EPUB, inflated
    max_inflated_file_bytes: int = 256 << 20  # all parts of one such file, inflated
    max_inflate_ratio: int = 200  # inflated/compressed of a part over 1 MiB
    max_extracted_chars: int = 2_000_000  # text kept of one file; the rest is cut with a notice
    max_indexed_passages: int = 5_000  # full-text passages indexed of one file
    extract_memory_bytes: int = 2 << 30  # address space one reader process may take beyond its start-up
    unattached_upload_ttl_seconds: float = 86_400.0  # an upload no workflow uses is removed this long after
    orphan_grace_seconds: float = 3_600.0  # stored bytes no file row names are removed once unnamed this long
    housekeeping_seconds: float = 600.0  # the leftovers collector's pass runs at start-up, then this often
    app_version: str = "foreman-1"
    executor_id: str = "local"  # from_env: one per process on PostgreSQL (see default_executor_id)
    heartbeat_timeout_seconds: float = 30.0  # a replica silent this long has its rounds taken over
    shutdown_grace_seconds: float = 20.0  # on SIGTERM, running steps may finish this long before the handover
    event_heartbeat_seconds: float = 15.0  # an idle event stream sends a comment line this often
    event_send_timeout_seconds: float = 30.0  # an event stream client that reads nothing this long is dropped
    cors_origins: tuple[str, ...] = ()  # browser origins allowed to call the API; empty: no CORS
    file_store: str = ""  # "local" or "database"; empty: database on PostgreSQL, local on SQLite
    chat_stop_on_disconnect: bool = True  # a chat completions or AG-UI client that leaves stops its round
    embeddings: str = "local"  # "local": the bundled multilingual model embeds passages; "off": BM25 alone
    embedding_workers: int = 1  # threads embedding passages in the background (each one core)
    embeddings_base_url: str = ""  # an OpenAI-compatible /embeddings endpoint, used instead of the local model
    embeddings_model: str = ""
    embeddings_api_key: str = field(default="", repr=False)
    metrics: bool = True  # GET /metrics (Prometheus text, no key) and the HTTP request metrics
    # PostgreSQL connections of one replica, at most: the sum of these three plus 2 (see `max_connections`).
    database_pool_size: int = 10  # the service's own pool: connections kept open
    database_max_overflow: int = 5  # ... and opened beyond those under a burst, closed when returned
    database_pool_timeout_seconds: float = 30.0  # a request (or a round's write) waits this long for a connection
    dbos_pool_size: int = 10  # DBOS's system-database pool (its checkpoints, queue and recovery)

    @property
    def max_json_bytes(self) -> int:
        """The largest JSON body: room for the longest prompt, each character escaped."""
        return max(1 << 20, self.max_prompt_chars * 6 + (64 << 10))

    @property
    def extraction_limits(self) -> ExtractionLimits:
        return ExtractionLimits(max_part_bytes=self.max_inflated_part_bytes,
                                max_inflated_bytes=self.max_inflated_file_bytes, max_ratio=self.max_inflate_ratio,
                                max_chars=self.max_extracted_chars, memory_bytes=self.extract_memory_bytes)

    @property
    def offline(self) -> bool:
        """True when no model endpoint is configured: the built-in offline model answers."""
        return not (self.openai_api_key or self.openai_base_url)

    @property
    def local_mode(self) -> bool:
        """Single-user mode: no API keys configured."""
        return not self.api_keys

    @property
    def max_connections(self) -> int:
        """The most PostgreSQL connections one replica opens: both pools, DBOS's LISTEN connection
        (which it takes out of its pool) and the cursor notifications' LISTEN connection."""
        return self.database_pool_size + self.database_max_overflow + self.dbos_pool_size + 2

    @property
    def app_database_url(self) -> str:
        return self.database_url or f"sqlite+aiosqlite:///{self.data_dir.resolve() / 'foreman.db'}"

    @property
    def is_sqlite(self) -> bool:
        return self.app_database_url.startswith("sqlite")

    @property
    def file_store_kind(self) -> str:
        """Where file bytes live: FILE_STORE, else the database on PostgreSQL (replicas share it) and DATA_DIR on SQLite."""
        return self.file_store or ("local" if self.is_sqlite else "database")

    @property
    def system_database_url(self) -> str:
        """DBOS's own database: a SQLite file beside ours, or the same PostgreSQL database."""
        url = self.app_database_url
        if self.is_sqlite:
            return f"sqlite:///{self.data_dir.resolve() / 'dbos.sqlite'}"
        return url.replace("+asyncpg", "+psycopg", 1)

    def check(self) -> None:
        """Refuse settings that would be unsafe to run with."""
        _endpoint(self.openai_base_url)
        if self.max_task_outputs < 1:
            raise SettingsError(f"MAX_TASK_OUTPUTS must be at least 1, not {self.max_task_outputs}.")
        if self.local_mode and not _is_loopback(self.host):
            raise SettingsError(
                f"API_KEYS is empty (single-user local mode), so HOST must be a loopback address, "
                f"not {self.host!r}. Set API_KEYS or HOST=127.0.0.1."
            )


def _is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def _parse_keys(raw: str) -> tuple[ApiKey, ...]:
    keys = []
    for part in filter(None, (p.strip() for p in raw.split(","))):
        fields = part.split(":")
        if len(fields) != 3 or not fields[0] or not fields[1].isdigit() or not fields[2].isdigit():
            raise SettingsError("API_KEYS must hold key:mandateId:userId triples separated by commas.")
        keys.append(ApiKey(fields[0], int(fields[1]), int(fields[2])))
    if len({k.key for k in keys}) != len(keys):
        raise SettingsError("API_KEYS lists the same key twice.")
    return tuple(keys)


def _parse_origins(raw: str) -> tuple[str, ...]:
    origins = tuple(dict.fromkeys(o.strip().rstrip("/") for o in raw.split(",") if o.strip()))
    for origin in origins:
        if origin != "*" and not (origin.startswith(("http://", "https://")) and "/" not in origin.split("://", 1)[1]):
            raise SettingsError(f"CORS_ORIGINS must list origins such as https://app.example.com, not {origin!r}.")
    return origins


def _endpoint(raw: str) -> str:
    """OPENAI_BASE_URL: an http(s) URL without credentials in it (they would be sent in the clear in every
    request line's logs and shown in errors; the key goes in OPENAI_API_KEY)."""
    url = raw.strip()
    if not url:
        return ""
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise SettingsError("OPENAI_BASE_URL must be an http:// or https:// URL such as https://api.openai.com/v1.")
    if parts.username is not None or parts.password is not None:
        raise SettingsError("OPENAI_BASE_URL must not carry a user name or password (user:password@host): give "
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


def _number(env: Mapping[str, str], name: str, default: N, kind: Callable[[str], N]) -> N:
    raw = env.get(name, "").strip()
    if not raw:
        return default
    try:
        value = kind(raw)
    except ValueError:
        raise SettingsError(f"{name} must be a number, not {raw!r}.") from None
    if value < 0:
        raise SettingsError(f"{name} must not be negative.")
    return value


def _temperature(raw: str, name: str) -> float | None:
    return _temperature_of(raw, name) if raw.strip() else None


def _temperature_of(raw: str, name: str) -> float:
    try:
        value = float(raw)
    except ValueError:
        raise SettingsError(f"{name} must be a number between 0 and 2, not {raw!r}.") from None
    if not 0 <= value <= 2:
        raise SettingsError(f"{name} must be between 0 and 2, not {raw!r}.")
    return value


def _flag(raw: str, name: str) -> bool:
    value = raw.strip().lower()
    if value in ("", "0", "false", "no", "off"):
        return False
    if value in ("1", "true", "yes", "on"):
        return True
    raise SettingsError(f"{name} must be true or false, not {raw!r}.")


def default_executor_id(database_url: str) -> str:
    """SQLite: the fixed "local", so a restarted process resumes its own rounds. PostgreSQL: this
    process's own (host, pid and a random part), so two replicas never share one by accident."""
    if not database_url or database_url.startswith("sqlite"):
        return Settings.executor_id
    return f"{socket.gethostname()}-{os.getpid()}-{secrets.token_hex(4)}"


def from_env(env: Mapping[str, str]) -> Settings:
    """Build settings from an environment mapping (os.environ in production, a dict in tests)."""
    base = Settings()
    agent_models = {
        name[len("LLM_MODEL_"):].lower(): value
        for name, value in env.items()
        if name.startswith("LLM_MODEL_") and value
    }
    temperatures = {name[len("LLM_TEMPERATURE_"):].lower(): _temperature_of(value, name)
                    for name, value in env.items() if name.startswith("LLM_TEMPERATURE_") and value.strip()}
    file_store = (env.get("FILE_STORE") or "").strip().lower()
    if file_store not in ("", "local", "database"):
        raise SettingsError(f"FILE_STORE must be local or database, not {file_store!r}.")
    embeddings = (env.get("EMBEDDINGS") or "local").strip().lower()
    if embeddings not in ("local", "off"):
        raise SettingsError(f"EMBEDDINGS must be local or off, not {embeddings!r}.")
    if (env.get("EMBEDDINGS_BASE_URL") or "").strip() and not (env.get("EMBEDDINGS_MODEL") or "").strip():
        raise SettingsError("EMBEDDINGS_MODEL must name the model when EMBEDDINGS_BASE_URL is set.")
    log_format = (env.get("LOG_FORMAT") or "plain").strip().lower()
    if log_format not in ("plain", "json"):
        raise SettingsError(f"LOG_FORMAT must be plain or json, not {log_format!r}.")
    ints = {
        "port": "PORT",
        "max_upload_bytes": "MAX_UPLOAD_BYTES",
        "max_prompt_chars": "MAX_PROMPT_CHARS",
        "max_concurrent_rounds": "MAX_CONCURRENT_ROUNDS",
        "llm_max_retries": "LLM_MAX_RETRIES",
        "llm_context_tokens": "LLM_CONTEXT_TOKENS",
        "round_retry_budget": "ROUND_RETRY_BUDGET",
        "max_tasks_per_plan": "MAX_TASKS_PER_PLAN",
        "mcp_max_result_bytes": "MCP_MAX_RESULT_BYTES",
        "max_round_tokens": "MAX_ROUND_TOKENS",
        "round_max_attempts": "ROUND_MAX_ATTEMPTS",
        "task_concurrency": "TASK_CONCURRENCY",
        "max_task_outputs": "MAX_TASK_OUTPUTS",
        "max_replans": "MAX_REPLANS",
        "database_pool_size": "DATABASE_POOL_SIZE",
        "database_max_overflow": "DATABASE_MAX_OVERFLOW",
        "dbos_pool_size": "DBOS_POOL_SIZE",
        "max_inflated_part_bytes": "MAX_INFLATED_PART_BYTES",
        "max_inflated_file_bytes": "MAX_INFLATED_FILE_BYTES",
        "max_inflate_ratio": "MAX_INFLATE_RATIO",
        "max_extracted_chars": "MAX_EXTRACTED_CHARS",
        "max_indexed_passages": "MAX_INDEXED_PASSAGES",
        "extract_memory_bytes": "EXTRACT_MEMORY_BYTES",
        "embedding_workers": "EMBEDDING_WORKERS",
    }
    floats = {
        "llm_timeout_seconds": "LLM_TIMEOUT_SECONDS",
        "max_round_seconds": "MAX_ROUND_SECONDS",
        "review_timeout_seconds": "REVIEW_TIMEOUT_SECONDS",
        "extract_timeout_seconds": "EXTRACT_TIMEOUT_SECONDS",
        "event_heartbeat_seconds": "EVENT_HEARTBEAT_SECONDS",
        "event_send_timeout_seconds": "EVENT_SEND_TIMEOUT_SECONDS",
        "heartbeat_timeout_seconds": "HEARTBEAT_TIMEOUT_SECONDS",
        "shutdown_grace_seconds": "SHUTDOWN_GRACE_SECONDS",
        "database_pool_timeout_seconds": "DATABASE_POOL_TIMEOUT_SECONDS",
        "unattached_upload_ttl_seconds": "UNATTACHED_UPLOAD_TTL_SECONDS",
        "mcp_timeout_seconds": "MCP_TIMEOUT_SECONDS",
        "orphan_grace_seconds": "ORPHAN_GRACE_SECONDS",
        "housekeeping_seconds": "HOUSEKEEPING_SECONDS",
    }
    # Each value has its setting's own type (int or float), which a dict's type cannot say per key.
    numbers: dict[str, Any] = {attr: _number(env, var, getattr(base, attr), int) for attr, var in ints.items()}
    numbers |= {attr: _number(env, var, getattr(base, attr), float) for attr, var in floats.items()}
    for attr, var in (("heartbeat_timeout_seconds", "HEARTBEAT_TIMEOUT_SECONDS"),
                      ("housekeeping_seconds", "HOUSEKEEPING_SECONDS")):
        if not numbers[attr]:
            raise SettingsError(f"{var} must be more than 0.")
    for attr, var in (("database_pool_size", "DATABASE_POOL_SIZE"), ("dbos_pool_size", "DBOS_POOL_SIZE"),
                      ("round_max_attempts", "ROUND_MAX_ATTEMPTS")):
        if not numbers[attr]:
            raise SettingsError(f"{var} must be at least 1.")
    return Settings(
        host=env.get("HOST", base.host) or base.host,
        data_dir=Path(env.get("DATA_DIR") or base.data_dir),
        database_url=env.get("DATABASE_URL", ""),
        openai_api_key=env.get("OPENAI_API_KEY", ""),
        openai_base_url=_endpoint(env.get("OPENAI_BASE_URL", "")),
        llm_model=env.get("LLM_MODEL") or base.llm_model,
        agent_models=agent_models,
        llm_temperature=_temperature(env.get("LLM_TEMPERATURE", ""), "LLM_TEMPERATURE"),
        agent_temperatures=temperatures,
        log_model_io=_flag(env.get("LOG_MODEL_IO", ""), "LOG_MODEL_IO"),
        log_format=log_format,
        tracing=_tracing(env),
        mcp_servers=mcp_servers(env.get("MCP_SERVERS", "")),
        api_keys=_parse_keys(env.get("API_KEYS", "")),
        executor_id=env.get("EXECUTOR_ID") or default_executor_id(env.get("DATABASE_URL", "")),
        cors_origins=_parse_origins(env.get("CORS_ORIGINS", "")),
        file_store=file_store,
        embeddings=embeddings,
        embeddings_base_url=(env.get("EMBEDDINGS_BASE_URL") or "").strip(),
        embeddings_model=(env.get("EMBEDDINGS_MODEL") or "").strip(),
        embeddings_api_key=env.get("EMBEDDINGS_API_KEY") or env.get("OPENAI_API_KEY", ""),
        metrics=_flag(env.get("METRICS_ENABLED", "true"), "METRICS_ENABLED"),
        chat_stop_on_disconnect=_flag(env.get("CHAT_STOP_ON_DISCONNECT", "true"), "CHAT_STOP_ON_DISCONNECT"),
        agent_questions=_flag(env.get("AGENT_QUESTIONS", ""), "AGENT_QUESTIONS"),
        **numbers,
    )


# Every variable `from_env` reads, with its default and meaning (`python -m app --help` prints them).
HELP: tuple[tuple[str, str, str], ...] = (
    ("HOST", "127.0.0.1", "address to listen on"),
    ("PORT", "8000", "port to listen on"),
    ("DATA_DIR", "./data", "database files and stored uploads"),
    ("DATABASE_URL", "SQLite in DATA_DIR", "e.g. postgresql+asyncpg://user@host/db"),
    ("FILE_STORE", "database on PostgreSQL, else local",
     "where file bytes live: local (DATA_DIR/files) or database (shared by every replica)"),
    ("OPENAI_BASE_URL", "unset", "an OpenAI-compatible endpoint (no user:password@ in it); unset with no key: "
     "the offline model answers"),
    ("OPENAI_API_KEY", "unset", "the provider's key"),
    ("LLM_MODEL", "gpt-4o-mini", "model name sent to the provider"),
    ("LLM_MODEL_<AGENT>", "LLM_MODEL", "model for one agent, e.g. LLM_MODEL_WRITER"),
    ("API_KEYS", "empty", "key:mandateId:userId,...; empty: single-user local mode (loopback only)"),
    ("CORS_ORIGINS", "empty", "comma-separated browser origins allowed to call the API; empty: no CORS"),
    ("MAX_UPLOAD_BYTES", str(Settings.max_upload_bytes), "largest upload (413 above it)"),
    ("MAX_PROMPT_CHARS", str(Settings.max_prompt_chars), "longest prompt (400 prompt_too_long above it)"),
    ("MAX_CONCURRENT_ROUNDS", str(Settings.max_concurrent_rounds), "rounds running at once in this process"),
    ("TASK_CONCURRENCY", str(Settings.task_concurrency), "tasks of one round running at once"),
    ("MAX_TASKS_PER_PLAN", str(Settings.max_tasks_per_plan), "most tasks in one plan"),
    ("MAX_TASK_OUTPUTS", str(Settings.max_task_outputs),
     "documents one task delivers as they are; the rest come in one ZIP archive"),
    ("MAX_ROUND_TOKENS", str(Settings.max_round_tokens), "token budget of one round"),
    ("MAX_ROUND_SECONDS", str(int(Settings.max_round_seconds)), "time budget of one round"),
    ("REVIEW_TIMEOUT_SECONDS", str(int(Settings.review_timeout_seconds)),
     "a round waiting for the user (plan review, question, tool approval) this long ends stopped"),
    ("MAX_REPLANS", str(Settings.max_replans), "revisions of a round's plan after a task failed or was skipped"),
    ("AGENT_QUESTIONS", "false", "true: a real model behind a built-in agent may ask the user a question mid-task"),
    ("ROUND_MAX_ATTEMPTS", str(Settings.round_max_attempts),
     "attempts of a round that may end in an error inside it before it fails; crashes, takeovers and "
     "database outages are not counted"),
    ("LLM_CONTEXT_TOKENS", "the model family's", "the served model's context window"),
    ("LLM_TIMEOUT_SECONDS", str(int(Settings.llm_timeout_seconds)), "timeout of one model call"),
    ("LLM_MAX_RETRIES", str(Settings.llm_max_retries), "retries of one model call (transient errors)"),
    ("ROUND_RETRY_BUDGET", str(Settings.round_retry_budget), "retries in one round"),
    ("EXTRACT_TIMEOUT_SECONDS", str(int(Settings.extract_timeout_seconds)),
     "time limit for extracting one file (its own work, not time queued)"),
    ("MAX_INFLATED_PART_BYTES", str(Settings.max_inflated_part_bytes),
     "one part of a DOCX/XLSX/PPTX/OpenDocument/EPUB may inflate to this; larger: the file is refused (0: no limit)"),
    ("MAX_INFLATED_FILE_BYTES", str(Settings.max_inflated_file_bytes),
     "all parts of one such file may inflate to this in all (0: no limit)"),
    ("MAX_INFLATE_RATIO", str(Settings.max_inflate_ratio),
     "a part over 1 MiB compressed more than this (inflated:compressed) is refused (0: no limit)"),
    ("MAX_EXTRACTED_CHARS", str(Settings.max_extracted_chars),
     "text kept of one file; the rest is cut, with a notice in the content (0: no limit)"),
    ("MAX_INDEXED_PASSAGES", str(Settings.max_indexed_passages),
     "full-text passages indexed of one file; search finds none past them (0: no limit)"),
    ("EXTRACT_MEMORY_BYTES", str(Settings.extract_memory_bytes),
     "memory (address space) one file reader process may take beyond its start-up; a file needing "
     "more fails alone (0: no limit)"),
    ("UNATTACHED_UPLOAD_TTL_SECONDS", str(int(Settings.unattached_upload_ttl_seconds)),
     "an upload no workflow uses is removed this long after it was made (0: never)"),
    ("ORPHAN_GRACE_SECONDS", str(int(Settings.orphan_grace_seconds)),
     "stored bytes no file row names (a crash between storing them and their row) are removed once "
     "unnamed this long"),
    ("HOUSEKEEPING_SECONDS", str(int(Settings.housekeeping_seconds)),
     "the leftovers collector runs at start-up, then this often (one replica at a time)"),
    ("EXECUTOR_ID", "local on SQLite; host-pid-random on PostgreSQL",
     "DBOS executor id: which process runs (and on SQLite resumes) a round"),
    ("HEARTBEAT_TIMEOUT_SECONDS", str(int(Settings.heartbeat_timeout_seconds)),
     "a replica silent this long has its rounds taken over by another (PostgreSQL)"),
    ("SHUTDOWN_GRACE_SECONDS", str(int(Settings.shutdown_grace_seconds)),
     "on SIGTERM, running steps may finish this long; then the rest is handed over"),
    ("DATABASE_POOL_SIZE", str(Settings.database_pool_size),
     "PostgreSQL: connections the service's pool keeps open"),
    ("DATABASE_MAX_OVERFLOW", str(Settings.database_max_overflow),
     "PostgreSQL: connections opened beyond the pool under a burst"),
    ("DATABASE_POOL_TIMEOUT_SECONDS", str(int(Settings.database_pool_timeout_seconds)),
     "PostgreSQL: a request waits this long for a free connection, then answers 503 database_unavailable"),
    ("DBOS_POOL_SIZE", str(Settings.dbos_pool_size),
     "PostgreSQL: DBOS's pool; one replica opens at most the three sizes + 2 connections"),
    ("LLM_TEMPERATURE", "per call kind", "sampling temperature sent to the provider"),
    ("EMBEDDINGS", "local",
     "local: passages are also embedded by the bundled multilingual model (hybrid search); off: BM25 alone"),
    ("EMBEDDING_WORKERS", str(Settings.embedding_workers), "threads embedding passages in the background"),
    ("EMBEDDINGS_BASE_URL", "unset", "an OpenAI-compatible embeddings endpoint, used instead of the local model"),
    ("EMBEDDINGS_MODEL", "unset", "the model name sent to EMBEDDINGS_BASE_URL (required with it)"),
    ("EMBEDDINGS_API_KEY", "OPENAI_API_KEY", "the key of EMBEDDINGS_BASE_URL"),
    ("LOG_FORMAT", "plain", "server log format: plain or json (one object per line)"),
    ("LOG_MODEL_IO", "false", "true: log every model request and answer (and put them on the model calls' spans)"),
    ("OTEL_EXPORTER_OTLP_ENDPOINT", "unset",
     "set: every round is an OpenTelemetry trace, exported over OTLP/HTTP to it (other OTEL_* apply; docs/tracing.md)"),
    ("MCP_SERVERS", "unset",
     "MCP servers whose tools become agents named <server>.<tool>: a JSON list, inline or a file's path "
     "(docs/configuration.md#mcp-servers)"),
    ("MCP_TIMEOUT_SECONDS", str(int(Settings.mcp_timeout_seconds)),
     "an MCP server's start or list of tools, and one tool call, may take this long"),
    ("MCP_MAX_RESULT_BYTES", "10000000",
     "one MCP tool call may answer this many bytes; a larger answer is dropped and its server's session restarted"),
    ("METRICS_ENABLED", "true", "false: no GET /metrics (Prometheus text format, served without a key)"),
    ("CHAT_STOP_ON_DISCONNECT", "true",
     "false: a /v1/chat/completions or AG-UI round goes on when its client disconnects (true: it is stopped)"),
    ("EVENT_HEARTBEAT_SECONDS", str(int(Settings.event_heartbeat_seconds)), "comment line on an idle event stream"),
    ("EVENT_SEND_TIMEOUT_SECONDS", str(int(Settings.event_send_timeout_seconds)),
     "an event stream client that reads nothing this long is dropped"),
)


_SERVER_NAME = re.compile(r"^[a-z][a-z0-9_-]{0,63}$")
_SERVER_KEYS = {"name", "transport", "command", "args", "env", "cwd", "url", "headers", "allow", "approve"}


def mcp_servers(raw: str) -> tuple[dict[str, Any], ...]:
    """MCP_SERVERS: a JSON list of servers, inline or in the file it names, each entry checked."""
    text = raw.strip()
    if not text:
        return ()
    if not text.startswith(("[", "{")):
        try:
            text = Path(text).read_text(encoding="utf-8")
        except OSError as exc:
            raise SettingsError(f"MCP_SERVERS names the file {text!r}, which cannot be read ({exc.strerror}).") from None
    try:
        servers = json.loads(text)
    except ValueError as exc:
        raise SettingsError(f"MCP_SERVERS is not valid JSON ({exc}).") from None
    if not isinstance(servers, list):
        raise SettingsError("MCP_SERVERS must be a JSON list of servers.")
    checked, names = [], set()
    for n, server in enumerate(servers, 1):
        where = f"MCP_SERVERS entry {n}"
        if not isinstance(server, dict):
            raise SettingsError(f"{where} must be an object.")
        name, transport = server.get("name"), server.get("transport", "stdio")
        if not isinstance(name, str) or not _SERVER_NAME.match(name):
            raise SettingsError(f"{where} needs a name of lowercase letters, digits, '_' or '-' (it prefixes "
                                "the tools' agent names).")
        if name in names:
            raise SettingsError(f"MCP_SERVERS names the server {name!r} twice.")
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
        checked.append({**server, "transport": transport})
    return tuple(checked)


def _tracing(env: Mapping[str, str]) -> bool:
    """Whether the environment asks for traces: an OTLP endpoint, and the OpenTelemetry SDK not disabled."""
    endpoint = env.get("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT") or env.get("OTEL_EXPORTER_OTLP_ENDPOINT") or ""
    return bool(endpoint.strip()) and (env.get("OTEL_SDK_DISABLED") or "").strip().lower() != "true"


def help_text() -> str:
    """The settings as a table: name, default, meaning."""
    width = max(len(name) for name, _, _ in HELP)
    dwidth = max(len(default) for _, default, _ in HELP)
    lines = ["usage: python -m app           serve the API (migrates the database schema first)",
             "       python -m app migrate   only migrate the database schema to the newest revision, then exit",
             "                               (for operators who run migrations as a separate deploy step)",
             "", "Settings come from the environment:", ""]
    lines += [f"  {name:<{width}}  {default:<{dwidth}}  {meaning}" for name, default, meaning in HELP]
    return "\n".join(lines)
