"""ASGI wrappers at the outer edge: HEAD wherever GET is, and `nosniff` on every answer."""

from __future__ import annotations

from typing import Any, Awaitable, Callable

Scope = dict[str, Any]
Message = dict[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]

NOSNIFF = (b"x-content-type-options", b"nosniff")


async def serve(app: ASGIApp, scope: Scope, receive: Receive, send: Send) -> None:
    """Run `app`: a HEAD is answered as its GET without the body; every answer says `nosniff`."""
    if scope["type"] != "http":
        await app(scope, receive, send)
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
