"""Tool calls on the chat-completions wire: the request's `tools` and `tool_choice`, the calls a
streamed answer makes (`delta.tool_calls` pieces, assembled by index), and the calls a model writes
into its text when its server renders the tools into the prompt but does not parse the call back.

That last case is llama-cpp-python's server with a model's own chat template (Qwen2.5's, Hermes'):
the template tells the model to answer `<tool_call>{"name": ..., "arguments": {...}}</tool_call>`,
and the server, under `tool_choice: "auto"`, sends that back as content; for Qwen2.5 the tags are
special tokens the server leaves out, so the content is the bare object (seen 2026-11-26 with
Qwen2.5-Coder-0.5B, at times without its last brace). vLLM and llama.cpp's own server parse it into
`tool_calls` themselves; the text form is read only when no parsed call came, only for a tool the
request offered, and a bare object only when it is the whole answer. A small model also names a
tool it made up ("get_fiscal_year_revenue", with `ask_user`'s arguments): when one tool was offered
and the arguments are valid for it, the call is that tool's (a repair of an invalid name).

That server also repeats a forced call's name in every streamed piece, where OpenAI names it in the
first: a call's name is the first one its pieces give. A server that refuses `tools` outright (vLLM without
`--enable-auto-tool-choice` answers 400) is asked again without them (`rejects_tools`): the model
then answers without the choice to call.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping
from typing import Any

import jiter

from agents.model import Tool, ToolCall
from app.llm.jsonschema import validate

_TEXT_CALL = re.compile(r"<tool_call>\s*(\{.*?\})\s*(?:</tool_call>|$)", re.DOTALL)
_BARE = re.compile(r"^```(?:json)?\s*|\s*```$")  # a fence around a bare call
_REJECTION = re.compile(r"\btool[_ ]?(?:choice|call|s)?\b", re.IGNORECASE)


class ToolsRejectedError(Exception):
    """The model server refused the request's `tools`."""


def tools_body(tools: Iterable[Tool], choice: str) -> dict[str, Any]:
    """The `tools` and `tool_choice` fields of a request offering `tools`."""
    offered = [{"type": "function", "function": {"name": t.name, "description": t.description,
                                                  "parameters": dict(t.parameters)}} for t in tools]
    if not offered:
        return {}
    wire: Any = choice if choice in ("auto", "required", "none") else \
        {"type": "function", "function": {"name": choice}}
    return {"tools": offered, "tool_choice": wire}


def rejects_tools(status: int, detail: str) -> bool:
    """Whether an error answer refuses the request's tools (not something else about it)."""
    return status in (400, 422, 500, 501) and bool(_REJECTION.search(detail))


class CallPieces:
    """The tool calls of one streamed answer, from the pieces its chunks carry."""

    def __init__(self) -> None:
        self._calls: dict[int, dict[str, str]] = {}

    def feed(self, deltas: Iterable[Mapping[str, Any]]) -> None:
        """Add one chunk's `delta.tool_calls`: the first piece of a call names it, the rest add arguments."""
        for position, delta in enumerate(deltas):
            index = delta.get("index")
            call = self._calls.setdefault(index if isinstance(index, int) else position,
                                          {"id": "", "name": "", "arguments": ""})
            function = delta.get("function") or {}
            call["id"] = call["id"] or str(delta.get("id") or "")
            call["name"] = call["name"] or str(function.get("name") or "")
            call["arguments"] += str(function.get("arguments") or "")

    def calls(self) -> list[ToolCall]:
        """The calls made, in index order (a call whose arguments are not a JSON object gets none)."""
        return [ToolCall(c["name"], _arguments(c["arguments"]), c["id"])
                for _, c in sorted(self._calls.items()) if c["name"]]


def calls_in_text(text: str, offered: Iterable[Tool]) -> list[ToolCall]:
    """The calls a model wrote as text, for tools the request offered: `<tool_call>` blocks, or an
    answer that is nothing but one call's object."""
    tools = {t.name: t for t in offered}
    blocks = _TEXT_CALL.findall(text) or [_BARE.sub("", text.strip())]
    found = []
    for block in blocks:
        data = _object(block)
        raw = data.get("arguments", data.get("parameters"))
        if not isinstance(data.get("name"), str) or not isinstance(raw, (dict, str)):
            continue
        name, arguments = data["name"], _arguments(raw)
        if name not in tools and len(tools) == 1:
            only = next(iter(tools.values()))
            name = only.name if arguments and not validate(arguments, only.parameters) else name
        if name in tools:
            found.append(ToolCall(name, arguments))
    return found


def without_calls(text: str) -> str:
    """`text` without the calls written into it (nothing, when the answer was one bare call)."""
    return _TEXT_CALL.sub("", text).strip() if _TEXT_CALL.search(text) else ""


def _object(text: str) -> dict[str, Any]:
    """The JSON object `text` is, or begins to be (a small model may leave out its last braces)."""
    if not text.startswith("{"):
        return {}
    try:
        data = jiter.from_json(text.encode(), partial_mode="trailing-strings")
    except ValueError:
        return {}
    return data if isinstance(data, dict) else {}


def _arguments(raw: Any) -> dict[str, Any]:
    if isinstance(raw, str):
        try:
            raw = json.loads(raw) if raw.strip() else {}
        except ValueError:
            return {}
    return dict(raw) if isinstance(raw, Mapping) else {}
