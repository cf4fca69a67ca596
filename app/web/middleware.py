"""ASGI wrappers at the outer edge: HEAD wherever GET is, `nosniff` on every answer, and a CORS preflight
from an origin CORS_ORIGINS does not list refused with the API's JSON error (Litestar's is plain text)."""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable
from typing import Any

Scope = dict[str, Any]
Message = dict[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]

NOSNIFF = (b"x-content-type-options", b"nosniff")


def refused_origin(scope: Scope, cors: Any) -> str | None:
    """The origin of a CORS preflight that `cors` (Litestar's CORSConfig, or None) does not allow."""
    if cors is None or scope["method"] != "OPTIONS":
        return None
    headers = dict(scope.get("headers") or ())
    origin = headers.get(b"origin")
    if origin is None or b"access-control-request-method" not in headers:
        return None
    text = origin.decode("latin-1")
    return None if cors.is_origin_allowed(text) else text


async def refuse_preflight(origin: str, send: Send) -> None:
    body = json.dumps({"status_code": 400, "code": "cors_origin_not_allowed",
                       "detail": f"Browsers at {origin[:100]!r} may not call this API: the origin is not in "
                                 "CORS_ORIGINS."}).encode()
    await send({"type": "http.response.start", "status": 400,
                "headers": [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode()),
                            (b"vary", b"Origin"), NOSNIFF]})
    await send({"type": "http.response.body", "body": body, "more_body": False})


async def serve(app: ASGIApp, scope: Scope, receive: Receive, send: Send, cors: Any = None,
                allow: Callable[[str], str | None] = lambda template: None) -> None:
    """Run `app`: a HEAD is answered as its GET without the body; every answer says `nosniff`; a
    preflight `cors` refuses is answered here; an OPTIONS answer's `Allow` is `allow(path template)`,
    every method of the path (Litestar's names only the first handler registered on it)."""
    if scope["type"] != "http":
        await app(scope, receive, send)
        return
    if (origin := refused_origin(scope, cors)) is not None:
        await refuse_preflight(origin, send)
        return
    head = scope["method"] == "HEAD"
    if head:
        scope = {**scope, "method": "GET"}
    done = False

    async def answer(message: Message) -> None:
        nonlocal done
        if done:
            return  # a HEAD was answered with the headers; the rest of the GET's body is dropped
        if message["type"] == "http.response.start":
            headers = [h for h in message.get("headers", []) if h[0].lower() != NOSNIFF[0]]
            methods = allow(scope.get("path_template", "")) if scope["method"] == "OPTIONS" else None
            if methods is not None:
                headers = [h for h in headers if h[0].lower() != b"allow"] + [(b"allow", methods.encode())]
            message = {**message, "headers": [*headers, NOSNIFF]}
            await send(message)
            if head:
                done = True
                await send({"type": "http.response.body", "body": b"", "more_body": False})
            return
        await send(message)

    async def request() -> Message:
        if done:  # a streaming GET behind a HEAD learns that the client has what it wanted
            return {"type": "http.disconnect"}
        return await receive()

    await app(scope, request, answer)
