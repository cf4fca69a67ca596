"""The live route: `GET /api/workflows/{id}/events`, a server-sent event stream beside polling."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncGenerator
from typing import Annotated, Any

from litestar import get
from litestar.openapi.datastructures import ResponseSpec
from litestar.params import HeaderParameter, QueryParameter
from litestar.response import Stream
from litestar.response.base import ASGIResponse
from litestar.types import Receive, Scope, Send

from app.config import Settings
from app.contract.schemas import MAX_ID
from app.rounds.live import EventStream, Position, parse_event_id
from app.web.http import StrictRequest, errors
from app.web.workflows import WorkflowId, owner_and_workflows

log = logging.getLogger("foreman.events")

DESCRIPTION = """\
Every message and log of the workflow after the cursors, then live ones as they are written,
as `text/event-stream`:

- `event: message`, `data:` the Message object exactly as `GET .../messages` returns it;
- `event: log`, `data:` the log entry as `GET .../logs` returns it;
- `event: status`, `data:` the object of `GET .../status`: sent first, then whenever the
  status, round or progress changes;
- `event: update`, `data:` a Message sent before, as it is now: right after the log that
  says a file was read (its `updatedMessageId` names the message), with that file's
  extracted contents filled into the round's user message;
- `event: delta`, `data:` `{"messageId", "offset", "text"}`: text of an assistant message
  being written (a draft), as the model writes it; `offset` counts the characters of that
  draft already sent. `messageId` is the draft's id (a string): the message it becomes names
  it in `metadata.draftId`, and its `content` is exactly that draft's deltas joined (the
  last delta comes right before the message). The project manager's answer streams before
  its plan is complete; the offline model's texts come as one delta each;
- `event: discard`, `data:` `{"messageId"}`: a draft that will not become a message (its call
  failed, was retried or stopped): drop its text;
- a comment line (`: keepalive`) when nothing was sent for `EVENT_HEARTBEAT_SECONDS` (15 s).

Each `data:` is one line of JSON, with U+0085, U+2028 and U+2029 written as `\\u` escapes, so
that readers which split lines as Python's `str.splitlines` does read every event whole.

Every event's `id:` is `<lastMessageId>-<lastLogId>`, followed by `~<draftId>:<offset>` for
each draft the client has part of; a client that reconnects with it in
`Last-Event-ID` (browsers' EventSource do so by themselves) receives every later item exactly
once, in order, with no gaps, as a poller does, and each draft still being written from the
offset it had (a draft it had none of from 0): every character once. Without it, `messageId` and `logId` are the
cursors (the ids of the last items you have; none: from the beginning). The stream ends when
the workflow is deleted; a client that does not read for `EVENT_SEND_TIMEOUT_SECONDS` is
disconnected and resumes by its last id."""


class _BoundedSend:
    """The streaming response, except that it gives up on a client that stops reading instead of
    waiting for it without end (the transport's buffer is the only queue)."""

    def __init__(self, response: ASGIResponse, content: Any, send_timeout: float) -> None:
        self.response = response
        self.content = content
        self.send_timeout = send_timeout

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        async def bounded(message: Any) -> None:
            async with asyncio.timeout(self.send_timeout):
                await send(message)

        try:
            await self.response(scope, receive, bounded)
        except* TimeoutError:
            log.info("An event stream client read nothing for %.0f s; disconnected.", self.send_timeout)
        finally:
            await self.content.aclose()  # the stream stops following the workflow now, not at collection


class EventStreamResponse(Stream):
    """`text/event-stream` with a bounded send."""

    def __init__(self, content: AsyncGenerator[bytes, None], *, send_timeout: float) -> None:
        super().__init__(content, media_type="text/event-stream", headers={
            "Cache-Control": "no-cache", "X-Accel-Buffering": "no"})
        self.content = content
        self.send_timeout = send_timeout

    def to_asgi_response(self, *args: Any, **kwargs: Any) -> ASGIResponse:
        response = super().to_asgi_response(*args, **kwargs)
        return _BoundedSend(response, self.content, self.send_timeout)  # type: ignore[return-value]


@get("/api/workflows/{workflow_id:str}/events", summary="Live events: messages, logs and status as they happen",
     description=DESCRIPTION, media_type="text/event-stream",
     responses=errors(404) | {200: ResponseSpec(data_container=str, media_type="text/event-stream",
                                                description="A stream of server-sent events (see above).",
                                                generate_examples=False)})
async def events(
    request: StrictRequest, workflow_id: WorkflowId,
    message_id: Annotated[int | None, QueryParameter(name="messageId", ge=0, le=MAX_ID, required=False,
                                                     description="The last message id you have.")] = None,
    log_id: Annotated[int | None, QueryParameter(name="logId", ge=0, le=MAX_ID, required=False,
                                                 description="The last log id you have.")] = None,
    last_event_id: Annotated[str | None, HeaderParameter(name="Last-Event-ID", max_length=1200, required=False,
                                                         description="The id of the last event you received; "
                                                                     "wins over messageId and logId.")] = None,
    include_data: Annotated[bool, QueryParameter(name="includeData", required=False,
                                                 description="true: documents carry their bytes.")] = False,
) -> EventStreamResponse:
    owner, workflows = owner_and_workflows(request)
    await workflows.owned(owner, workflow_id)
    position = parse_event_id(last_event_id) if last_event_id else Position(message_id or 0, log_id or 0)
    settings: Settings = request.app.state.settings
    runtime = workflows.rt
    listener = workflows.engine.listener
    stream = EventStream(workflows, owner, workflow_id, position, include_data,
                         settings.event_heartbeat_seconds,
                         listening=lambda: listener is None or listener.connected.is_set(),
                         drafts=runtime.journal.drafts)
    await stream.check_cursors()
    return EventStreamResponse(stream.run(runtime.changes), send_timeout=settings.event_send_timeout_seconds)


ROUTES = [events]
