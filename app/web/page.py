"""The chat page: `GET /` and its static files, shipped in the package (no CDN, no build step)."""

from __future__ import annotations

from pathlib import Path

from litestar import Response, get
from litestar.datastructures import CacheControlHeader
from litestar.static_files import create_static_files_router
from litestar.types import ControllerRouterHandler

STATIC = Path(__file__).parent / "static"
INDEX = (STATIC / "index.html").read_bytes()  # a few KB, read once rather than on the event loop

# The page runs only its own scripts and styles and talks only to this server: even a text that
# slipped past the renderer as HTML could not run or load anything.
SECURITY = {
    "Content-Security-Policy": "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data: blob:; "
                               "connect-src 'self'; object-src 'none'; base-uri 'none'; frame-ancestors 'none'",
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
    "Cache-Control": "no-cache",
}


@get("/", include_in_schema=False, media_type="text/html")
async def chat_page() -> Response[bytes]:
    """The chat page."""
    return Response(content=INDEX, media_type="text/html",  # litestar adds the charset
                    headers=SECURITY)


ROUTES: list[ControllerRouterHandler] = [
    chat_page,
    create_static_files_router(path="/static", directories=[STATIC], cache_control=CacheControlHeader(no_cache=True)),
]
