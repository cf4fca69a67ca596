"""The OpenAPI schema as clients read it, and the docs page at /docs served from package files."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from litestar import Request, Response, Router, get
from litestar._openapi.plugin import handle_schema_path_not_found
from litestar.openapi import OpenAPIConfig
from litestar.openapi.plugins import JsonRenderPlugin
from litestar.routes import BaseRoute
from litestar.static_files import create_static_files_router
from litestar.types import ControllerRouterHandler

from app.web.openapi import polish

DOCS_PAGE = b"""<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Foreman API</title>
<link rel="stylesheet" href="/docs/static/swagger-ui.css"></head>
<body><div id="docs"></div>
<script src="/docs/static/swagger-ui-bundle.js"></script>
<script src="/docs/static/docs.js"></script>
</body></html>
"""
DOCS_SCRIPT = b"""window.onload = function () {
  window.ui = SwaggerUIBundle({url: "/schema/openapi.json", dom_id: "#docs", deepLinking: true});
};
"""
# Scripts only from our origin: the page works without the internet and runs nothing injected.
DOCS_CSP = ("default-src 'self'; img-src 'self' data:; style-src 'self' 'unsafe-inline'; object-src 'none'; "
            "frame-ancestors 'none'")


def _assets() -> Path:
    import swagger_ui  # ships Swagger UI's built files (Apache-2.0, its LICENSE beside them)

    return Path(swagger_ui.__file__).parent / "static"


class SchemaRouter(Router):
    """Litestar's schema router without its HTML 404 page: unknown /schema paths get the JSON 404."""

    def register(self, value: ControllerRouterHandler) -> list[BaseRoute]:
        if getattr(value, "fn", None) is handle_schema_path_not_found:
            return []
        return super().register(value)


class PolishedJson(JsonRenderPlugin):
    """The generated schema, completed where Litestar cannot express the contract (see `app.web.openapi`)."""

    def render(self, request: Request[Any, Any, Any], openapi_schema: dict[str, Any]) -> bytes:
        state = request.app.state
        if getattr(state, "openapi_json", None) is None:  # the schema is built once per app
            state.openapi_json = self.render_json(request, polish(openapi_schema, state.settings.max_prompt_chars))
        rendered: bytes = state.openapi_json
        return rendered


def openapi_config() -> OpenAPIConfig:
    return OpenAPIConfig(title="Foreman", version="1.0.0", path="/schema", render_plugins=[PolishedJson()],
                         openapi_router=SchemaRouter("/schema", route_handlers=[], include_in_schema=False))


@get("/docs", include_in_schema=False, media_type="text/html", sync_to_thread=False)
def docs_page() -> Response[bytes]:
    return Response(DOCS_PAGE, media_type="text/html", headers={"Content-Security-Policy": DOCS_CSP})


@get("/docs/static/docs.js", include_in_schema=False, media_type="text/javascript", sync_to_thread=False)
def docs_script() -> bytes:
    return DOCS_SCRIPT


def routes() -> list[ControllerRouterHandler]:
    """The docs routes (a new static router per app: a router belongs to one app)."""
    return [docs_page, docs_script, create_static_files_router(path="/docs/static", directories=[_assets()],
                                                               include_in_schema=False, name="docs-static")]
