"""`create_app`: the Litestar application, wired from settings."""

from __future__ import annotations

import asyncio
import functools
import logging
import os
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import TYPE_CHECKING, Any

from litestar import Litestar, Request, get
from litestar.config.compression import CompressionConfig
from litestar.config.cors import CORSConfig
from litestar.routes import HTTPRoute
from litestar.types import LifeSpanReceive, LifeSpanScope, LifeSpanSend, Receive, Scope, Send

from agents.knowledge.embeddings import local_embeddings
from agents.model import Model
from agents.registry import Registry, build_registry
from agents.round import Limits, Runner
from app import metrics
from app.clock import now
from app.config import Settings, SettingsError, from_env, redact_url
from app.contract.schemas import Health
from app.errors import NotReadyError
from app.protocols import mounts, openai_chat
from app.protocols.rounds import Rounds
from app.rounds import tracing
from app.rounds.documents import Documents
from app.rounds.drafts import Drafts
from app.rounds.inputs import RoundData
from app.rounds.journal import Journal
from app.rounds.live import Changes
from app.rounds.runtime import Runtime
from app.rounds.supervisor import Engine
from app.sandbox.code import CodeSandbox
from app.sandbox.confinement import unsupported_reason
from app.services.files import FileService
from app.services.workflows import WorkflowService
from app.store.cursors import CursorCache
from app.store.database import Database
from app.store.filestore import open_store
from app.store.repository import Repository
from app.store.repository.chunks import ChunkStore
from app.store.search import IndexSearch
from app.store.vectors import VectorIndex
from app.web import docs, flow_versions, middleware, page
from app.web import events as event_routes
from app.web import files as file_routes
from app.web import flows as flow_routes
from app.web import workflows as workflow_routes
from app.web.http import EXCEPTION_HANDLERS, Authenticator, StrictRequest, errors
from extractors.runner import configure as configure_readers

if TYPE_CHECKING:
    from agents.tools.mcp import McpTools

log = logging.getLogger("foreman")

MULTIPART_OVERHEAD = 64 * 1024
WARM_WAIT_SECONDS = 20.0  # at most this long /ready waits for the file readers to start
READY_CACHE_SECONDS = 1.0  # /ready asks the database at most this often
READY_DB_TIMEOUT_SECONDS = 2.0  # ... and a database slower than this to answer SELECT 1 is not ready
COMPRESS_ABOVE = 1024  # bytes; an empty poll stays uncompressed, so the hot path pays nothing
# Server-sent events go out as written, never held in a compressor's buffer. File downloads go out
# as stored: compressing 50 MB (mostly already-compressed PDF, DOCX, XLSX) took the event loop's
# time and held the file 3.6 times over in memory (bench/upload_memory.py).
UNCOMPRESSED = r"((/events|/api/files/\d+/content)$|^/mcp|^/v1/chat/completions$|^/api/ag-ui$)"


class ForemanApp(Litestar):
    """The Litestar application, answering HEAD as GET and saying `nosniff` on every response."""

    async def __call__(self, scope: Scope | LifeSpanScope, receive: Receive | LifeSpanReceive,
                       send: Send | LifeSpanSend) -> None:
        # The ignore: Litestar's ASGI TypedDicts go where the middleware takes plain dicts (the same objects).
        await middleware.serve(super().__call__, scope, receive, send, self.cors_config,  # type: ignore[arg-type]
                               self.allowed_methods)

    @functools.cached_property
    def _allowed(self) -> dict[str, str]:
        found: dict[str, set[str]] = {}
        for route in self.routes:
            if isinstance(route, HTTPRoute):
                found.setdefault(route.path_format, set()).update(route.methods)
        return {path: ", ".join(sorted(m | ({"HEAD"} if "GET" in m else set()))) for path, m in found.items()}

    def allowed_methods(self, path_template: str) -> str | None:
        """Every method a path answers (HEAD wherever GET is), for an OPTIONS answer's Allow."""
        return self._allowed.get(path_template)


class QuietCancellations(logging.Filter):
    """Drops DBOS's warning per cancelled task of a stopped round (the service logs one line per stop)."""

    def filter(self, record: logging.LogRecord) -> bool:
        return not (record.levelno == logging.WARNING
                    and str(record.msg).startswith("Asyncio task cancelled for workflow or step"))


def one_log_format() -> None:
    """DBOS's records go through the root logger's handlers, filtered, like everyone else's."""
    dbos_log = logging.getLogger("dbos")
    for handler in list(dbos_log.handlers):
        dbos_log.removeHandler(handler)
    dbos_log.propagate = True
    if not any(isinstance(f, QuietCancellations) for f in dbos_log.filters):
        dbos_log.addFilter(QuietCancellations())


