"""A small MCP server over streamable HTTP for the tests: `python -m tests.mcp_servers.files_http PORT`.

`make_csv` returns its table as an embedded resource (a file); `shout` returns text and
structured content. Calls are noted in `MCP_TEST_LOG` like `calc_stdio`'s.
"""

from __future__ import annotations

import base64
import json
import os
import sys

from mcp.server.mcpserver import MCPServer
from mcp_types import BlobResourceContents, EmbeddedResource, TextContent, ToolAnnotations

server = MCPServer("files")
READ_ONLY = ToolAnnotations(read_only_hint=True)


def note(tool: str, **fields: object) -> None:
    path = os.environ.get("MCP_TEST_LOG")
    if path:
        with open(path, "a", encoding="utf-8") as log:
            log.write(json.dumps({"server": "files", "tool": tool, **fields}) + "\n")


@server.tool(annotations=READ_ONLY)
def make_csv(title: str, rows: int) -> list[TextContent | EmbeddedResource]:
    """Make a CSV table of `rows` numbered rows under a title, returned as a file."""
    note("make_csv", title=title, rows=rows)
    data = "n,square\n" + "".join(f"{n},{n * n}\n" for n in range(1, rows + 1))
    blob = BlobResourceContents(uri=f"file:///{title}.csv", mime_type="text/csv",
                                blob=base64.b64encode(data.encode()).decode())
    return [TextContent(type="text", text=f"{title}: {rows} rows."), EmbeddedResource(type="resource", resource=blob)]


@server.tool(annotations=READ_ONLY)
def shout(text: str) -> dict[str, str]:
    """Say the text in capitals."""
    note("shout", text=text)
    return {"shouted": text.upper()}


if __name__ == "__main__":
    server.run("streamable-http", host="127.0.0.1", port=int(sys.argv[1]))
