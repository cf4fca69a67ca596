"""One streamed answer as its events arrive (the decoded server-sent events of `app.llm.post`): its text,
tool calls, finish reason and token counts, whatever sends it. Chunks are read as the decoded dicts (no
model objects built per chunk); an error the server sends as an event is raised as the call's failure."""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from agents.model import ModelError, ToolCall, Usage
from app.llm.retries import TransientError, is_transient
from app.llm.streaming import Streamer
from app.llm.tools import CallPieces, calls_in_text, without_calls

DRAIN_SECONDS = 0.1  # for the rest of a body after `[DONE]`


@dataclass
class Answer:
    """What one attempt answered."""

    text: str
    finish_reason: str
    tool_calls: tuple[ToolCall, ...] = ()


@dataclass
class Spent:
    """The running cost of one `complete()`, kept even when it ends in an error."""

    usage: Usage = Usage()


class AnswerStream:
    """The answer one streamed response carries, as far as it arrived (`read`), then complete (`end`)."""

    def __init__(self, streamer: Streamer | None, plain: Callable[[str], str]) -> None:
        self.streamer = streamer  # fed the content as it comes
        self.plain = plain  # an error's text without the server's address
        self.parts: list[str] = []
        self.pieces = CallPieces()
        self.calls: list[ToolCall] = []
        self.finish = ""
        self.tokens: tuple[int, int] | None = None  # (prompt, completion), when the server counted them

    @property
    def text(self) -> str:
        return "".join(self.parts)

    async def read(self, events: Any) -> None:
        """Read the response's events up to `[DONE]` (and the end of its body)."""
        async for event in events:
            if event.data.startswith("[DONE]"):
                await _read_to_end(events)
                break
            chunk = _chunk(event.data)
            if chunk.get("error"):
                raise self._stream_error(chunk["error"])
            usage = chunk.get("usage")
            if usage:
                self.tokens = (usage.get("prompt_tokens") or 0, usage.get("completion_tokens") or 0)
            for choice in chunk.get("choices") or ():
                delta = choice.get("delta") or {}
                if delta.get("tool_calls"):
                    self.pieces.feed(delta["tool_calls"])
                content = delta.get("content")
                if content:
                    self.parts.append(content)
                    if self.streamer is not None:
                        self.streamer.feed(content)
                self.finish = choice.get("finish_reason") or self.finish

    def end(self, body: Mapping[str, Any], request_tools: Any) -> None:
        """The stream is over: a cut one fails the attempt; the tool calls are the streamed ones, or those
        a model wrote as text for tools the request offered (which are then not the answer's text)."""
        if not self.finish:
            # OpenAI ends every choice with a finish_reason; a stream without one was cut
            # (llama-cpp-python ends a stream that way when a newer request interrupts it).
            raise TransientError("the response has no message" if not self.parts else
                                 "the answer stream ended before the answer was complete")
        self.calls = self.pieces.calls()
        if not self.calls and "tools" in body and (calls := calls_in_text(self.text, request_tools)):
            self.calls = calls
            self.parts = [without_calls(self.text)]  # the calls are not the answer's text
            if self.streamer is not None:
                self.streamer.retract()

    def said(self) -> str:
        """Everything the model wrote: its text and its calls' arguments (to count, when the server did not)."""
        return self.text + "".join(json.dumps(dict(c.arguments)) for c in self.calls)

    def answer(self) -> Answer:
        return Answer(self.text, self.finish, tuple(self.calls))

    def _stream_error(self, error: Any) -> Exception:
        """An error the server sent as an event of its answer (vLLM does, for one)."""
        detail = error.get("message") if isinstance(error, Mapping) else error
        code = error.get("code") if isinstance(error, Mapping) else None
        text = f"The model server reported an error while answering: {self.plain(str(detail))}"
        return TransientError(text) if isinstance(code, int) and is_transient(code) else ModelError(text)


async def _read_to_end(events: Any) -> None:
    """Read what follows `[DONE]`: normally nothing but the end of the body, which puts the
    connection back in the pool and lets the decoder's generators finish; a server that keeps
    the body open gets `DRAIN_SECONDS`, as the SDK gives it, and the connection is closed."""
    with contextlib.suppress(TimeoutError):
        async with asyncio.timeout(DRAIN_SECONDS):
            async for _ in events:
                pass


def _chunk(data: str) -> dict[str, Any]:
    try:
        chunk = json.loads(data)
    except ValueError:
        chunk = None
    if not isinstance(chunk, dict):
        raise ModelError(f"The model server sent an answer event that is not a JSON object: {data[:100]!r}")
    return chunk
