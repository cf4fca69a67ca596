"""The HTTP edge's shared parts: errors as JSON in one place, auth, documented error answers."""

from __future__ import annotations

import hashlib
import logging
from collections.abc import Mapping
from typing import Any, Protocol, TypeVar

import msgspec
from litestar import Request, Response
from litestar.datastructures import State
from litestar.exceptions import (
    ClientException,
    HTTPException,
    InternalServerException,
    MethodNotAllowedException,
    NotFoundException,
    SerializationException,
    ValidationException,
)
from litestar.openapi.datastructures import ResponseSpec
from litestar.types import ExceptionHandlersMap

from app.config import Settings
from app.contract.schemas import ConflictBody, ErrorBody
from app.errors import (
    CLIENT_CLOSED_REQUEST,
    CLIENT_GONE,
    ApplicationError,
    BadRequestError,
    DatabaseUnavailableError,
    PayloadTooLargeError,
    StorageFullError,
    UnauthorizedError,
    UnsupportedMediaTypeError,
    undecodable_json,
)
from app.store.connections import unavailable
from app.store.full import storage_full
from app.store.records import Owner
from app.web.openapi import ERROR_TEXT

log = logging.getLogger("foreman.http")
T = TypeVar("T")
# Any request, as exception handlers see it; the routes of app/web take `StrictRequest`.
AnyRequest = Request[Any, Any, Any]

MAX_JSON_DEPTH = 64

_CODES = {400: "bad_request", 401: "unauthorized", 404: "not_found", 405: "method_not_allowed",
          409: "conflict", 413: "payload_too_large", 415: "unsupported_media_type", 429: "too_many_requests",
          503: "not_ready"}



def errors(*codes: int, auth: bool = True) -> dict[int, ResponseSpec]:
    """OpenAPI entries for the error answers a route can give (400 and 401 are on every /api route)."""
    return {
        code: ResponseSpec(data_container=ConflictBody if code == 409 else ErrorBody,
                           description=ERROR_TEXT[code], generate_examples=False)
        for code in sorted({*codes, *((400, 401) if auth else ())})
    }


def error_response(status: int, detail: str, code: str, extra: dict[str, Any] | None = None) -> Response[Any]:
    body = {"status_code": status, "detail": detail, "code": code, **(extra or {})}
    return Response(content=body, status_code=status, media_type="application/json")


def on_application_error(_: AnyRequest, exc: ApplicationError) -> Response[Any]:
    extra = exc.extra
    if exc.status_code == 409:  # ConflictBody: status and round always there, null when no workflow state is at issue
        extra = {"status": None, "currentRound": None} | extra
    return error_response(exc.status_code, exc.detail, exc.code, extra)



def client_gone(request: AnyRequest) -> Response[Any]:
    """The client went away mid-request: not a server error, nothing to trace; one line says so."""
    log.info("The client closed the connection before its request was read whole: %s %s", request.method,
             request.url.path)
    return error_response(CLIENT_CLOSED_REQUEST, "The request ended before its body arrived.", "client_closed_request")


