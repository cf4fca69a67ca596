"""OpenAI-compatible chat: `GET /v1/models` and `POST /v1/chat/completions` over Foreman's rounds.

A conversation is a workflow. Chat apps (Open WebUI, LibreChat) send the whole history every
turn, so the workflow is found from the caller and the history's earlier user messages: the
caller's workflow whose user messages (its rounds' prompts, and the answers to its waits) are
exactly those continues (a bare yes or no to a wait leaves no message), anything else starts a
new one. `X-Foreman-Workflow` (or `metadata.foreman_workflow_id`) names it outright. Only the last
user message's files are uploaded; earlier turns' files are already the workflow's documents.
"""

from __future__ import annotations

import asyncio
import hashlib
import logging
import time
import uuid
from collections import OrderedDict
from collections.abc import AsyncGenerator
from typing import Annotated, Any

import msgspec
from litestar import Request, Response, Router, get, post
from litestar.exceptions import HTTPException, InternalServerException
from litestar.params import PathParameter
from litestar.response import Stream

from app.errors import (
    CLIENT_CLOSED_REQUEST,
    CLIENT_GONE,
    ApplicationError,
    BadRequestError,
    DatabaseUnavailableError,
    NotFoundError,
    PayloadTooLargeError,
)
from app.protocols import openai_flows
from app.protocols.chat_request import ChatRequest, Turn, read_turn
from app.protocols.chat_text import ChatText
from app.protocols.chat_waits import continues, review_of, start_or_answer, wait_text
from app.protocols.mounts import max_body
from app.protocols.rounds import Closed, Ended, Piece, Round, Rounds, Text, Waiting
from app.rounds.live import event_data
from app.services.workflows import WorkflowService
from app.store.connections import unavailable
from app.store.records import Owner

log = logging.getLogger("foreman.openai_chat")
AnyRequest = Request[Any, Any, Any]  # the routes here read only the body, headers and app state

MODEL = "foreman"
WORKFLOW_HEADER = "X-Foreman-Workflow"
REMEMBERED = 10_000  # conversations whose workflow this process remembers (the rest are looked up)
SCANNED = 100  # the caller's newest workflows a lookup compares with the history
_TYPES = {401: "authentication_error", 403: "permission_error", 404: "invalid_request_error",
          429: "rate_limit_error"}


def error_body(status: int, message: str, code: str) -> dict[str, Any]:
    """The error OpenAI's clients parse: {"error": {message, type, param, code}}."""
    kind = _TYPES.get(status, "invalid_request_error" if status < 500 else "server_error")
    return {"error": {"message": message, "type": kind, "param": None, "code": code}}


def openai_error(status: int, message: str, code: str) -> Response[Any]:
    return Response(content=error_body(status, message, code), status_code=status, media_type="application/json")


def _on_application_error(_: AnyRequest, exc: ApplicationError) -> Response[Any]:
    return openai_error(exc.status_code, exc.detail, exc.code)


def _on_http_exception(request: AnyRequest, exc: HTTPException) -> Response[Any]:
    if isinstance(exc, InternalServerException) and exc.detail == CLIENT_GONE:  # as app.web.http.client_gone
        log.info("The client closed the connection before its request was read whole: %s %s", request.method,
                 request.url.path)
        return openai_error(CLIENT_CLOSED_REQUEST, "The request ended before its body arrived.",
                            "client_closed_request")
    if exc.status_code >= 500:
        return _on_unexpected(request, exc)
    return openai_error(exc.status_code, exc.detail or "The request could not be handled.", "bad_request")


def _on_unexpected(request: AnyRequest, exc: Exception) -> Response[Any]:
    if unavailable(exc):  # not a defect: the database is down or busy; the same request may be sent again
        error = DatabaseUnavailableError("The database cannot take this request now; try again in "
                                         f"{DatabaseUnavailableError.retry_after_seconds} seconds.")
        response = openai_error(error.status_code, error.detail, error.code)
        response.headers["Retry-After"] = str(error.retry_after_seconds)
        return response
    log.exception("Unhandled error on %s %s", request.method, request.url.path, exc_info=exc)
    return openai_error(500, "The server could not complete this request; it has been logged. Try again.",
                        "internal_error")


class Conversations:
    """Which workflow a chat history continues, for one caller."""

    def __init__(self, rounds: Rounds) -> None:
        self.rounds = rounds
        self._known: OrderedDict[bytes, str] = OrderedDict()

    @staticmethod
    def key(owner: Owner, prompts: list[str]) -> bytes:
        return hashlib.sha256(msgspec.json.encode([owner.mandate_id, owner.user_id, prompts])).digest()

    def remember(self, owner: Owner, prompts: list[str], workflow_id: str) -> None:
        self._known[self.key(owner, prompts)] = workflow_id
        self._known.move_to_end(self.key(owner, prompts))
        while len(self._known) > REMEMBERED:
            self._known.popitem(last=False)

    async def find(self, owner: Owner, history: list[str]) -> str | None:
        """The caller's workflow whose rounds' prompts are `history`, or None (a new conversation)."""
        if not history:
            return None
        known = self._known.get(self.key(owner, history))
        if known is not None:
            return known
        workflows: WorkflowService = self.rounds.workflows
        summaries, _ = await workflows.workflows(owner, SCANNED, None)  # another process may have begun it
        for summary in summaries:
            if summary.current_round > len(history) or (history[0] and summary.name != history[0][:80]):
                continue  # each round began with a prompt of the history (other turns answered waits)
            whole = await workflows.whole(owner, summary.id)
            if continues([m.content for m in whole.messages if m.role == "user"], history):
                self.remember(owner, history, summary.id)
                return summary.id
        return None


