"""The service's exception tree; `app.web.http` maps it to status codes in one place."""

from __future__ import annotations

from typing import Any

# What Litestar raises (an InternalServerException's detail) when the client hangs up before its request
# body has arrived: not a server error. CLIENT_CLOSED_REQUEST is nginx's status for it: no one reads the
# answer, and the metrics count it apart from the 500s.
CLIENT_GONE = "client disconnected prematurely"
CLIENT_CLOSED_REQUEST = 499


class ApplicationError(Exception):
    """Base of every error the API answers with a JSON body."""

    status_code = 500
    code = "internal_error"

    def __init__(self, detail: str, *, code: str | None = None, extra: dict[str, Any] | None = None) -> None:
        super().__init__(detail)
        self.detail = detail
        if code:
            self.code = code
        self.extra = extra or {}


class BadRequestError(ApplicationError):
    """The request is malformed or names something that does not fit."""

    status_code = 400
    code = "bad_request"


class UnauthorizedError(ApplicationError):
    """No key, or a key the server does not know."""

    status_code = 401
    code = "unauthorized"


class NotFoundError(ApplicationError):
    """The object does not exist, or belongs to someone else (indistinguishable on purpose)."""

    status_code = 404
    code = "not_found"


class ConflictError(ApplicationError):
    """The object is in a state that does not allow this request."""

    status_code = 409
    code = "conflict"


class UnprocessableError(ApplicationError):
    """A well-formed request that cannot be carried out as asked."""

    status_code = 422
    code = "unprocessable"


class PayloadTooLargeError(ApplicationError):
    """An upload over the configured limit."""

    status_code = 413
    code = "payload_too_large"


class UnsupportedMediaTypeError(ApplicationError):
    """A body in a media type the route does not take."""

    status_code = 415
    code = "unsupported_media_type"


class NotReadyError(ApplicationError):
    """The service is starting or stopping."""

    status_code = 503
    code = "not_ready"


class DatabaseUnavailableError(ApplicationError):
    """The database refused a connection, lost it, or none came free in time: try again shortly."""

    status_code = 503
    code = "database_unavailable"
    retry_after_seconds = 5


class StorageFullError(ApplicationError):
    """The server's disk (or the database's) is full: nothing of the request was kept."""

    status_code = 507
    code = "storage_full"
    retry_after_seconds = 60


class StoredFileError(ApplicationError):
    """A file's stored bytes are missing or no longer match their checksum: never served wrong."""

    status_code = 500
    code = "stored_file_damaged"


def undecodable_json(body: bytes, error: Exception) -> BadRequestError:
    """Why a JSON body did not decode: it is not UTF-8 text (`not_utf8`: msgspec 0.23 says so in a
    `DecodeError`, earlier versions raised `UnicodeDecodeError`), or it is not JSON (`invalid_json`)."""
    try:
        body.decode("utf-8")
    except UnicodeDecodeError:
        return BadRequestError("The request body is not JSON: it is not valid UTF-8 text.", code="not_utf8")
    return BadRequestError(f"The request body is not valid JSON: {error}.", code="invalid_json")
