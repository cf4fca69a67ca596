"""What the model client says and checks around a structured answer, without the SDK: the
instruction a mode needs, the repair request, parsing and validation, token counts, names."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

import msgspec

from app.llm.jsonschema import JSONExtractError, extract_json, strict_compatible, validate

# Planning and repairs want the likeliest answer; writing reads better with some variety.
KIND_TEMPERATURES = {"plan": 0.0, "repair": 0.0, "map": 0.2, "reduce": 0.2, "task": 0.5, "final": 0.5}


def with_instruction(messages: list[dict[str, str]], schema: Mapping[str, Any],
                      mode: str) -> list[dict[str, str]]:
    """The messages with what the mode needs said, added to the system message (never after the
    user's turn): nothing when the server enforces the schema, the schema itself when nothing does."""
    if mode == "json_schema":
        return list(messages)
    if mode == "json_object":  # OpenAI requires the word JSON; llama.cpp enforces the schema
        note = "Answer with one JSON object only."
    else:
        note = ("Answer with one JSON value only, no prose, matching this JSON schema:\n"
                + json.dumps(schema, separators=(",", ":")))
    if messages and messages[0].get("role") == "system":
        return [{"role": "system", "content": f"{messages[0]['content']}\n\n{note}"}, *messages[1:]]
    return [{"role": "system", "content": note}, *messages]


def repair_instruction(problems: list[str]) -> dict[str, str]:
    listed = "\n".join(f"- {p}" for p in problems[:20])
    return {"role": "user", "content": "Your answer did not match the required JSON schema:\n"
                                       f"{listed}\nReply again with only the corrected JSON."}


def parse(text: str) -> Any:
    try:
        return extract_json(text)
    except JSONExtractError:
        return None


def check(text: str, finish_reason: str, schema: Mapping[str, Any]) -> tuple[Any, list[str]]:
    """Parse and validate; the problems say precisely what a repair must fix."""
    try:
        data = extract_json(text)
    except JSONExtractError as exc:
        if finish_reason == "length":
            return None, ["the answer was cut off at the token limit before the JSON was "
                          "complete; answer more briefly"]
        return None, [str(exc)]
    return data, validate(data, schema)


def cause(exc: BaseException) -> str:
    # The root cause names the real problem ("Connection refused"); wrappers only generalise.
    while exc.__cause__ is not None or exc.__context__ is not None:
        exc = exc.__cause__ or exc.__context__  # type: ignore[assignment]
    return f"{type(exc).__name__}: {exc}"


def format_name(name: str) -> str:
    # OpenAI requires ^[a-zA-Z0-9_-]{1,64}$ for the schema name.
    cleaned = "".join(c if c.isalnum() or c in "_-" else "_" for c in name)[:64]
    return cleaned or "output"


def request_body(model: str, messages: list[dict[str, str]], mode: str | None, schema: Mapping[str, Any] | None,
                 schema_name: str, max_tokens: int | None, temperature: float | None) -> dict[str, Any]:
    """The chat-completions body of one call, as plain JSON values (sent as built, never transformed)."""
    body: dict[str, Any] = {"model": model, "messages": messages}
    if max_tokens:
        body["max_tokens"] = max_tokens
    if temperature is not None:
        body["temperature"] = temperature
    plain = dict(schema or {})
    if mode == "json_schema":
        body["response_format"] = {"type": "json_schema", "json_schema": {
            "name": format_name(schema_name), "schema": plain, "strict": strict_compatible(plain)}}
    elif mode == "json_object":
        # OpenAI ignores the extra "schema" key; llama.cpp turns it into a grammar.
        body["response_format"] = {"type": "json_object", "schema": plain}
    return body


def encode_streamed(body: Mapping[str, Any], usage: bool) -> bytes:
    """The body as the JSON bytes of a streamed request (with the usage chunk asked for when `usage`)."""
    extra: dict[str, Any] = {"stream": True}
    if usage:
        extra["stream_options"] = {"include_usage": True}
    return msgspec.json.encode({**body, **extra})