async def models(request: AnyRequest) -> dict[str, Any]:
    owner = request.app.state.auth.owner(request)
    flows = await openai_flows.models(request.app.state.openai_chat.rounds, owner)
    return {"object": "list", "data": [_model(), *flows]}


async def flow_model(request: AnyRequest, slug: Annotated[str, PathParameter(max_length=200)]) -> dict[str, Any]:
    owner = request.app.state.auth.owner(request)
    return openai_flows.model_of(await openai_flows.flow_of(request.app.state.openai_chat.rounds, owner,
                                                            openai_flows.PREFIX + slug))


async def model(request: AnyRequest, model_id: Annotated[str, PathParameter(max_length=200)]) -> dict[str, Any]:
    request.app.state.auth.owner(request)
    _check_model(model_id)
    return _model()


def _model() -> dict[str, Any]:
    return {"id": MODEL, "object": "model", "created": 0, "owned_by": "foreman"}


def _check_model(name: str) -> None:
    if name != MODEL:
        raise NotFoundError(f"The model {name[:80]!r} does not exist; this server offers {MODEL!r}.",
                            code="model_not_found")


async def chat_completions(request: AnyRequest) -> Response[Any] | Stream:
    state = request.app.state
    owner = state.auth.owner(request)
    body, turn = await _read(request)
    if body.model.startswith(openai_flows.PREFIX):
        return await _flow_completion(request, owner, body, turn)
    _check_model(body.model)
    chat: ChatAdapter = state.openai_chat
    named = request.headers.get(WORKFLOW_HEADER) or (body.metadata or {}).get("foreman_workflow_id")
    workflow_id = named or await chat.conversations.find(owner, turn.history)
    file_ids = turn.file_ids + await chat.rounds.upload(owner, turn.uploads)
    run = await start_or_answer(chat.rounds, owner, workflow_id, turn.prompt, file_ids,
                                str(request.base_url).rstrip("/"), review_of(body.metadata))
    chat.conversations.remember(owner, [*turn.history, turn.prompt], run.workflow_id)
    headers = {WORKFLOW_HEADER: run.workflow_id}
    completion_id = f"chatcmpl-{uuid.uuid4().hex}"
    if body.stream:
        usage = bool(body.stream_options and body.stream_options.include_usage)
        return Stream(chat.chunks(run, completion_id, usage), media_type="text/event-stream",
                      headers={**headers, "Cache-Control": "no-cache", "X-Accel-Buffering": "no"})
    return Response(content=await chat.whole(run, completion_id, request), headers=headers,
                    media_type="application/json")


async def _flow_completion(request: AnyRequest, owner: Owner, body: ChatRequest,
                           turn: Turn) -> Response[Any] | Stream:
    """A completion of a `flow/<name>` model: the flow's run (`app.protocols.openai_flows`)."""
    chat: ChatAdapter = request.app.state.openai_chat
    flow = await openai_flows.flow_of(chat.rounds, owner, body.model)
    if turn.uploads or turn.file_ids:
        raise BadRequestError("A flow model takes text; give a flow its files as file ids in metadata.",
                              code="unsupported_content_part")
    named = request.headers.get(WORKFLOW_HEADER) or (body.metadata or {}).get("foreman_workflow_id")
    # A first turn is a new run; a later one may answer the run's human node.
    workflow_id = named or (await chat.conversations.find(owner, [body.model, *turn.history]) if turn.history
                            else None)
    run = await openai_flows.start_or_answer(chat.rounds, owner, flow, workflow_id, turn.prompt, body.metadata)
    chat.conversations.remember(owner, [body.model, *turn.history, turn.prompt], run.workflow_id)
    headers = {WORKFLOW_HEADER: run.workflow_id}
    completion_id = f"chatcmpl-{uuid.uuid4().hex}"
    if body.stream:
        usage = bool(body.stream_options and body.stream_options.include_usage)
        return Stream(openai_flows.chunks(chat.rounds, run, body.model, completion_id, usage),
                      media_type="text/event-stream", headers={**headers, "Cache-Control": "no-cache"})
    text, end = await openai_flows.answer(chat.rounds, run)
    return Response(content=openai_flows.completion(body.model, completion_id, text, end), headers=headers,
                    media_type="application/json")


