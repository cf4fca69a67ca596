"""Tool calls on the chat-completions wire: the request's `tools` and `tool_choice`, the calls a
streamed answer makes (`delta.tool_calls` pieces, assembled by index), and the calls a model writes
into its text when its server renders the tools into the prompt but does not parse the call back.

That last case is llama-cpp-python's server with a model's own chat template (Qwen2.5's, Hermes'):
the template tells the model to answer `<tool_call>{"name": ..., "arguments": {...}}</tool_call>`,
and the server, under `tool_choice: "auto"`, sends that back as content. vLLM and llama.cpp's own
server parse it into `tool_calls` themselves; the text form is read only when no parsed call came,
only for a tool the request offered. A server that refuses `tools` outright (vLLM without
`--enable-auto-tool-choice` answers 400) is asked again without them (`rejects_tools`): the model
then answers without the choice to call.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping
from typing import Any

from agents.model import Tool, ToolCall

_TEXT_CALL = re.compile(r"<tool_call>\s*(\{.*?\})\s*(?:</tool_call>|$)", re.DOTALL)
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
            call["name"] += str(function.get("name") or "")
            call["arguments"] += str(function.get("arguments") or "")

    def calls(self) -> list[ToolCall]:
        """The calls made, in index order (a call whose arguments are not a JSON object gets none)."""
        return [ToolCall(c["name"], _arguments(c["arguments"]), c["id"])
                for _, c in sorted(self._calls.items()) if c["name"]]


def calls_in_text(text: str, offered: Iterable[Tool]) -> list[ToolCall]:
    """The `<tool_call>` blocks a model wrote as text, for tools the request offered."""
    names = {t.name for t in offered}
    found = []
    for block in _TEXT_CALL.findall(text):
        try:
            data = json.loads(block)
        except ValueError:
            continue
        if isinstance(data, dict) and data.get("name") in names:
            found.append(ToolCall(str(data["name"]), _arguments(data.get("arguments") or data.get("parameters"))))
    return found


def without_calls(text: str) -> str:
    """`text` without the `<tool_call>` blocks written into it."""
    return _TEXT_CALL.sub("", text).strip()


def _arguments(raw: Any) -> dict[str, Any]:
    if isinstance(raw, str):
        try:
            raw = json.loads(raw) if raw.strip() else {}
        except ValueError:
            return {}
    return dict(raw) if isinstance(raw, Mapping) else {}
