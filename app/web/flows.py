"""Flow routes (CONTRACT.md "Flows"): validate, create, list, read, replace, delete, publish and list
versions, the definition's JSON Schema, and a flow round's node runs."""

from __future__ import annotations

from typing import Annotated, Any

import msgspec
from litestar import Response, delete, get, post, put
from litestar.params import JSONBody, Parameter, QueryParameter
from litestar.status_codes import HTTP_200_OK, HTTP_201_CREATED

from agents.flows import FlowDefinition
from app.contract.flows import FlowDeleted, FlowList, FlowProblem, FlowView, NodeRunPage, ValidAnswer
from app.contract.schemas import MAX_ID, Camel
from app.errors import BadRequestError
from app.services.flow_rounds import FlowRounds
from app.services.flows import FlowService
from app.store.records import Owner
from app.web.http import StrictRequest, errors
from app.web.workflows import MAX_LIMIT, WorkflowId, owner_and_workflows

FlowId = Annotated[int, Parameter(ge=1, le=MAX_ID)]
MAX_ROUND = 2**31 - 1  # rounds are 32-bit integers in the database (a larger one was a 500 on PostgreSQL)
SCHEMA_PATH = "/api/flows/schema.json"


class PublishRequest(Camel, forbid_unknown_fields=True, kw_only=True):
    """A version's name and comment (both optional)."""

    name: Annotated[str, msgspec.Meta(max_length=200)] = ""
    comment: Annotated[str, msgspec.Meta(max_length=2000)] = ""


class VersionView(Camel, kw_only=True):
    """A published, immutable version of a flow."""

    version: int
    hash: str
    name: str
    comment: str
    author: str
    created_at: Any


class ProblemList(Camel, kw_only=True):
    """The problems of a definition (the 400 of validate, create and replace carries the same list)."""

    valid: bool
    problems: list[FlowProblem]


def owner_and_flows(request: StrictRequest) -> tuple[Owner, FlowService]:
    owner, workflows = owner_and_workflows(request)
    return owner, workflows.flows


async def _body(request: StrictRequest) -> Any:
    """The request's JSON body as plain data (the definition is checked field by field by the service)."""
    raw = await request.body()
    try:
        return msgspec.json.decode(raw)
    except msgspec.DecodeError:
        raise BadRequestError("The body is not JSON.", code="bad_json") from None


@post("/api/flows/validate", status_code=HTTP_200_OK, responses=errors(), summary="Check a flow definition: every "
      "problem at once, each with its node")
async def validate_flow(request: StrictRequest, data: JSONBody[FlowDefinition]) -> ValidAnswer:
    _, flows = owner_and_flows(request)
    await flows.checked(await _body(request))
    return ValidAnswer()


@get(SCHEMA_PATH, responses=errors(), summary="The JSON Schema of a flow definition", include_in_schema=True)
async def flow_schema() -> Response[dict[str, Any]]:
    return Response(content=FlowDefinition.json_schema(), media_type="application/json")


class FromRound(Camel, forbid_unknown_fields=True, kw_only=True):
    """The round whose plan a new flow is made of."""

    workflow_id: Annotated[str, msgspec.Meta(min_length=1, max_length=64)]
    round: Annotated[int, msgspec.Meta(ge=1, le=MAX_ROUND)]


class FromRoundRequest(Camel, forbid_unknown_fields=True, kw_only=True):
    """`POST /api/flows` with `fromRound`: a draft of that round's plan, named `name`."""

    from_round: FromRound
    name: Annotated[str, msgspec.Meta(min_length=1, max_length=200)]


@post("/api/flows", status_code=HTTP_201_CREATED, responses=errors(404),
      summary="Save a new flow: its draft is the body, or (with `fromRound`) a round's plan")
