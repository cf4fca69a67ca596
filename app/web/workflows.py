"""Workflow routes: start, stop, delete, read, status and polling by id cursor."""

from __future__ import annotations

import base64
import hashlib
import uuid
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Annotated, Any

import msgspec
from litestar import Response, delete, get, patch, post
from litestar.openapi.datastructures import ResponseSpec
from litestar.openapi.spec import OpenAPIType, Operation, Schema
from litestar.openapi.spec import Parameter as OpenAPIParameter
from litestar.params import HeaderParameter, JSONBody, Parameter, QueryParameter
from litestar.status_codes import HTTP_200_OK, HTTP_304_NOT_MODIFIED

from app.clock import aware
from app.contract.schemas import (
    MAX_ID,
    Deleted,
    LogPage,
    MessagePage,
    RenameRequest,
    ReviewRequest,
    StartAnswer,
    StartRequest,
    Workflow,
    WorkflowList,
    WorkflowStatusView,
    WorkflowSummary,
)
from app.contract.views import status_view
from app.errors import BadRequestError
from app.services.rename import rename
from app.services.workflows import WorkflowService
from app.store.records import Owner
from app.web.http import StrictRequest, errors

MAX_LIMIT = 500
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


def not_modified(etag: str) -> Response[Any]:
    """304 for a route whose 200 carries a body: this answer has none (HTTP allows none)."""
    return Response(content=b"", status_code=HTTP_304_NOT_MODIFIED, headers={"ETag": etag})


def encode_cursor(stamp: datetime, workflow_id: str) -> str:
    """An opaque cursor for the workflow list: where the page ended (its UTC time to the microsecond)."""
    utc = aware(stamp).astimezone(UTC)
    return base64.urlsafe_b64encode(f"{utc.isoformat(timespec='microseconds')}|{workflow_id}".encode()
                                    ).decode().rstrip("=")


def decode_cursor(cursor: str) -> tuple[datetime, str]:
    """The (activity, id) an `encode_cursor` value holds, or BadRequestError.

    Only what the server issues passes: a UTC time and a workflow id as `encode_cursor` writes them (a
    time without a zone compared with the stored ones was a 500 on PostgreSQL)."""
    try:
        raw = base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4)).decode()
        stamp, _, workflow_id = raw.partition("|")
        found = datetime.fromisoformat(stamp)
        if found.tzinfo is None or encode_cursor(found, str(uuid.UUID(workflow_id))) != cursor:
            raise ValueError(raw)
        return found, workflow_id
    except ValueError:  # binascii.Error and UnicodeDecodeError are ValueErrors
        raise BadRequestError("cursor is not one this server gave; pass the `cursor` of the page before, or none "
                              "to start from the newest.", code="bad_cursor") from None


def page_query(query: Any) -> tuple[int, int, bool]:
    """`id` (0 when absent), `limit` (100 when absent) and `includeData` from a poll's query string,
    or BadRequestError saying what is wrong. Parsed by hand: polling is the hot path."""
    after, limit, include = _int_param(query, "id", 0), _int_param(query, "limit", 1), flag(query, "includeData")
    if limit is not None and limit > MAX_LIMIT:
        raise BadRequestError(f"limit must be between 1 and {MAX_LIMIT}.", code="bad_limit")
    return after or 0, limit or 100, include


def flag(query: Any, name: str) -> bool:
    """A boolean query parameter: true/1 or false/0 (absent is false)."""
    raw = (query.get(name) or "false").lower()
    if raw not in ("true", "1", "false", "0"):
        raise BadRequestError(f"{name} must be true or false, not {raw[:20]!r}.", code=f"bad_{name}")
    return raw in ("true", "1")


def _int_param(query: Any, name: str, minimum: int) -> int | None:
    raw = query.get(name)
    if raw is None or raw == "":
        return None
    if not (raw.isascii() and raw.isdigit() and len(raw) <= 19) or not minimum <= int(raw) <= MAX_ID:
        raise BadRequestError(f"{name} must be a whole number of at least {minimum}, not {raw[:40]!r}.",
                              code=f"bad_{name}")
    return int(raw)


def owner_and_workflows(request: StrictRequest) -> tuple[Owner, WorkflowService]:
    """The caller and the workflow service (Litestar's app state is untyped; `create_app` puts them there)."""
    state = request.app.state
    workflows: WorkflowService = state.workflows
    return state.auth.owner(request), workflows


@post("/api/workflows/start", status_code=HTTP_200_OK, responses=errors(404, 409, 422, 503),
      summary="Start a workflow, or its next round with ?id=")
async def start(request: StrictRequest, data: JSONBody[StartRequest],
                workflow_id: Annotated[str | None, QueryParameter(name="id", max_length=64, required=False)] = None,
                idempotency_key: Annotated[str | None, HeaderParameter(name="Idempotency-Key", max_length=200,
                                                                       required=False)] = None) -> StartAnswer:
    owner, workflows = owner_and_workflows(request)
    data = await request.data_as(StartRequest)  # strictly: "1" is not a file id
    answer = await workflows.start(owner, workflow_id, data, idempotency_key)
    return msgspec.convert(answer, StartAnswer, from_attributes=False)


@post("/api/workflows/{workflow_id:str}/stop", status_code=HTTP_200_OK, responses=errors(404, 409),
      summary="Stop the running round at once")
async def stop(request: StrictRequest, workflow_id: WorkflowId) -> WorkflowStatusView:
    owner, workflows = owner_and_workflows(request)
    return await workflows.stop(owner, workflow_id)