def on_http_exception(request: AnyRequest, exc: HTTPException) -> Response[Any]:
    status = exc.status_code
    if isinstance(exc, InternalServerException) and exc.detail == CLIENT_GONE:
        return client_gone(request)
    if status >= 500:
        return on_unexpected(request, exc)
    detail = exc.detail or "The request could not be handled."
    if isinstance(exc, NotFoundException) and detail == "Not Found":  # no route: say which path
        return error_response(404, f"There is nothing at {request.url.path[:200]!r}; the API is described at "
                              "/schema/openapi.json and /docs.", "route_not_found")
    if isinstance(exc, MethodNotAllowedException):
        # Litestar's router names the methods in a lower-case `allow` header.
        allowed = next((v for k, v in (exc.headers or {}).items() if k.lower() == "allow"), "")
        response = error_response(405, f"{request.method[:20]} is not allowed on {request.url.path[:200]!r}"
                                  + (f"; use {allowed}." if allowed else "."), "method_not_allowed")
        if allowed:
            response.headers["Allow"] = allowed
        return response
    if isinstance(exc, ValidationException):
        problems = [_problem(e) for e in (exc.extra or []) if isinstance(e, dict)]
        detail = "The request is not valid" + (": " + "; ".join(problems) if problems else ".")
        if "JSON" in (exc.detail or "") or "decode" in (exc.detail or "").lower():
            detail = "The request body is not valid JSON of the expected shape: " + (exc.detail or "")
    if isinstance(exc.__cause__, SerializationException):  # the body did not decode as JSON
        detail = f"The request body is not valid JSON: {exc.detail}."
    if status == 413:
        settings = getattr(request.app.state, "settings", None)
        limit = settings.max_upload_bytes if settings else None
        detail = f"The upload is larger than the limit of {limit} bytes (MAX_UPLOAD_BYTES)." if limit else detail
    return error_response(status, detail, _CODES.get(status, "http_error"))


def _problem(error: dict[str, Any]) -> str:
    key, message = error.get("key") or "body", error.get("message")
    if error.get("source") == "query":  # the name the client sent (logId), not the handler's (log_id)
        key = _camel(key)
    if message == f"'{key}'":  # how a missing value is reported
        return "the JSON request body is missing" if error.get("source") == "body" else f"{key} is missing"
    return f"{key}: {message}"


def _camel(name: str) -> str:
    first, *rest = name.split("_")
    return first + "".join(part.title() for part in rest)


def on_unexpected(request: AnyRequest, exc: Exception) -> Response[Any]:
    if storage_full(exc):  # not a defect either: the disk is full
        return on_storage_full(request, exc)
    if unavailable(exc):  # not a defect: the database is down, full, or every connection is busy
        return on_database_unavailable(request, exc)
    # The client learns that something broke and when; the trace stays in the server's log.
    log.exception("Unhandled error on %s %s", request.method, request.url.path, exc_info=exc)
    return error_response(500, "The server could not complete this request; it has been logged. Try again.",
                          "internal_error")


def on_database_unavailable(request: AnyRequest, exc: Exception) -> Response[Any]:
    """503 with Retry-After: the request is fine and may be sent again unchanged."""
    log.warning("Database unavailable on %s %s: %s", request.method, request.url.path,
                f"{type(exc).__name__}: {exc}".splitlines()[0][:300])
    error = DatabaseUnavailableError(
        "The database cannot take this request now (it refused the connection, is unreachable, or every "
        f"connection is busy). Try again in {DatabaseUnavailableError.retry_after_seconds} seconds; if this "
        "persists, the operator should check that PostgreSQL is up and that its max_connections covers "
        "every replica's pools (see docs/scaling.md, Connections).")
    response = on_application_error(request, error)
    response.headers["Retry-After"] = str(error.retry_after_seconds)
    return response


def on_storage_full(request: AnyRequest, exc: Exception) -> Response[Any]:
    """507 with Retry-After: the request was not carried out (nothing of it was kept)."""
    log.error("Storage full on %s %s: %s", request.method, request.url.path,
              f"{type(exc).__name__}: {exc}".splitlines()[0][:300])
    error = StorageFullError(
        "The server's storage is full, so this request was not carried out and nothing of it was kept. "
        f"Try again later (in {StorageFullError.retry_after_seconds} seconds or more); the operator must "
        "free disk space.")
    response = on_application_error(request, error)
    response.headers["Retry-After"] = str(error.retry_after_seconds)
    return response


EXCEPTION_HANDLERS: ExceptionHandlersMap = {
    ApplicationError: on_application_error,
    HTTPException: on_http_exception,
    Exception: on_unexpected,
}


