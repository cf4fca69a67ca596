"""What a chat completions request asks: its messages, and the last user turn as a round's prompt and files.

Parts follow OpenAI's chat content: `text`, `file` (base64 `file_data`, or the `file_id` of a file
uploaded with `POST /api/files`) and `image_url` as a data: URL (Foreman fetches no URL).
"""

from __future__ import annotations

import asyncio
import base64
import binascii
from typing import Any

import msgspec

from app.errors import BadRequestError, undecodable_json


class ChatMessage(msgspec.Struct, forbid_unknown_fields=False):
    role: str
    content: str | list[dict[str, Any]] | None = None


class StreamOptions(msgspec.Struct, forbid_unknown_fields=False):
    include_usage: bool = False


class ChatRequest(msgspec.Struct, forbid_unknown_fields=False):
    model: str
    messages: list[ChatMessage]
    stream: bool | None = False
    stream_options: StreamOptions | None = None
    metadata: dict[str, str] | None = None


class Turn(msgspec.Struct):
    """What one request asks: the prompt, files to upload or reuse, and the earlier prompts."""

    prompt: str
    uploads: list[tuple[str, bytes]]
    file_ids: list[int]
    history: list[str]


# A body at least this large is decoded, and its files' base64 too, in a worker thread: a 10 MB text
# part held the event loop 5.7 s on a loaded machine. Base64 is decoded a slice at a time there, so the
# thread gives the interpreter back to the loop between slices (one 13 MB call held it ~90 ms).
LARGE_BODY = 1 << 20
_SLICE = 1 << 20  # characters of base64, a multiple of 4


async def read_turn(raw: bytes) -> tuple[ChatRequest, Turn]:
    """The request and its turn (files decoded), in a worker thread when the body is large."""
    if len(raw) >= LARGE_BODY:
        return await asyncio.to_thread(_request_and_turn, raw)
    return _request_and_turn(raw)


def _request_and_turn(raw: bytes) -> tuple[ChatRequest, Turn]:
    body = decode_request(raw)
    return body, parse_turn(body)


def decode_request(raw: bytes) -> ChatRequest:
    """The chat completions request in `raw`, or BadRequestError saying what is wrong with it."""
    if not raw.strip():
        raise BadRequestError("The request body is empty; send a chat completions request as JSON.",
                              code="invalid_json")
    try:
        return msgspec.json.decode(raw, type=ChatRequest)
    except msgspec.ValidationError as exc:
        raise BadRequestError(f"The request body does not fit the chat completions request: {exc}.",
                              code="invalid_body") from None
    except RecursionError:
        raise BadRequestError("The request body is nested too deep.", code="too_deep") from None
    except (UnicodeDecodeError, msgspec.DecodeError) as exc:
        raise undecodable_json(raw, exc) from None


def parse_turn(body: ChatRequest) -> Turn:
    """The last user message as the round's prompt and files; the earlier user messages' text."""
    users = [m for m in body.messages if m.role == "user"]
    if not users or body.messages[-1].role != "user":
        raise BadRequestError("messages must end with a user message (the request to answer).", code="no_user_message")
    history = [_text_and_files(m.content, upload=False)[0] for m in users[:-1]]
    prompt, uploads, ids = _text_and_files(users[-1].content, upload=True)
    return Turn(prompt=prompt, uploads=uploads, file_ids=ids, history=history)


def _text_and_files(content: Any, upload: bool) -> tuple[str, list[tuple[str, bytes]], list[int]]:
    if content is None or isinstance(content, str):
        return (content or "").strip(), [], []
    texts, uploads, ids = [], [], []
    for n, part in enumerate(content):
        kind = part.get("type")
        if kind == "text":
            texts.append(str(part.get("text") or ""))
        elif kind in ("file", "image_url") and upload:
            name, data, file_id = _file_part(part, n)
            if file_id is not None:
                ids.append(file_id)
            else:
                uploads.append((name, data))
        elif kind not in ("file", "image_url", "input_audio", "refusal"):
            raise BadRequestError(f"Content part {n} has type {str(kind)[:40]!r}; Foreman reads 'text', 'file' and "
                                  "'image_url' (a data: URL) parts.", code="unsupported_content_part")
    return "\n".join(texts).strip(), uploads, ids


def _file_part(part: dict[str, Any], n: int) -> tuple[str, bytes, int | None]:
    if part["type"] == "image_url":
        url = str((part.get("image_url") or {}).get("url") or "")
        if not url.startswith("data:"):
            raise BadRequestError(f"Content part {n}: an image must be a data: URL (base64); Foreman does not fetch "
                                  "URLs.", code="image_not_inline")
        return f"image-{n + 1}.{_ext(url)}", _decode(url, n), None
    file = part.get("file") or {}
    if file.get("file_id") and not file.get("file_data"):
        raw = str(file["file_id"])
        if not (raw.isascii() and raw.isdigit() and 0 < int(raw) < 2**63):
            raise BadRequestError(f"Content part {n}: file_id must be the id of a file uploaded with POST /api/files, "
                                  f"not {raw[:40]!r}.", code="bad_file_id")
        return "", b"", int(raw)
    if not file.get("file_data"):
        raise BadRequestError(f"Content part {n}: a file part needs file_data (base64 or a data: URL).",
                              code="empty_file_part")
    return str(file.get("filename") or f"file-{n + 1}"), _decode(str(file["file_data"]), n), None


def _ext(url: str) -> str:
    media = url[5:].split(";", 1)[0].split(",", 1)[0]
    return {"image/jpeg": "jpg", "image/svg+xml": "svg"}.get(media, media.rpartition("/")[2] or "bin")


def _decode(data: str, n: int) -> bytes:
    if data.startswith("data:"):
        data = data.partition(",")[2]
    try:
        if len(data) <= _SLICE:
            return base64.b64decode(data, validate=True)
        if len(data) % 4:  # slices must end on whole quadruples; so must the whole
            raise ValueError("base64 length")
        return b"".join(base64.b64decode(data[i:i + _SLICE], validate=True) for i in range(0, len(data), _SLICE))
    except (binascii.Error, ValueError):
        raise BadRequestError(f"Content part {n}: the file's data is not valid base64.", code="bad_base64") from None
