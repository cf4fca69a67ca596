"""Real MCP servers for the tests of MCP tools as agents (`calc_stdio` over stdio, `files_http` over
streamable HTTP), and how a test starts and reads them."""

from __future__ import annotations

import json
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]


def noted(log: Path) -> list[dict[str, Any]]:
    """What the servers noted in `log`, in order, with the noting process's "pid" where it gives one."""
    if not log.exists():
        return []
    return [json.loads(line) for line in log.read_text().splitlines() if line.strip()]


def calls(log: Path) -> list[dict[str, Any]]:
    """The calls the servers noted in `log`, in order (without the process's pid)."""
    return [{k: v for k, v in call.items() if k != "pid"} for call in noted(log)]


def stdio_entry(log: Path, name: str = "calc", **extra: Any) -> dict[str, Any]:
    """The MCP_SERVERS entry of the stdio server."""
    return {"name": name, "transport": "stdio", "command": sys.executable,
            "args": ["-m", "tests.mcp_servers.calc_stdio"], "cwd": str(ROOT), "env": {"MCP_TEST_LOG": str(log)},
            **extra}


@contextmanager
def http_server(port: int, log: Path) -> Iterator[str]:
    """`files_http` on 127.0.0.1:`port` in a process of its own: its URL once it listens."""
    out = open(log.with_suffix(".out"), "ab")
    process = subprocess.Popen([sys.executable, "-m", "tests.mcp_servers.files_http", str(port)], cwd=ROOT,
                               env={"MCP_TEST_LOG": str(log), "PATH": "/usr/bin:/bin"}, stdout=out,
                               stderr=subprocess.STDOUT)
    try:
        deadline = time.monotonic() + 60
        while True:
            assert process.poll() is None, f"the HTTP MCP server exited; see {log.with_suffix('.out')}"
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                break
            except OSError:
                if time.monotonic() > deadline:
                    raise AssertionError("the HTTP MCP server did not listen within 60 s") from None
                time.sleep(0.05)
        yield f"http://127.0.0.1:{port}/mcp"
    finally:
        process.terminate()
        try:
            process.wait(10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(10)
        out.close()