class StrictRequest(Request[Any, Any, State]):
    """A request whose JSON body must say it is JSON, be UTF-8, not too large and not nested too deep."""

    async def json(self) -> Any:
        if getattr(self, "_strict_json", None) is None:
            media = self.content_type[0]
            if media != "application/json" and not (media.startswith("application/") and media.endswith("+json")):
                raise UnsupportedMediaTypeError(f"Send the body as JSON with 'Content-Type: application/json', "
                                                f"not {media[:80]!r}.", code="not_json")
            settings = self.app.state.settings
            limit = settings.max_json_bytes
            if int(self.headers.get("content-length") or 0) > limit:
                raise _json_too_large(limit)
            try:
                body = await self.body()
            except ClientException as exc:
                if exc.status_code != 413:
                    raise
                raise _json_too_large(limit) from None
            if len(body) > limit:
                raise _json_too_large(limit)
            self._strict_json = (parse_json(body),)
        return self._strict_json[0]

    async def data_as(self, kind: type[T]) -> T:
        """The JSON body as `kind`, strictly: a string is never taken for a number."""
        try:
            return msgspec.convert(await self.json(), kind, strict=True)
        except msgspec.ValidationError as exc:
            raise BadRequestError(f"The request body does not fit: {exc}.", code="invalid_body") from None


def _json_too_large(limit: int) -> PayloadTooLargeError:
    return PayloadTooLargeError(f"The JSON body is larger than {limit} bytes; attach long text as a file.",
                                code="body_too_large")


def parse_json(body: bytes) -> Any:
    """Decode a JSON body, or BadRequestError saying what is wrong with it (never a crash)."""
    if not body.strip():
        raise BadRequestError("The request body is empty; send a JSON object.", code="invalid_json")
    try:
        value = msgspec.json.decode(body)
    except RecursionError:
        raise _too_deep() from None
    except (UnicodeDecodeError, msgspec.DecodeError) as exc:
        raise undecodable_json(body, exc) from None
    stack = [(value, 1)]
    while stack:  # iterative: a deep value must not exhaust our own stack either
        item, level = stack.pop()
        if level > MAX_JSON_DEPTH:
            raise _too_deep()
        if isinstance(item, (dict, list)):
            keys = item.keys() if isinstance(item, dict) else range(len(item))
            for key in keys:
                child = item[key]
                # JSON (and JSON Schema's "integer") does not tell 1.0 from 1; strings stay strings.
                if isinstance(child, float) and child.is_integer() and abs(child) < 2**63:
                    item[key] = int(child)
                elif isinstance(child, (dict, list)):
                    stack.append((child, level + 1))
    return value


def _too_deep() -> BadRequestError:
    return BadRequestError(f"The JSON body is nested more than {MAX_JSON_DEPTH} levels deep.", code="too_deep")


class WithHeaders(Protocol):
    """What the authenticator reads of a request (Litestar's, or an MCP request's headers)."""

    @property
    def headers(self) -> Mapping[str, str]: ...


class Authenticator:
    """Maps bearer keys to owners; with no keys configured, everyone is the local user."""

    LOCAL = Owner(1, 1)

    def __init__(self, settings: Settings) -> None:
        # Keyed by digest so a lookup's timing says nothing about the keys.
        self._owners = {_digest(k.key): Owner(k.mandate_id, k.user_id) for k in settings.api_keys}
        self.local = settings.local_mode

    def owner(self, request: WithHeaders) -> Owner:
        """The caller, or UnauthorizedError."""
        if self.local:
            return self.LOCAL
        header = request.headers.get("authorization", "")
        scheme, _, key = header.partition(" ")
        if scheme.lower() != "bearer" or not key.strip():
            raise UnauthorizedError("Send your API key as 'Authorization: Bearer <key>'.", code="missing_key")
        owner = self._owners.get(_digest(key.strip()))
        if owner is None:
            raise UnauthorizedError("This API key is not known to the server.", code="unknown_key")
        return owner


def _digest(key: str) -> bytes:
    return hashlib.sha256(key.encode()).digest()
