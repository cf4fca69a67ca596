"""MCP servers' tools as agents, through the `mcp` SDK's client.

Each configured server (`MCP_SERVERS`) is one `Connection`: a stdio server's process is started
once per process and started again for the next call after it died (the call under way fails,
never repeated); a streamable-HTTP server's session is shared by every call. Every call has a
timeout, and a cancelled call (a stop) is cancelled at the server too: the SDK sends the MCP
cancellation notification when the awaiting task is cancelled. `discover` lists each server's
tools at start; a server that is down is logged and left out, never fatal.
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import logging
import mimetypes
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import httpx2
from mcp import Client, StdioServerParameters
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.exceptions import MCPError
from mcp_types import CONNECTION_CLOSED, REQUEST_TIMEOUT

from agents.base import OutputFile
from agents.tools.agent import ToolAgent, ToolCaller, ToolError, ToolOutput

log = logging.getLogger("foreman.tools")

CLOSE_SECONDS = 5.0  # for a server's session to end at shutdown


@dataclass(frozen=True)
class ServerSpec:
    """One entry of MCP_SERVERS (see docs/configuration.md)."""

    name: str
    transport: str  # "stdio" or "streamable-http"
    command: str = ""
    args: Sequence[str] = ()
    env: Mapping[str, str] = field(default_factory=dict, repr=False)  # may carry secrets, as headers may
    cwd: str = ""
    url: str = ""
    headers: Mapping[str, str] = field(default_factory=dict, repr=False)
    allow: Sequence[str] | None = None  # tool names; None: every tool
    # Tools needing the user's approval per call: a list, or true (all) / false (none); None: every tool
    # the server does not mark read-only.
    approve: Sequence[str] | bool | None = None


class Connection:
    """One MCP server's session: opened on first use, opened again after it broke."""

    def __init__(self, spec: ServerSpec, timeout: float, max_result_bytes: int = 10_000_000) -> None:
        self.spec = spec
        self.timeout = timeout
        self.max_result_bytes = max_result_bytes
        self._client: Client | None = None
        self._owner: asyncio.Task[None] | None = None
        self._ending: set[asyncio.Future[None]] = set()  # sessions reset, still closing
        self._closing = asyncio.Event()
        self._lock = asyncio.Lock()

    async def session(self) -> Client:
        """The open session, opening it (within the timeout) when there is none."""
        async with self._lock:
            if self._client is None or self._owner is None or self._owner.done():
                await self._open()
            assert self._client is not None
            return self._client

    async def _open(self) -> None:
        ready: asyncio.Future[Client] = asyncio.get_running_loop().create_future()
        self._closing = asyncio.Event()
        # The session lives in a task of its own: the SDK's client must be left in the task that entered it.
        self._owner = asyncio.ensure_future(self._hold(ready, self._closing))
        try:
            async with asyncio.timeout(self.timeout):
                self._client = await asyncio.shield(ready)
        except BaseException:
            self._closing.set()
            self._owner.cancel()
            raise

    async def _hold(self, ready: asyncio.Future[Client], closing: asyncio.Event) -> None:
        try:
            async with contextlib.AsyncExitStack() as stack:
                target: Any
                if self.spec.transport == "stdio":
                    target = StdioServerParameters(command=self.spec.command, args=list(self.spec.args),
                                                   env=dict(self.spec.env) or None, cwd=self.spec.cwd or None)
                else:
                    http = await stack.enter_async_context(httpx2.AsyncClient(
                        headers=dict(self.spec.headers), timeout=httpx2.Timeout(self.timeout, read=None)))
                    target = streamable_http_client(self.spec.url, http_client=http)
                client = await stack.enter_async_context(Client(target, read_timeout_seconds=self.timeout))
                if not ready.done():
                    ready.set_result(client)
                await closing.wait()
        except BaseException as exc:  # noqa: BLE001 - the opener or the log says what went wrong
            if not ready.done():
                ready.set_exception(exc if isinstance(exc, Exception) else ConnectionError(str(exc)))
            elif not isinstance(exc, asyncio.CancelledError):
                log.info("The session with the MCP server '%s' ended: %s", self.spec.name, _why(exc))
        finally:
            if self._closing is closing:  # not a newer session's
                self._client = None

    def reset(self) -> None:
        """Forget a session that broke: the next call opens a new one (a stdio server is started again).
        The old one ends in the background; `close` waits for it (its server process is reaped)."""
        self._client = None
        self._closing.set()
        if self._owner is not None and not self._owner.done():
            self._ending.add(self._owner)
            self._owner.add_done_callback(self._ending.discard)

    async def close(self) -> None:
        self._closing.set()
        owners = [owner for owner in (*self._ending, self._owner) if owner is not None and not owner.done()]
        if not owners:
            return
        try:
            async with asyncio.timeout(CLOSE_SECONDS):
                await asyncio.shield(asyncio.gather(*owners, return_exceptions=True))
        except TimeoutError:  # shutting down: a stuck session is cancelled
            for owner in owners:
                owner.cancel()

    async def list_tools(self) -> list[Any]:
        client = await self.session()
        return list((await client.list_tools()).tools)

    async def call(self, tool: str, arguments: dict[str, Any]) -> ToolOutput:
        """One call of `tool`; `ToolError` with a sentence when it fails. A cancellation propagates (the
        SDK tells the server)."""
        name = f"{self.spec.name}.{tool}"
        try:
            client = await self.session()
        except Exception as exc:
            raise ToolError(f"the MCP server '{self.spec.name}' cannot be reached ({_why(exc)}); "
                            f"{name} was not called") from None
        try:
            result = await client.call_tool(tool, arguments, read_timeout_seconds=self.timeout)
        except MCPError as exc:
            if exc.code == CONNECTION_CLOSED:
                self.reset()
                raise ToolError(f"the MCP server '{self.spec.name}' closed the connection during the call of {name} "
                                "(it may have stopped); the call is not repeated") from None
            if exc.code == REQUEST_TIMEOUT:
                # The server may still be writing its answer (50 MB once): a session left so timed out every
                # later call; the next call gets a new one (a stdio server's process is started again).
                self.reset()
                raise ToolError(f"{name} did not answer within MCP_TIMEOUT_SECONDS ({self.timeout:g} s); "
                                "the call was cancelled") from None
            raise ToolError(f"the MCP server '{self.spec.name}' refused the call of {name}: {exc}") from None
        except Exception as exc:
            self.reset()
            raise ToolError(f"the call of {name} failed: {_why(exc)}") from None
        size = result_bytes(result)
        if self.max_result_bytes and size > self.max_result_bytes:
            self.reset()  # a server that answers so much is started afresh for the next call
            raise ToolError(f"{name} answered {size:,} bytes, more than MCP_MAX_RESULT_BYTES "
                            f"({self.max_result_bytes:,}); its answer was dropped") from None
        return output_of(result, tool)