def cors_config(settings: Settings) -> CORSConfig | None:
    """The browser origins CORS_ORIGINS allows, or None (no CORS headers at all)."""
    if not settings.cors_origins:
        return None
    return CORSConfig(allow_origins=list(settings.cors_origins),
                      allow_methods=["GET", "HEAD", "POST", "PATCH", "DELETE", "OPTIONS"],
                      allow_headers=["Authorization", "Content-Type", "Idempotency-Key", "If-None-Match", "X-Foreman-Workflow",
                                     "Last-Event-ID"],
                      expose_headers=["ETag", "Content-Disposition", "Content-Length", "X-Foreman-Workflow"], max_age=600)


def offline_model() -> Model:
    """The built-in offline model: where it is registered, the one module outside `agents/offline`
    that names it (`tests/test_layers.py`)."""
    from agents.offline import OfflineModel

    return OfflineModel()


def build_model(settings: Settings) -> Model:
    """The configured OpenAI-compatible endpoint, or the built-in offline model when there is none."""
    if settings.offline:
        return offline_model()
    from app.llm.client import OpenAIModel

    model = OpenAIModel(
        base_url=settings.openai_base_url or "https://api.openai.com/v1", api_key=settings.openai_api_key or "none",
        model=settings.llm_model, agent_models=settings.agent_models, timeout=settings.llm_timeout_seconds,
        max_retries=settings.llm_max_retries, temperature=settings.llm_temperature,
        agent_temperatures=settings.agent_temperatures, log_io=settings.log_model_io,
        context_tokens=settings.llm_context_tokens or None,
        # The calls that can run at once: every running round's parallel tasks.
        max_connections=settings.max_concurrent_rounds * settings.task_concurrency,
    )
    return model


def build_runtime(settings: Settings, model: Model, registry: Registry) -> Runtime:
    """The service's dependencies, wired once per process."""
    try:
        limits = Limits(max_tasks=settings.max_tasks_per_plan, task_concurrency=settings.task_concurrency,
                        max_round_tokens=settings.max_round_tokens, max_replans=settings.max_replans,
                        max_task_outputs=settings.max_task_outputs, plan_fixes_off=frozenset(settings.plan_fixes_off),
                        flow_node_runs=settings.flow_max_node_runs)
    except ValueError as exc:  # a fix named that is none
        raise SettingsError(str(exc)) from None
    db = Database(settings.app_database_url, idle_transaction_seconds=settings.heartbeat_timeout_seconds,
                  pool_size=settings.database_pool_size, max_overflow=settings.database_max_overflow,
                  pool_timeout=settings.database_pool_timeout_seconds,
                  application_name=f"foreman {settings.executor_id}")
    repo = Repository(db)
    storage = open_store(settings.file_store_kind, db, settings.data_dir / "files")
    changes = Changes()
    cursors = CursorCache(on_change=changes.touch)
    db.on_ids = cursors.raise_to
    journal = Journal(repo, cursors, Drafts(changes.touch_text, changes.touch, settings.heartbeat_timeout_seconds))
    chunks = ChunkStore(db)
    configure_readers(settings.extraction_limits)
    vectors, workers = None, max(1, settings.embedding_workers)  # the files embedded at once
    if settings.embeddings != "off" and settings.embeddings_base_url:
        from app.llm.embeddings import RemoteEmbedder  # imports `openai` (0.5 s): only when an endpoint is named

        embedder = RemoteEmbedder(settings.embeddings_base_url, settings.embeddings_model, settings.embeddings_api_key,
                                  settings.llm_timeout_seconds, settings.llm_max_retries)
        vectors = VectorIndex(chunks, embedder, workers)
    elif settings.embeddings == "local" and (local := local_embeddings(workers)) is not None:
        vectors = VectorIndex(chunks, local.embedder, workers, words=local.words)  # each in a worker process
    documents = Documents(repo, storage, settings.extract_timeout_seconds, chunks, settings.max_indexed_passages,
                          vectors)
    # The one Runner of the rounds' agent work, over what the full-text index finds (it ranks the passages);
    # `fallback` writes the final review (and a plan) when the model cannot.
    runner = Runner(model, registry, limits, IndexSearch(chunks, vectors), fallback=offline_model())
    return Runtime(settings=settings, model=model, db=db, repo=repo, storage=storage,
                   changes=changes, cursors=cursors, journal=journal, documents=documents,
                   rounds=RoundData(repo, storage, documents, journal, runner), clock=now,
                   runner=runner, sandbox=CodeSandbox())


