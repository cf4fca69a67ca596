"""`create_app`: the Litestar application, wired from settings."""

from __future__ import annotations

import logging
import os

from litestar import Litestar, Request, get
from litestar.openapi import OpenAPIConfig
from litestar.openapi.plugins import JsonRenderPlugin

from agents.registry import Registry, build_registry
from app import api_events, api_files, api_workflows, page
from app.config import Settings, from_env
from app.engine import Runtime
from app.errors import NotReadyError
from app.http import EXCEPTION_HANDLERS, Authenticator, errors
from app.model import Model
from app.service import WorkflowService

log = logging.getLogger("foreman")

MULTIPART_OVERHEAD = 64 * 1024


def build_model(settings: Settings) -> Model:
    """The configured OpenAI-compatible endpoint, or the built-in offline model when there is none."""
    if settings.offline:
        from agents.offline.model import OfflineModel

        return OfflineModel()
    from app.llm import OpenAIModel

    model = OpenAIModel(
        base_url=settings.openai_base_url or "https://api.openai.com/v1", api_key=settings.openai_api_key or "none",
        model=settings.llm_model, agent_models=settings.agent_models, timeout=settings.llm_timeout_seconds,
        max_retries=settings.llm_max_retries, temperature=settings.llm_temperature,
        agent_temperatures=settings.agent_temperatures, log_io=settings.log_model_io,
    )
    if settings.llm_context_tokens:
        model.context_tokens = settings.llm_context_tokens  # agents size their prompts to it
    return model


@get("/health", summary="200 while the process is up")
async def health() -> dict[str, str]:
    return {"status": "ok"}


@get("/ready", summary="200 once the database and the workflow engine are ready", responses=errors(503))
async def ready(request: Request) -> dict[str, str]:
    if not request.app.state.runtime.ready:
        raise NotReadyError("The service is starting; try again in a moment.")
    return {"status": "ready"}


def create_app(settings: Settings | None = None, *, model: Model | None = None,
               registry: Registry | None = None) -> Litestar:
    """The application: reads the environment only when no settings are given."""
    settings = settings or from_env(os.environ)
    settings.check()
    model = model or build_model(settings)
    runtime = Runtime(settings, model, registry or build_registry())

    async def startup() -> None:
        await runtime.start()
        if settings.offline:
            log.warning("No OPENAI_API_KEY or OPENAI_BASE_URL set: the built-in offline model answers "
                        "(extractive, deterministic, no generative AI).")
        else:
            log.info("Model endpoint %s, model %s.", settings.openai_base_url or "OpenAI", settings.llm_model)
        from extractors.runner import ocr_available

        if not ocr_available():
            log.warning("tesseract is not installed: OCR is off; scanned pages and images yield no text.")

    app = Litestar(
        route_handlers=[health, ready, *api_files.ROUTES, *api_workflows.ROUTES, *api_events.ROUTES,
                        *page.ROUTES],
        on_startup=[startup],
        on_shutdown=[runtime.close],
        exception_handlers=EXCEPTION_HANDLERS,
        request_max_body_size=settings.max_upload_bytes + MULTIPART_OVERHEAD,
        openapi_config=OpenAPIConfig(title="Foreman", version="1.0.0", path="/schema",
                                     render_plugins=[JsonRenderPlugin()]),
        debug=False,
    )
    app.state.settings = settings
    app.state.runtime = runtime
    app.state.auth = Authenticator(settings)
    app.state.workflows = WorkflowService(runtime)
    return app