class McpTools:
    """The configured servers' connections, and the agents their tools became."""

    def __init__(self, specs: Sequence[ServerSpec], timeout: float, max_result_bytes: int = 10_000_000) -> None:
        self.connections = [Connection(spec, timeout, max_result_bytes) for spec in specs]
        self.agents: list[ToolAgent] = []

    @classmethod
    def configured(cls, servers: Sequence[Mapping[str, Any]], timeout: float, max_result_bytes: int) -> McpTools:
        """The connections to MCP_SERVERS' entries as the settings hold them (each a `ServerSpec`'s fields)."""
        return cls([ServerSpec(**server) for server in servers], timeout, max_result_bytes)

    async def discover(self, traced: Callable[[ToolCaller, str], ToolCaller] | None = None) -> list[ToolAgent]:
        """List every server's allowed tools as agents; a server that is down is logged and left out. `traced`
        wraps each one's caller, given its server's name (the service's tracing)."""
        found = await asyncio.gather(*(self._tools_of(c) for c in self.connections))
        self.agents = [agent for agents in found for agent in agents]
        if traced is not None:
            for agent in self.agents:
                agent.caller = traced(agent.caller, agent.server)
        return self.agents

    async def _tools_of(self, connection: Connection) -> list[ToolAgent]:
        spec = connection.spec
        try:
            async with asyncio.timeout(connection.timeout):
                tools = await connection.list_tools()
        except Exception as exc:  # noqa: BLE001 - a server that is down must not keep the service from starting
            log.warning("The MCP server '%s' is not available (%s): its tools are not offered to the planner.",
                        spec.name, _why(exc))
            connection.reset()
            return []
        agents = []
        for tool in tools:
            if spec.allow is not None and tool.name not in spec.allow:
                continue
            read_only = bool(tool.annotations and tool.annotations.read_only_hint)
            approve = (not read_only if spec.approve is None else spec.approve if isinstance(spec.approve, bool)
                       else tool.name in spec.approve)
            agents.append(ToolAgent(server=spec.name, tool=tool.name, summary=tool.description or "",
                                    input_schema=dict(tool.input_schema or {}), caller=connection,
                                    needs_approval=approve))
        log.info("The MCP server '%s' offers %d tool(s): %s", spec.name, len(agents),
                 ", ".join(a.tool for a in agents) or "none")
        return agents

    async def close(self) -> None:
        await asyncio.gather(*(c.close() for c in self.connections))


