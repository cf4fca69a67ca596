"""An OpenAI-compatible chat-completions stub for benchmarks: one asyncio server, real HTTP.

    python bench/model_stub.py [--delay 0.2] [--tasks 5]

Prints its port on the first line of stdout, then serves until killed. Every answer streams (SSE)
after `--delay` seconds: a request with a `response_format` gets a plan of `--tasks` independent
analyst tasks (what Foreman's planner asks for), any other request a short text. It runs in its
own process, so its CPU is never counted as the client's, and one event loop serves every
connection (keep-alive), as a real provider's front end would, not a thread per request.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys


def plan(tasks: int) -> dict:
    return {"userLanguage": "en", "objUserResponse": "On it.",
            "objWorkplan": [{"id": f"t{i}", "agent": "analyst", "instructions": f"Check point {i}.", "inputs": [],
                             "outputs": [], "dependsOn": []} for i in range(1, tasks + 1)],
            "objFinalDocuments": []}


def sse(text: str) -> bytes:
    chunks = [
        {"id": "c", "object": "chat.completion.chunk", "created": 0, "model": "stub",
         "choices": [{"index": 0, "delta": {"role": "assistant", "content": text}, "finish_reason": None}]},
        {"id": "c", "object": "chat.completion.chunk", "created": 0, "model": "stub",
         "choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]},
        {"id": "c", "object": "chat.completion.chunk", "created": 0, "model": "stub", "choices": [],
         "usage": {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15}},
    ]
    return b"".join(b"data: " + json.dumps(c).encode() + b"\n\n" for c in chunks) + b"data: [DONE]\n\n"


async def serve(reader: asyncio.StreamReader, writer: asyncio.StreamWriter, delay: float, answers: dict) -> None:
    try:
        while True:
            head = await reader.readuntil(b"\r\n\r\n")
            length = 0
            for line in head.split(b"\r\n"):
                if line.lower().startswith(b"content-length:"):
                    length = int(line.split(b":", 1)[1])
            body = await reader.readexactly(length)
            if delay:
                await asyncio.sleep(delay)  # the provider's latency
            payload = answers["plan"] if b'"response_format"' in body else answers["text"]
            writer.write(b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ncontent-length: "
                         + str(len(payload)).encode() + b"\r\n\r\n" + payload)
            await writer.drain()
    except (asyncio.IncompleteReadError, ConnectionError):
        pass
    finally:
        writer.close()


async def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--delay", type=float, default=0.0)
    parser.add_argument("--tasks", type=int, default=5)
    args = parser.parse_args()
    answers = {"plan": sse(json.dumps(plan(args.tasks))), "text": sse("Checked.")}
    server = await asyncio.start_server(lambda r, w: serve(r, w, args.delay, answers), "127.0.0.1", 0, backlog=1024)
    print(server.sockets[0].getsockname()[1], flush=True)
    async with server:
        await server.serve_forever()


if __name__ == "__main__":
    try:
        asyncio.run(main())
    except KeyboardInterrupt:
        sys.exit(0)