async def create_flow(request: StrictRequest, data: JSONBody[dict[str, Any]]) -> FlowView:
    owner, workflows = owner_and_workflows(request)
    raw = await _body(request)
    if isinstance(raw, dict) and "fromRound" in raw:
        try:
            made = msgspec.convert(raw, FromRoundRequest)
        except msgspec.ValidationError as exc:
            raise BadRequestError(f"The request does not fit: {exc}.", code="invalid_body") from None
        return await FlowRounds(workflows).from_round(owner, made.from_round.workflow_id, made.from_round.round,
                                                      made.name)
    return await workflows.flows.create(owner, raw)


@get("/api/flows", responses=errors(), summary="The caller's flows, newest first, a page at a time")
async def list_flows(
    request: StrictRequest,
    limit: Annotated[int, QueryParameter(ge=1, le=MAX_LIMIT, description="How many at most (default 100).")] = 100,
    cursor: Annotated[int | None, QueryParameter(ge=1, le=MAX_ID, required=False,
                                                 description="The `cursor` of the page before.")] = None,
) -> FlowList:
    owner, flows = owner_and_flows(request)
    return await flows.page(owner, limit, cursor)


@get("/api/flows/{flow_id:int}", responses=errors(404), summary="A flow with its draft")
async def get_flow(request: StrictRequest, flow_id: FlowId) -> FlowView:
    owner, flows = owner_and_flows(request)
    return await flows.read(owner, flow_id)


@put("/api/flows/{flow_id:int}", status_code=HTTP_200_OK, responses=errors(404),
     summary="Replace a flow's draft (validated as a new flow is)")
async def replace_flow(request: StrictRequest, flow_id: FlowId, data: JSONBody[FlowDefinition]) -> FlowView:
    owner, flows = owner_and_flows(request)
    return await flows.replace(owner, flow_id, await _body(request))


@delete("/api/flows/{flow_id:int}", status_code=HTTP_200_OK, responses=errors(404),
        summary="Delete a flow and its versions; the rounds it ran stay")
async def delete_flow(request: StrictRequest, flow_id: FlowId) -> FlowDeleted:
    owner, flows = owner_and_flows(request)
    await flows.delete(owner, flow_id)
    return FlowDeleted(flow_id=flow_id)


@post("/api/flows/{flow_id:int}/versions", status_code=HTTP_201_CREATED, responses=errors(404),
      summary="Publish the draft as the next immutable version")
async def publish_flow(request: StrictRequest, flow_id: FlowId,
                       data: JSONBody[PublishRequest | None] = None) -> VersionView:
    owner, flows = owner_and_flows(request)
    data = data or PublishRequest()
    row = await flows.repo.flows.publish(owner, flow_id, data.name, data.comment, f"{owner.mandate_id}:{owner.user_id}")
    if row is None:
        await flows.owned(owner, flow_id)  # 404
    assert row is not None
    return VersionView(version=row.version, hash=row.hash, name=row.name, comment=row.comment, author=row.author,
                       created_at=row.created_at)


@get("/api/flows/{flow_id:int}/versions", responses=errors(404), summary="A flow's versions, newest first")
async def list_versions(request: StrictRequest, flow_id: FlowId) -> list[VersionView]:
    owner, flows = owner_and_flows(request)
    await flows.owned(owner, flow_id)
    return [VersionView(version=v.version, hash=v.hash, name=v.name, comment=v.comment, author=v.author,
                        created_at=v.created_at) for v in await flows.repo.flows.versions(flow_id)]


@get("/api/workflows/{workflow_id:str}/nodes", responses=errors(404), summary="A flow round's node runs")
async def node_runs(request: StrictRequest, workflow_id: WorkflowId,
                    round_no: Annotated[int | None, QueryParameter(name="round", ge=1, le=MAX_ROUND,
                                                                   required=False)] = None) -> NodeRunPage:
    owner, workflows = owner_and_workflows(request)
    row = await workflows.owned(owner, workflow_id)
    return await workflows.flows.node_runs(workflow_id, round_no or row.current_round)


ROUTES = [validate_flow, flow_schema, create_flow, list_flows, get_flow, replace_flow, delete_flow, publish_flow,
          list_versions, node_runs]