def build_engine(settings: Settings, model: Model, registry: Registry) -> Engine:
    """The round engine over freshly wired dependencies (the app's, a benchmark's)."""
    return Engine(build_runtime(settings, model, registry), observer=metrics.ReplicaMetrics(settings.executor_id))


@get("/health", summary="200 while the process is up", operation_id="health", tags=["service"],
     security=[{}])
async def health() -> Health:
    return Health(status="ok")


@get("/ready", summary="200 once the database, the workflow engine and the file readers are ready",
     operation_id="ready", tags=["service"], security=[{}], responses=errors(503, auth=False))
async def ready(request: Request[Any, Any, Any]) -> Health:
    state = request.app.state
    if state.engine.drain.draining:
        raise NotReadyError("The service is shutting down; its rounds are handed to the other replicas.")
    warm = state.readers_warm
    # The file readers' warm-up is waited for, within bounds: on a machine too loaded to start them
    # in WARM_WAIT_SECONDS the service is ready without them (the first file's log says so).
    warming = warm is not None and not warm.done() and time.monotonic() - state.readers_since < WARM_WAIT_SECONDS
    if not state.engine.ready or warm is None or warming:
        raise NotReadyError("The service is starting; try again in a moment.")
    if not await state.database_check.ok():
        raise NotReadyError("The database does not answer; this replica cannot serve requests until it does.")
    return Health(status="ready")


class DatabaseCheck:
    """Whether the database answers, asked at most once a second (READY_CACHE_SECONDS) however often
    /ready is polled; callers meanwhile share the answer, and one check under way."""

    def __init__(self, db: Any) -> None:
        self.db = db
        self.checked_at = -READY_CACHE_SECONDS
        self.healthy = True
        self._running: asyncio.Future[bool] | None = None

    async def ok(self) -> bool:
        if time.monotonic() - self.checked_at < READY_CACHE_SECONDS:
            return self.healthy
        if self._running is None:
            self._running = asyncio.ensure_future(self._check())
        return await asyncio.shield(self._running)

    async def _check(self) -> bool:
        try:
            await self.db.ping(READY_DB_TIMEOUT_SECONDS)
            healthy = True
        except Exception as exc:  # noqa: BLE001 - any failure to answer is "not ready"
            if self.healthy:
                log.warning("The database does not answer (%s); /ready answers 503 until it does.",
                            type(exc).__name__)
            healthy = False
        else:
            if not self.healthy:
                log.info("The database answers again; /ready answers 200.")
        self.healthy, self.checked_at, self._running = healthy, time.monotonic(), None
        return healthy


# The warm-ups' own thread: the loop's default pool is DBOS's, whose four threads record the rounds
# resumed meanwhile (two warm-ups held two of them for as long as they took: 14-20 s on a quiet machine).
# One thread: the pools start one after the other, the file readers first (a resumed round's file
# waits for one), so fewer processes import at once beside the rounds on a loaded machine.
_WARM_UPS = ThreadPoolExecutor(max_workers=1, thread_name_prefix="foreman-warm")


def warm_up(app: Litestar) -> None:
    """Start the optional warm-ups, after the rounds to resume are under way (a start under repeated
    crashes makes progress on them first); what needs one waits for it lazily (a file read for a
    reader process, a language check for the detector). Each says when it is done."""
    from extractors.runner import warm_pool

    loop = asyncio.get_running_loop()
    since = time.monotonic()

    def done(what: str) -> Callable[[Any], None]:
        return lambda _: log.info("%s warm %.2f s after the rounds resumed.", what, time.monotonic() - since)

    # Reader processes import the extractors before the first file needs them; /ready waits for
    # them (within WARM_WAIT_SECONDS), so a round started once the service is ready finds them warm.
    app.state.readers_warm = loop.run_in_executor(_WARM_UPS, warm_pool)
    app.state.readers_since = since
    app.state.readers_warm.add_done_callback(done("The file readers were"))
    # The tokenizer and the language detector of this process, in threads of their own; and the agents' CPU
    # work, whose workers load them first (after the readers: one warm-up thread).
    app.state.runtime.runner.warm_up(_WARM_UPS).add_done_callback(done("The text workers were"))


def mcp_tools(settings: Settings) -> McpTools | None:
    """The connections to MCP_SERVERS' servers (none opened yet); None, and the MCP client not imported,
    when there are none."""
    if not settings.mcp_servers:
        return None
    from agents.tools.mcp import McpTools

    return McpTools.configured(settings.mcp_servers, settings.mcp_timeout_seconds, settings.mcp_max_result_bytes)