async def _read(request: AnyRequest) -> tuple[ChatRequest, Turn]:
    settings = request.app.state.settings
    limit = settings.max_upload_bytes * 4 // 3 + settings.max_json_bytes  # files arrive as base64 in JSON
    if int(request.headers.get("content-length") or 0) > limit:
        raise PayloadTooLargeError(f"The request is larger than {limit} bytes.", code="body_too_large")
    return await read_turn(await request.body())


class ChatAdapter:
    """The rounds of a chat completion, answered whole or as chunks."""

    def __init__(self, rounds: Rounds) -> None:
        self.rounds = rounds
        self.conversations = Conversations(rounds)

    async def whole(self, run: Round, completion_id: str, request: AnyRequest) -> dict[str, Any]:
        """The round's text as one completion, once it ended or waits for the user; a client that leaves
        stops it."""
        texts: list[str] = []

        async def collect() -> Ended | Waiting | None:
            async for part in self.rounds.follow(run, waits=True):
                if isinstance(part, Text):
                    texts.append(part.text)
                elif isinstance(part, Ended | Waiting):
                    return part
            return None

        work = asyncio.ensure_future(collect())
        gone = asyncio.ensure_future(_disconnected(request))
        try:
            await asyncio.wait([work, gone], return_when=asyncio.FIRST_COMPLETED)
        finally:
            gone.cancel()
        if not work.done():
            work.cancel()
            self._left(run)
            return {}
        end = work.result()
        content = "\n\n".join([*texts, *_ending(end)])
        return {"id": completion_id, "object": "chat.completion", "created": int(time.time()), "model": MODEL,
                "choices": [{"index": 0, "message": {"role": "assistant", "content": content},
                             "finish_reason": "stop", "logprobs": None}],
                "usage": _usage(end)}

    async def chunks(self, run: Round, completion_id: str, include_usage: bool) -> AsyncGenerator[bytes, None]:
        """The round as chat.completion.chunk events, text as it is written, until it ends or waits."""
        created = int(time.time())
        ended: Ended | Waiting | None = None
        base = {"id": completion_id, "object": "chat.completion.chunk", "created": created, "model": MODEL}
        extra = {"usage": None} if include_usage else {}

        def chunk(delta: dict[str, Any], finish: str | None = None) -> bytes:
            body = base | {"choices": [{"index": 0, "delta": delta, "finish_reason": finish, "logprobs": None}]}
            return b"data: " + event_data(body | extra) + b"\n\n"

        try:
            yield chunk({"role": "assistant", "content": ""})
            text = ChatText()
            async for part in self.rounds.follow(run, heartbeats=True, live=True, waits=True):
                if part is None:
                    yield b": keepalive\n\n"
                elif isinstance(part, Text | Piece | Closed):
                    if out := text.take(part):
                        yield chunk({"content": out})
                elif isinstance(part, Ended | Waiting):
                    ended = part
                    if out := text.rest(_ending(part)):
                        yield chunk({"content": out})
            yield chunk({}, "stop")
            if include_usage:
                yield b"data: " + event_data(base | {"choices": [], "usage": _usage(ended)}) + b"\n\n"
            yield b"data: [DONE]\n\n"
        except ApplicationError as exc:  # the answer has begun: the error goes in the stream, as OpenAI's does
            yield b"data: " + event_data(error_body(exc.status_code, exc.detail, exc.code)) + b"\n\n"
        finally:
            if ended is None:
                self._left(run)

    def _left(self, run: Round) -> None:
        self.rounds.left(run, "chat")


def _ending(end: Ended | Waiting | None) -> list[str]:
    if isinstance(end, Waiting):  # the completion ends; the conversation's next turn answers the wait
        return [wait_text(end.waiting_for)]
    if end is None:
        return ["_The conversation was deleted before the round ended._"]
    if end.status == "failed":
        return [f"**The round failed:** {end.error or 'see the workflow log.'}"]
    if end.status == "stopped":
        return ["_The round was stopped._"]
    return []


def _usage(end: Ended | Waiting | None) -> dict[str, int]:
    # Foreman keeps a round's total tokens, not their split: they are reported as completion tokens.
    tokens = end.tokens if end else 0
    return {"prompt_tokens": 0, "completion_tokens": tokens, "total_tokens": tokens}


async def _disconnected(request: AnyRequest) -> None:
    """Returns when the client has closed the connection (the body was read before)."""
    while (await request.receive())["type"] != "http.disconnect":
        pass


def router(settings: Any) -> Router:
    """The /v1 routes, answering errors in OpenAI's shape."""
    handlers = [get("/models", include_in_schema=False)(models),
                get("/models/{model_id:str}", include_in_schema=False)(model),
                get("/models/flow/{slug:str}", include_in_schema=False)(flow_model),
                post("/chat/completions", include_in_schema=False, status_code=200,
                     request_max_body_size=max_body(settings))(chat_completions)]
    return Router(path="/v1", route_handlers=handlers, exception_handlers={
        ApplicationError: _on_application_error, HTTPException: _on_http_exception, Exception: _on_unexpected})
