"""The streamed chat-completions POST: the SDK's own request, built once per client and reused.

The SDK's `post` builds every request anew: it copies its options, runs them through its auth
hooks, merges the auth, default and platform headers, parses and joins the URL and builds the
HTTP request, about a third of the CPU of a whole call (`bench/model_call.py`). For one client
all of that comes out the same on every call but for the body. So the SDK builds the request
once, with its own methods (`_prepare_options`, `_build_request`, `_prepare_request`), and each
call sends a copy that carries its own body, through the SDK's HTTP client; a refused request
becomes the SDK's own `APIStatusError`, and the answer's events are read by the SDK's SSE decoder.

The events are read to the end of the body (`events`), which comes right after `[DONE]`. The
SDK's `AsyncStream` stops at `[DONE]` instead: it then drains the rest of the body under an
anyio deadline, and leaves its three nested async generators suspended, each closed later by
a task the event loop starts for it; together about a tenth of a call's CPU.

The client's key, base URL and headers are set once, when it is made (`app.llm.client.OpenAIModel`).
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import Any

import openai
from openai._base_client import get_platform
from openai._models import FinalRequestOptions

PATH = "/chat/completions"


class CompletionsPost:
    """Sends encoded chat-completions bodies as the SDK's `post(..., stream=True)` would."""

    def __init__(self, client: openai.AsyncOpenAI, http: Any) -> None:
        self._client = client
        self._http = http  # the SDK's HTTP client (its `http_client`)
        self._template: Any = None  # the SDK's request, without a body
        self._building = asyncio.Lock()  # one build, however many calls come first

    async def __call__(self, payload: bytes) -> Any:
        """The streamed HTTP response to one request with the encoded body `payload`; raises the SDK's errors."""
        template = self._template if self._template is not None else await self._build()
        http = type(template)  # the SDK's request class (httpx's, or its fork's)
        request = http(template.method, template.url, headers=template.headers.copy(), content=payload,
                       extensions=template.extensions)
        response = await self._http.send(request, stream=True)
        if not response.is_success:
            await response.aread()
            raise self._client._make_status_error_from_response(response)
        return response

    def events(self, response: Any) -> AsyncIterator[Any]:
        """The server-sent events of `response`, as the SDK decodes them, up to the end of its body."""
        return self._client._make_sse_decoder().aiter_bytes(response.aiter_bytes())

    async def _build(self) -> Any:
        async with self._building:
            if self._template is None:
                options = await self._client._prepare_options(
                    FinalRequestOptions.construct(method="post", url=PATH, content=b""))
                if self._client._platform is None:  # read from files, as the SDK does: off the loop
                    self._client._platform = await asyncio.to_thread(get_platform)
                request = self._client._build_request(options)
                await self._client._prepare_request(request)
                del request.headers["Content-Length"]  # each call's body sets its own
                self._template = request
        return self._template