def create_app(settings: Settings | None = None, *, model: Model | None = None,
               registry: Registry | None = None, keep_workers: bool = False) -> Litestar:
    """The application: reads the environment only when no settings are given.

    `keep_workers`: the process's worker pools (file readers, the agents' CPU work) outlive the app,
    for a test session that runs many apps in one process and stops the pools once, at its end.
    """
    settings = settings or from_env(os.environ)
    settings.check()
    if settings.tracing and not tracing.enabled():  # the SDK reads the OTEL_* variables itself
        tracing.configure(os.environ, log_io=settings.log_model_io)
    model = tracing.traced(metrics.MeteredModel(model or build_model(settings)))
    engine = build_engine(settings, model, registry or build_registry())
    tools = mcp_tools(settings)

    async def startup() -> None:
        began = time.monotonic()
        if tools is not None:  # the configured MCP servers' tools join the registry before a recovered round plans
            engine.rt.runner.registry.add_tools(await tools.discover(tracing.traced_tool))
        tools_seconds = time.monotonic() - began
        log.info("Start-up: MCP tools in %.2f s.", tools_seconds)
        await engine.start()
        one_log_format()
        parts = {"MCP tools": tools_seconds, **engine.startup_seconds}
        log.info("Started in %.2f s (%s); the rounds to resume are under way, the warm-ups start now in the background.",
                 time.monotonic() - began, ", ".join(f"{name} {seconds:.2f} s" for name, seconds in parts.items()))
        if settings.offline:
            log.warning("No OPENAI_API_KEY or OPENAI_BASE_URL set: the built-in offline model answers "
                        "(extractive, deterministic, no generative AI).")
        else:
            log.info("Model endpoint %s, model %s.", redact_url(settings.openai_base_url) if settings.openai_base_url
                     else "OpenAI", settings.llm_model)
        warm_up(app)

        from extractors.runner import ocr_available

        if not ocr_available():
            log.warning("tesseract is not installed: OCR is off; scanned pages and images yield no text.")
        isolation = unsupported_reason()
        if isolation is not None:  # checked without starting a worker: the pool starts with the first code node
            log.warning("Flows' code nodes cannot run here (%s): a code node fails saying so; nothing runs "
                        "unisolated.", isolation)

    rounds = Rounds(WorkflowService(engine), FileService(engine.rt.repo.files, engine.rt.storage,
                                                         settings.max_upload_bytes), settings.event_heartbeat_seconds,
                    settings.chat_stop_on_disconnect)
    auth = Authenticator(settings)
    mcp = mounts.MCP(rounds, auth, settings.local_mode, mounts.max_body(settings))
    app = ForemanApp(
        route_handlers=[health, ready, *file_routes.ROUTES, *workflow_routes.ROUTES, *flow_routes.ROUTES, *flow_versions.ROUTES, *event_routes.ROUTES,
                        *page.ROUTES, *docs.routes(), *(metrics.ROUTES if settings.metrics else []),
                        openai_chat.router(settings), mcp.route(), mounts.agui_route(settings),
                        *mounts.a2a_routes(rounds, auth, "1.0.0")],
        middleware=[metrics.http_metrics().middleware] if settings.metrics else [],
        request_class=StrictRequest,
        compression_config=CompressionConfig(backend="brotli", brotli_gzip_fallback=True, minimum_size=COMPRESS_ABOVE,
                                             brotli_quality=4, gzip_compress_level=6, exclude=UNCOMPRESSED),
        cors_config=cors_config(settings),
        on_startup=[startup],
        on_shutdown=[engine.close, *([tools.close] if tools is not None else []), *([] if keep_workers else [engine.rt.runner.close]), *([tracing.shutdown] if settings.tracing else [])],
        lifespan=[mcp.running],
        exception_handlers=EXCEPTION_HANDLERS,
        request_max_body_size=settings.max_upload_bytes + MULTIPART_OVERHEAD,
        openapi_config=docs.openapi_config(),
        # Litestar's default logging config would replace the root logger's handler at start-up
        # with its own text format, so LOG_FORMAT=json came out as plain text: logging is ours.
        logging_config=None,
        debug=False,
    )
    app.state.settings = settings
    app.state.runtime = engine.rt
    app.state.engine = engine
    app.state.readers_warm = None  # the extraction workers' warm-up, once started
    app.state.readers_since = 0.0
    app.state.database_check = DatabaseCheck(engine.rt.db)
    app.state.auth = auth
    app.state.workflows = rounds.workflows
    app.state.files = rounds.files
    app.state.openai_chat = openai_chat.ChatAdapter(rounds)
    app.state.ag_ui = rounds
    return app
