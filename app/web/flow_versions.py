"""Flow routes of a flow's history and files (CONTRACT.md "Flows"): read a version (or export it as YAML or
JSON), compare two versions or a version and the draft, restore a version into the draft, import a file."""

from __future__ import annotations

from typing import Annotated, Any, Literal

import msgspec
from litestar import Response, get, post
from litestar.params import JSONBody, Parameter, QueryParameter
from litestar.status_codes import HTTP_200_OK, HTTP_201_CREATED

from agents.flows import FlowDefinition, FlowDiff
from app.contract.flows import FlowView
from app.contract.schemas import Camel, StartAnswer
from app.errors import UnsupportedMediaTypeError
from app.services.flow_rounds import FlowRounds
from app.services.flow_versions import FlowVersions
from app.web.flows import MAX_ROUND, FlowId, VersionView, owner_and_flows
from app.web.http import StrictRequest, errors
from app.web.workflows import WorkflowId, owner_and_workflows

VersionNo = Annotated[int, Parameter(ge=1, le=2**31 - 1)]
IMPORT_TYPES = ("application/yaml", "application/x-yaml", "text/yaml", "text/x-yaml", "application/json",
                "text/plain", "application/octet-stream")


class VersionDetail(VersionView, kw_only=True):
    """A published version with its definition."""

    definition: FlowDefinition


class RestoreRequest(Camel, forbid_unknown_fields=True, kw_only=True):
    """The version to copy into the draft."""

    version: Annotated[int, msgspec.Meta(ge=1, le=2**31 - 1)]


class ImportAnswer(Camel, kw_only=True):
    """The flow a file made, what the file was (`foreman` or `dify`), and how many of its nodes it has."""

    flow: FlowView
    source: Literal["foreman", "dify"]
    nodes: int
    imported: int


def versions_of(request: StrictRequest) -> tuple[Any, FlowVersions]:
    owner, flows = owner_and_flows(request)
    return owner, FlowVersions(flows)


@get("/api/flows/{flow_id:int}/versions/{version:int}", responses=errors(404), media_type="*/*",
     summary="One version with its definition; `?format=yaml` or `json` downloads it as a file")
async def get_version(request: StrictRequest, flow_id: FlowId, version: VersionNo,
                      fmt: Annotated[Literal["yaml", "json"] | None, QueryParameter(
                          name="format", required=False, description="Download as a file in this format.")] = None,
                      ) -> Response[VersionDetail]:
    owner, versions = versions_of(request)
    if fmt is not None:
        text, filename = await versions.export(owner, flow_id, version, fmt)
        media = "application/yaml" if fmt == "yaml" else "application/json"
        download: Any = text.encode()  # the file; the JSON answer is the documented shape
        return Response(content=download, media_type=f"{media}; charset=utf-8",
                        headers={"content-type": f"{media}; charset=utf-8",
                                 "Content-Disposition": f'attachment; filename="{filename}"'})
    row, definition = await versions.version(owner, flow_id, version)
    return Response(content=VersionDetail(version=row.version, hash=row.hash, name=row.name, comment=row.comment,
                                          author=row.author, created_at=row.created_at, definition=definition),
                    media_type="application/json", headers={"content-type": "application/json"})


@get("/api/flows/{flow_id:int}/diff", responses=errors(404),
     summary="What changed between two versions (or a version and the draft): nodes, edges, inputs, outputs")
async def diff_flow(request: StrictRequest, flow_id: FlowId,
                    before: Annotated[str, QueryParameter(name="from", min_length=1, max_length=12,
                                                          pattern="^(draft|[1-9][0-9]{0,9})$",
                                                          description="A version number, or `draft`.")],
                    after: Annotated[str, QueryParameter(name="to", min_length=1, max_length=12,
                                                         pattern="^(draft|[1-9][0-9]{0,9})$",
                                                         description="A version number, or `draft`.")],
                    ) -> FlowDiff:
    owner, versions = versions_of(request)
    return await versions.diff(owner, flow_id, before, after)


@post("/api/flows/{flow_id:int}/restore", status_code=HTTP_200_OK, responses=errors(404),
      summary="Copy a version into the draft (the versions stay)")
async def restore_flow(request: StrictRequest, flow_id: FlowId, data: JSONBody[RestoreRequest]) -> FlowView:
    owner, versions = versions_of(request)
    return await versions.restore(owner, flow_id, data.version)


@post("/api/flows/import", status_code=HTTP_201_CREATED, responses=errors(),
      summary="A new flow from a YAML or JSON file: Foreman's definition, or a Dify DSL app")
async def import_flow(request: StrictRequest) -> ImportAnswer:
    owner, versions = versions_of(request)
    media = request.content_type[0] or "application/octet-stream"
    if media not in IMPORT_TYPES:
        raise UnsupportedMediaTypeError(f"Send the file as YAML or JSON (Content-Type application/yaml or "
                                        f"application/json), not {media[:80]!r}.", code="not_yaml")
    found = await versions.import_file(owner, await request.body(), media)
    return ImportAnswer(flow=found.flow, source=found.source,  # type: ignore[arg-type]
                        nodes=found.nodes, imported=found.imported)


class RerunRequest(Camel, forbid_unknown_fields=True, kw_only=True):
    """Which round to run again (default: the last), from which node (default: where it failed), with which
    inputs changed."""

    round: Annotated[int, msgspec.Meta(ge=1, le=MAX_ROUND)] | None = None
    from_node: Annotated[str, msgspec.Meta(min_length=1, max_length=200)] | None = None
    inputs: dict[str, Any] = {}


@post("/api/workflows/{workflow_id:str}/rerun", status_code=HTTP_200_OK, responses=errors(404, 409),
      summary="Run a flow round again as a new round: from where it failed, or from a node, reusing the rest")
async def rerun_workflow(request: StrictRequest, workflow_id: WorkflowId,
                         data: JSONBody[RerunRequest | None] = None) -> StartAnswer:
    owner, workflows = owner_and_workflows(request)
    data = data or RerunRequest()
    answer = await FlowRounds(workflows).rerun(owner, workflow_id, data.round, data.from_node, data.inputs or None)
    return msgspec.convert(answer, StartAnswer)


ROUTES = [get_version, diff_flow, restore_flow, import_flow, rerun_workflow]