@post("/api/workflows/{workflow_id:str}/review", status_code=HTTP_200_OK, responses=errors(400, 404, 409),
      summary="Decide on what the waiting round waits for: approve, revise, edit or reject its plan; answer "
              "or reject an agent's question; approve or reject a task that needs approval")
async def review(request: StrictRequest, workflow_id: WorkflowId, data: JSONBody[ReviewRequest]) -> WorkflowStatusView:
    owner, workflows = owner_and_workflows(request)
    data = await request.data_as(ReviewRequest)
    return await workflows.reviews.decide(owner, workflow_id, data)


@delete("/api/workflows/{workflow_id:str}", status_code=HTTP_200_OK, responses=errors(404),
        summary="Delete a workflow with its messages, logs and the files only it used")
async def delete_workflow(request: StrictRequest, workflow_id: WorkflowId) -> Deleted:
    owner, workflows = owner_and_workflows(request)
    await workflows.delete(owner, workflow_id)
    return Deleted(deleted="workflow", workflow_id=workflow_id, message_id=None, file_id=None)


@patch("/api/workflows/{workflow_id:str}", status_code=HTTP_200_OK, responses=errors(400, 404),
       summary="Rename a workflow (its title in the list)")
async def rename_workflow(request: StrictRequest, workflow_id: WorkflowId, data: JSONBody[RenameRequest]) -> WorkflowSummary:
    owner, workflows = owner_and_workflows(request)
    data = await request.data_as(RenameRequest)
    return await rename(workflows.repo.workflows, owner, workflow_id, data)


@get("/api/workflows", responses=errors(), summary="The caller's workflows, newest activity first, a page at a time",
     operation_id="listWorkflows", tags=["workflows"])
async def list_workflows(
    request: StrictRequest,
    limit: Annotated[int, QueryParameter(ge=1, le=MAX_LIMIT, description="How many at most (default 100).")] = 100,
    cursor: Annotated[str | None, QueryParameter(max_length=200, required=False,
                                                 description="The `cursor` of the page before.")] = None,
) -> WorkflowList:
    owner, workflows = owner_and_workflows(request)
    items, following = await workflows.workflows(owner, limit, decode_cursor(cursor) if cursor else None)
    return WorkflowList(items=items, has_more=following is not None,
                        cursor=encode_cursor(*following) if following else None)


@get("/api/workflows/{workflow_id:str}", responses=errors(404), summary="The whole workflow")
async def get_workflow(request: StrictRequest, workflow_id: WorkflowId,
                       include_data: Annotated[bool, QueryParameter(name="includeData")] = False) -> Workflow:
    owner, workflows = owner_and_workflows(request)
    return await workflows.whole(owner, workflow_id, include_data)


@get("/api/workflows/{workflow_id:str}/status", summary="Status, with an ETag for conditional polling",
     responses=errors(404) | {304: ResponseSpec(data_container=None, description="Unchanged since the ETag sent "
                                                "in If-None-Match; no body.", generate_examples=False)})
async def get_status(request: StrictRequest, workflow_id: WorkflowId) -> Response[WorkflowStatusView]:
    owner, workflows = owner_and_workflows(request)
    view = status_view(await workflows.owned(owner, workflow_id))
    body = msgspec.json.encode(view)
    etag = '"' + hashlib.sha256(body).hexdigest()[:32] + '"'
    if etag_matches(request.headers.get("if-none-match"), etag):
        return not_modified(etag)
    return Response(content=view, headers={"ETag": etag, "Cache-Control": "no-cache"})


@get("/api/workflows/{workflow_id:str}/messages", responses=errors(404), summary="Messages after a cursor",
     operation_class=PollOperation)
async def get_messages(request: StrictRequest, workflow_id: WorkflowId) -> Response[MessagePage]:
    owner, workflows = owner_and_workflows(request)
    page = await workflows.messages(owner, workflow_id, *page_query(request.query_params))
    return Response(content=page, media_type="application/json")


@get("/api/workflows/{workflow_id:str}/logs", responses=errors(404), summary="Log entries after a cursor",
     operation_class=PollOperation)
async def get_logs(request: StrictRequest, workflow_id: WorkflowId) -> Response[LogPage]:
    owner, workflows = owner_and_workflows(request)
    after, limit, _ = page_query(request.query_params)  # includeData is checked, and has nothing to add to logs
    page = await workflows.logs(owner, workflow_id, after, limit)
    return Response(content=page, media_type="application/json")


@delete("/api/workflows/{workflow_id:str}/messages/{message_id:int}", status_code=HTTP_200_OK,
        responses=errors(404), summary="Delete a message (its id stays valid as a cursor)")
async def delete_message(request: StrictRequest, workflow_id: WorkflowId, message_id: Id) -> Deleted:
    owner, workflows = owner_and_workflows(request)
    await workflows.delete_message(owner, workflow_id, message_id)
    return Deleted(deleted="message", workflow_id=workflow_id, message_id=message_id, file_id=None)


@delete("/api/workflows/{workflow_id:str}/messages/{message_id:int}/files/{file_id:int}", status_code=HTTP_200_OK,
        responses=errors(404), summary="Remove a file from a message")
async def remove_file(request: StrictRequest, workflow_id: WorkflowId, message_id: Id, file_id: Id) -> Deleted:
    owner, workflows = owner_and_workflows(request)
    await workflows.remove_document(owner, workflow_id, message_id, file_id)
    return Deleted(deleted="document", workflow_id=workflow_id, message_id=message_id, file_id=file_id)


ROUTES = [start, stop, review, delete_workflow, rename_workflow, list_workflows, get_workflow, get_status, get_messages, get_logs,
          delete_message, remove_file]