def result_bytes(result: Any) -> int:
    """About how many bytes a CallToolResult carries: its texts, its files (as base64) and its structured content."""
    size = len(repr(result.structured_content)) if result.structured_content is not None else 0
    for item in result.content or []:
        res = getattr(item, "resource", None)
        for value in (getattr(item, "text", None), getattr(item, "data", None), getattr(res, "blob", None),
                      getattr(res, "text", None)):
            size += len(value) if isinstance(value, str) else 0
    return size


def output_of(result: Any, tool: str) -> ToolOutput:
    """A CallToolResult as the task's output: its text, its structured content, its files."""
    texts: list[str] = []
    files: list[OutputFile] = []
    for item in result.content or []:
        kind = getattr(item, "type", "")
        if kind == "text":
            texts.append(item.text)
        elif kind in ("image", "audio"):
            files.append(_file(f"{tool}-{kind}", item.mime_type, base64.b64decode(item.data), files))
        elif kind == "resource":
            res = item.resource
            mime = res.mime_type or "application/octet-stream"
            data = base64.b64decode(res.blob) if hasattr(res, "blob") else res.text.encode()
            files.append(_file(_stem(str(res.uri)) or f"{tool}-resource", mime, data, files))
        elif kind == "resource_link":
            texts.append(f"[{item.name}]({item.uri})")
    structured = result.structured_content
    return ToolOutput(text="\n\n".join(texts), files=files, structured=structured, error=bool(result.is_error))


def _stem(uri: str) -> str:
    last = uri.rstrip("/").rsplit("/", 1)[-1]
    return re.sub(r"[^\w.-]+", "_", last)[:100].strip("._")


def _file(name: str, mime: str, data: bytes, taken: list[OutputFile]) -> OutputFile:
    stem, dot, ext = name.rpartition(".")
    if not dot:
        stem, ext = name, (mimetypes.guess_extension(mime or "") or ".bin").lstrip(".")
    name, number = f"{stem}.{ext}", 1
    while any(f.name == name for f in taken):
        number += 1
        name = f"{stem}-{number}.{ext}"
    return OutputFile(name=name, mime=mime or "application/octet-stream", data=data)


def _why(exc: BaseException) -> str:
    if isinstance(exc, BaseExceptionGroup) and exc.exceptions:
        return _why(exc.exceptions[0])
    return str(exc) or type(exc).__name__
