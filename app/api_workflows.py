"""Workflow routes: start, stop, delete, read, status and polling by id cursor."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from typing import Annotated

import msgspec
from litestar import Request, Response, delete, get, post
from litestar.openapi.datastructures import ResponseSpec
from litestar.openapi.spec import OpenAPIType, Operation, Schema
from litestar.openapi.spec import Parameter as OpenAPIParameter
from litestar.params import HeaderParameter, JSONBody, Parameter, QueryParameter
from litestar.status_codes import HTTP_200_OK, HTTP_304_NOT_MODIFIED

from app.errors import NotFoundError
from app.http import errors
from app.schemas import (
    Deleted,
    LogPage,
    MessagePage,
    StartAnswer,
    StartRequest,
    Workflow,
    WorkflowList,
    WorkflowStatusView,
)
from app.service import MAX_ID, MAX_LIMIT, decode_cursor, encode_cursor, page_query
from app.views import log_view, message_view, status_view, summary_view, workflow_view

Id = Annotated[int, Parameter(ge=1, le=MAX_ID)]
WorkflowId = Annotated[str, Parameter(max_length=64)]


@dataclass
class PollOperation(Operation):
    """The polling routes parse their query by hand (the hot path); the schema still documents it."""

    def __post_init__(self) -> None:
        self.parameters = [*(self.parameters or []), *POLL_PARAMETERS]


POLL_PARAMETERS = [
    OpenAPIParameter(name="id", param_in="query", required=False,
                     description="The last id you received; items after it are returned.",
                     schema=Schema(type=OpenAPIType.INTEGER, minimum=0, maximum=MAX_ID)),
    OpenAPIParameter(name="limit", param_in="query", required=False,
                     description=f"How many items at most (default 100, at most {MAX_LIMIT}).",
                     schema=Schema(type=OpenAPIType.INTEGER, minimum=1, maximum=MAX_LIMIT)),
    OpenAPIParameter(name="includeData", param_in="query", required=False,
                     description="true: each document carries its file's bytes as base64 in `data`.",
                     schema=Schema(type=OpenAPIType.BOOLEAN)),
]


def etag_matches(header: str | None, etag: str) -> bool:
    """RFC 9110 If-None-Match: `*` matches any current representation; tags compare weakly."""
    if not header:
        return False
    tags = [t.strip() for t in header.split(",")]
    return "*" in tags or etag in (t.removeprefix("W/") for t in tags)


def _deps(request: Request):
    state = request.app.state
    return state.auth.owner(request), state.workflows


@post("/api/workflows/start", status_code=HTTP_200_OK, responses=errors(404, 409, 422, 503),
      summary="Start a workflow, or its next round with ?id=")
async def start(request: Request, data: JSONBody[StartRequest],
                workflow_id: Annotated[str | None, QueryParameter(name="id", max_length=64, required=False)] = None,
                idempotency_key: Annotated[str | None, HeaderParameter(name="Idempotency-Key", max_length=200,
                                                                       required=False)] = None) -> StartAnswer:
    owner, workflows = _deps(request)
    data = await request.data_as(StartRequest)  # strictly: "1" is not a file id
    answer = await workflows.start(owner, workflow_id, data, idempotency_key)
    return msgspec.convert(answer, StartAnswer, from_attributes=False)


@post("/api/workflows/{workflow_id:str}/stop", status_code=HTTP_200_OK, responses=errors(404, 409),
      summary="Stop the running round at once")
async def stop(request: Request, workflow_id: WorkflowId) -> WorkflowStatusView:
    owner, workflows = _deps(request)
    return await workflows.stop(owner, workflow_id)


@delete("/api/workflows/{workflow_id:str}", status_code=HTTP_200_OK, responses=errors(404),
        summary="Delete a workflow with its messages, logs and the files only it used")
async def delete_workflow(request: Request, workflow_id: WorkflowId) -> Deleted:
    owner, workflows = _deps(request)
    await workflows.delete(owner, workflow_id)
    return Deleted(deleted="workflow", workflow_id=workflow_id, message_id=None, file_id=None)


@get("/api/workflows", responses=errors(), summary="The caller's workflows, newest activity first, a page at a time",
     operation_id="listWorkflows", tags=["workflows"])
async def list_workflows(
    request: Request,
    limit: Annotated[int, QueryParameter(ge=1, le=MAX_LIMIT, description="How many at most (default 100).")] = 100,
    cursor: Annotated[str | None, QueryParameter(max_length=200, required=False,
                                                 description="The `cursor` of the page before.")] = None,
) -> WorkflowList:
    owner, workflows = _deps(request)
    after = decode_cursor(cursor) if cursor else None
    rows = await workflows.repo.workflows.workflows(owner, limit + 1, after)
    more = len(rows) > limit
    rows = rows[:limit]
    return WorkflowList(items=[summary_view(r) for r in rows], has_more=more,
                        cursor=encode_cursor(rows[-1].last_activity, rows[-1].id) if more else None)


@get("/api/workflows/{workflow_id:str}", responses=errors(404), summary="The whole workflow")
async def get_workflow(request: Request, workflow_id: WorkflowId,
                       include_data: Annotated[bool, QueryParameter(name="includeData")] = False) -> Workflow:
    owner, workflows = _deps(request)
    row = await workflows.owned(owner, workflow_id)
    repo = workflows.repo
    rows = await repo.messages.messages_of(workflow_id)
    files = await repo.files.files_by_id(sorted({d.file_id for _, docs in rows for d in docs}))
    messages = [message_view(m, docs, files, workflows.blobs(include_data)) for m, docs in rows]
    logs = [log_view(entry, row.mandate_id, row.user_id) for entry in await repo.messages.logs_of(workflow_id)]
    return workflow_view(row, messages, logs)


@get("/api/workflows/{workflow_id:str}/status", summary="Status, with an ETag for conditional polling",
     responses=errors(404) | {304: ResponseSpec(data_container=None, description="Unchanged since the ETag sent "
                                                "in If-None-Match; no body.", generate_examples=False)})
async def get_status(request: Request, workflow_id: WorkflowId) -> Response[WorkflowStatusView]:
    owner, workflows = _deps(request)
    view = status_view(await workflows.owned(owner, workflow_id))
    body = msgspec.json.encode(view)
    etag = '"' + hashlib.sha256(body).hexdigest()[:32] + '"'
    if etag_matches(request.headers.get("if-none-match"), etag):
        return Response(content=b"", status_code=HTTP_304_NOT_MODIFIED, headers={"ETag": etag})
    return Response(content=view, headers={"ETag": etag, "Cache-Control": "no-cache"})


@get("/api/workflows/{workflow_id:str}/messages", responses=errors(404), summary="Messages after a cursor",
     operation_class=PollOperation)
async def get_messages(request: Request, workflow_id: WorkflowId) -> Response[MessagePage]:
    return await _poll(request, workflow_id, "messages")


@get("/api/workflows/{workflow_id:str}/logs", responses=errors(404), summary="Log entries after a cursor",
     operation_class=PollOperation)
async def get_logs(request: Request, workflow_id: WorkflowId) -> Response[LogPage]:
    return await _poll(request, workflow_id, "logs")


async def _poll(request: Request, workflow_id: str, kind: str) -> Response:
    owner, workflows = _deps(request)
    page = await workflows.page(owner, workflow_id, kind, *page_query(request.query_params))
    return Response(content=page, media_type="application/json")


@delete("/api/workflows/{workflow_id:str}/messages/{message_id:int}", status_code=HTTP_200_OK,
        responses=errors(404), summary="Delete a message (its id stays valid as a cursor)")
async def delete_message(request: Request, workflow_id: WorkflowId, message_id: Id) -> Deleted:
    owner, workflows = _deps(request)
    await workflows.owned(owner, workflow_id)
    if not await workflows.repo.messages.delete_message(workflow_id, message_id):
        raise NotFoundError(f"Workflow {workflow_id!r} has no message {message_id}.", code="message_not_found")
    return Deleted(deleted="message", workflow_id=workflow_id, message_id=message_id, file_id=None)


@delete("/api/workflows/{workflow_id:str}/messages/{message_id:int}/files/{file_id:int}", status_code=HTTP_200_OK,
        responses=errors(404), summary="Remove a file from a message")
async def remove_file(request: Request, workflow_id: WorkflowId, message_id: Id, file_id: Id) -> Deleted:
    owner, workflows = _deps(request)
    await workflows.owned(owner, workflow_id)
    if not await workflows.repo.messages.remove_document(workflow_id, message_id, file_id):
        raise NotFoundError(f"Message {message_id} of workflow {workflow_id!r} has no file {file_id}.",
                            code="document_not_found")
    return Deleted(deleted="document", workflow_id=workflow_id, message_id=message_id, file_id=file_id)


ROUTES = [start, stop, delete_workflow, list_workflows, get_workflow, get_status, get_messages, get_logs,
          delete_message, remove_file]
