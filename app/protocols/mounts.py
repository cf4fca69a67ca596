"""The protocols' routes (MCP, A2A, AG-UI), whose SDKs are imported on a protocol's first request.

A replica that never speaks a protocol never imports its SDK: `mcp`, `a2a` and AG-UI's models were
1.0-1.3 s of a start's 3 s of imports, paid again by every replica, restart and takeover (issue 43).
The first request imports its protocol's module in a thread (the loop does no import's CPU) and
builds the SDK's app on the loop; requests arriving meanwhile wait for that one build. What each
route answers is its module's (`mcp_server`, `a2a_server`, `agui`); this module only defers them.
"""

from __future__ import annotations

import asyncio
import contextlib
import importlib
from collections.abc import AsyncIterator, Callable
from types import ModuleType
from typing import Any, Generic, TypeVar

from litestar import Request, asgi, get, post
from litestar.handlers import HTTPRouteHandler
from litestar.response import Stream

from app.config import Settings
from app.protocols.rounds import Rounds

T = TypeVar("T")


class OnFirstUse(Generic[T]):
    """`build(module)` once, on first use: `module` is imported in a thread, `build` runs on the loop
    (an SDK's objects may need the running loop); concurrent first uses share the one build."""

    def __init__(self, module: str, build: Callable[[ModuleType], T]) -> None:
        self.module = module
        self.build = build
        self.value: T | None = None
        self._lock: asyncio.Lock | None = None

    async def get(self) -> T:
        if self.value is None:
            self._lock = self._lock or asyncio.Lock()
            async with self._lock:
                if self.value is None:
                    self.value = self.build(await asyncio.to_thread(importlib.import_module, self.module))
        return self.value


class MCP:
    """The `/mcp` route and the lifespan of the SDK's session manager, started with the first request."""

    def __init__(self, rounds: Rounds, auth: Any, local: bool, max_body: int) -> None:
        self.endpoint = OnFirstUse("app.protocols.mcp_server", self._build)
        self.rounds, self.auth, self.local, self.max_body = rounds, auth, local, max_body
        self._stop = asyncio.Event()
        self._serving: asyncio.Task[None] | None = None

    def _build(self, module: ModuleType) -> Any:
        server = module.ForemanMCP(self.rounds, self.auth)
        endpoint = module.mount_endpoint(server, self.local, self.max_body)
        started = asyncio.Event()

        async def serve() -> None:
            async with server.session_manager.run():
                started.set()
                await self._stop.wait()

        self._serving = asyncio.create_task(serve(), name="foreman-mcp-sessions")

        async def ready(scope: Any, receive: Any, send: Any) -> None:
            if not started.is_set():
                await started.wait()
            await endpoint(scope, receive, send)

        return ready

    def route(self) -> Any:
        async def endpoint(scope: Any, receive: Any, send: Any) -> None:
            await (await self.endpoint.get())(scope, receive, send)

        return asgi("/mcp", is_mount=True, copy_scope=True, include_in_schema=False)(endpoint)

    @contextlib.asynccontextmanager
    async def running(self, _: Any = None) -> AsyncIterator[None]:
        """For the application's lifespan: the session manager, if a request started it, ends with it."""
        try:
            yield
        finally:
            self._stop.set()
            if self._serving is not None:
                await self._serving


def a2a_routes(rounds: Rounds, auth: Any, version: str) -> list[Any]:
    """`GET /.well-known/agent-card.json` and the `/a2a` mount (`app.protocols.a2a_server`)."""
    built = OnFirstUse("app.protocols.a2a_server", lambda module: (module, module.mount_endpoint(
        module.ForemanA2A(rounds, auth))))

    @get("/.well-known/agent-card.json", include_in_schema=False)
    async def agent_card(request: Request[Any, Any, Any]) -> dict[str, Any]:
        module, _ = await built.get()
        card: dict[str, Any] = await module.card(rounds, auth, request, str(request.base_url).rstrip("/"), version)
        return card

    async def endpoint(scope: Any, receive: Any, send: Any) -> None:
        _, inner = await built.get()
        await inner(scope, receive, send)

    return [agent_card, asgi("/a2a", is_mount=True, copy_scope=True, include_in_schema=False)(endpoint)]


def max_body(settings: Settings) -> int:
    """A protocol request's largest body: files arrive as base64 in its JSON, a third larger than the
    upload limit, plus the JSON."""
    return settings.max_upload_bytes * 4 // 3 + settings.max_json_bytes


def agui_route(settings: Settings) -> HTTPRouteHandler:
    """`POST /api/ag-ui` (`app.protocols.agui.ag_ui`), taking bodies as large as the files it may carry."""
    built = OnFirstUse("app.protocols.agui", lambda module: module)

    async def ag_ui(request: Request[Any, Any, Any]) -> Stream:
        answer: Stream = await (await built.get()).ag_ui(request)
        return answer

    return post("/api/ag-ui", status_code=200, include_in_schema=False, request_max_body_size=max_body(settings))(ag_ui)
