"""The HTTP edge's shared parts: errors as JSON in one place, auth, documented error answers."""

from __future__ import annotations

import hashlib
import logging
from typing import Any

from litestar import Request, Response
from litestar.exceptions import HTTPException, SerializationException, ValidationException
from litestar.openapi.datastructures import ResponseSpec

from app.config import Settings
from app.errors import ApplicationError, UnauthorizedError
from app.records import Owner
from app.schemas import ConflictBody, ErrorBody

log = logging.getLogger("foreman.http")

_CODES = {400: "bad_request", 401: "unauthorized", 404: "not_found", 405: "method_not_allowed",
          409: "conflict", 413: "payload_too_large", 415: "unsupported_media_type", 429: "too_many_requests",
          503: "not_ready"}

ERROR_DESCRIPTIONS = {
    400: "The request is malformed or names something that does not fit.",
    401: "The Authorization header is missing or names an unknown key.",
    404: "No such object, or it belongs to someone else.",
    409: "The workflow's state does not allow this request.",
    413: "The upload is larger than MAX_UPLOAD_BYTES.",
    415: "The request body is not of a supported media type.",
    422: "The Idempotency-Key was already used for a different request (code idempotency_key_reused).",
    503: "The service is starting or stopping.",
}


def errors(*codes: int) -> dict[int, ResponseSpec]:
    """OpenAPI entries for the error answers a route can give (401 is on every /api route)."""
    return {
        code: ResponseSpec(data_container=ConflictBody if code == 409 else ErrorBody,
                           description=ERROR_DESCRIPTIONS[code], generate_examples=False)
        for code in sorted({*codes, 400, 401})
    }


def error_response(status: int, detail: str, code: str, extra: dict[str, Any] | None = None) -> Response:
    body = {"status_code": status, "detail": detail, "code": code, **(extra or {})}
    return Response(content=body, status_code=status, media_type="application/json")


def on_application_error(_: Request, exc: ApplicationError) -> Response:
    return error_response(exc.status_code, exc.detail, exc.code, exc.extra)


def on_http_exception(request: Request, exc: HTTPException) -> Response:
    status = exc.status_code
    if status >= 500:
        return on_unexpected(request, exc)
    detail = exc.detail or "The request could not be handled."
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
    if message == f"'{key}'":  # how a missing value is reported
        return "the JSON request body is missing" if error.get("source") == "body" else f"{key} is missing"
    return f"{key}: {message}"


def on_unexpected(request: Request, exc: Exception) -> Response:
    # The client learns that something broke and when; the trace stays in the server's log.
    log.exception("Unhandled error on %s %s", request.method, request.url.path, exc_info=exc)
    return error_response(500, "The server could not complete this request; it has been logged. Try again.",
                          "internal_error")


EXCEPTION_HANDLERS = {
    ApplicationError: on_application_error,
    HTTPException: on_http_exception,
    Exception: on_unexpected,
}


class Authenticator:
    """Maps bearer keys to owners; with no keys configured, everyone is the local user."""

    LOCAL = Owner(1, 1)

    def __init__(self, settings: Settings) -> None:
        # Keyed by digest so a lookup's timing says nothing about the keys.
        self._owners = {_digest(k.key): Owner(k.mandate_id, k.user_id) for k in settings.api_keys}
        self.local = settings.local_mode

    def owner(self, request: Request) -> Owner:
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
