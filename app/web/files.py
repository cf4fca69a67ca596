"""File routes: upload (type from the bytes), metadata, content."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated

from litestar import Response, get, post
from litestar.datastructures import UploadFile
from litestar.exceptions import ClientException
from litestar.openapi.spec import OpenAPIFormat, OpenAPIMediaType, OpenAPIType, Operation, RequestBody, Schema
from litestar.params import Parameter
from litestar.status_codes import HTTP_201_CREATED

from app.contract.filenames import DOWNLOAD_CSP, content_disposition, served_type
from app.contract.schemas import MAX_ID, FileInfo
from app.contract.views import file_info
from app.errors import BadRequestError, UnsupportedMediaTypeError
from app.services.files import FileService
from app.store.records import Owner
from app.web.http import StrictRequest, errors


@dataclass
class UploadOperation(Operation):
    """The upload reads its multipart body by hand (to check sizes first); the schema still documents it."""

    def __post_init__(self) -> None:
        files = Schema(type=OpenAPIType.ARRAY, items=Schema(type=OpenAPIType.STRING, format=OpenAPIFormat.BINARY), min_items=1)
        self.request_body = RequestBody(required=True, content={"multipart/form-data": OpenAPIMediaType(
            schema=Schema(type=OpenAPIType.OBJECT, properties={"files": files}, required=["files"]))})


FileId = Annotated[int, Parameter(ge=1, le=MAX_ID)]


def owner_and_files(request: StrictRequest) -> tuple[Owner, FileService]:
    """The caller and the file service (Litestar's app state is untyped; `create_app` puts them there)."""
    state = request.app.state
    files: FileService = state.files
    return state.auth.owner(request), files


@post("/api/files", status_code=HTTP_201_CREATED, responses=errors(413, 415),
      summary="Upload one or more files (multipart, parts named 'files')", operation_class=UploadOperation)
async def upload(request: StrictRequest) -> list[FileInfo]:
    owner, files = owner_and_files(request)
    if not request.headers.get("content-type", "").startswith("multipart/form-data"):
        raise UnsupportedMediaTypeError("Send the files as multipart/form-data, one part named 'files' per file.",
                              code="not_multipart")
    try:
        form = await request.form()
    except ClientException as exc:
        if exc.status_code != 400 or exc.detail != "Request Entity Too Large":  # Litestar's parser limit
            raise
        raise BadRequestError("The multipart body has too many parts, or a part header (such as a file name) "
                              "that is too long.", code="multipart_limit") from None
    parts = [p for p in form.getall("files") if isinstance(p, UploadFile)] if "files" in form else []
    if not parts:
        raise BadRequestError("No file found: send each file as a multipart part named 'files'.", code="no_files")
    return await files.upload(owner, [(p.filename or "", await p.read()) for p in parts])


@get("/api/files/{file_id:int}", responses=errors(404), summary="A file's metadata")
async def get_file(request: StrictRequest, file_id: FileId) -> FileInfo:
    owner, files = owner_and_files(request)
    return file_info(await files.owned(owner, file_id))


@get("/api/files/{file_id:int}/content", responses=errors(404), summary="A file's bytes",
     media_type="*/*")  # documented as any type: the answer carries the detected type of the bytes
async def get_content(request: StrictRequest, file_id: FileId) -> Response[bytes]:
    owner, files = owner_and_files(request)
    row = await files.owned(owner, file_id)
    data = await files.content(row)
    filename = f"{row.name}.{row.ext}" if row.ext else row.name
    return Response(content=data, media_type=served_type(row.mime),
                    headers={"content-type": served_type(row.mime), "Content-Disposition": content_disposition(filename),
                             "Content-Security-Policy": DOWNLOAD_CSP, "Cache-Control": "private, no-cache"})


ROUTES = [upload, get_file, get_content]
