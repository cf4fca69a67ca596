"""CPU per round with tracing off and on, in one run.

    python bench/tracing.py [--repeats 3] [--rounds 30]

The round of bench/round_overhead.py (a plan, five tasks in parallel, a final answer: seven model
calls to bench/model_stub.py answering at once, over real HTTP), on SQLite, with tracing off and
on alternately (off on off on ...). On: the SDK's batch processor exporting over OTLP/HTTP to a
receiver in another process (it answers 200 to every POST), as a served process with
OTEL_EXPORTER_OTLP_ENDPOINT set does; the export thread's CPU is this process's and counted.
Prints the median CPU ms per round of each, and their ratio (target: on < 1.1x off).

A shared machine's noise is larger than tracing's cost (off alone moved 27-44 ms per round in one
run), so it also prints tracing's own CPU per round, measured apart: the same spans a 5-task round
makes (round, files, plan, five tasks, seven model calls through the traced client, final), 500
rounds, flushed to the receiver, and what that adds to the off figure.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path

import round_overhead
import uvloop

from agents.model import ModelRequest, ModelResponse, Usage
from app.llm.client import OpenAIModel
from app.rounds import tracing

RECEIVER = """
import sys
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
class R(BaseHTTPRequestHandler):
    def do_POST(self):
        self.rfile.read(int(self.headers["Content-Length"]))
        self.send_response(200); self.send_header("Content-Length", "0"); self.end_headers()
    def log_message(self, *a): pass
s = ThreadingHTTPServer(("127.0.0.1", 0), R)
print(s.server_port, flush=True)
s.serve_forever()
"""


def traced_client(*args: object, **kwargs: object) -> object:
    """The model client as create_app wires it: a span per call while tracing is on."""
    return tracing.traced(OpenAIModel(*args, **kwargs))


async def cpu_per_round(base_url: str, data_dir: Path, rounds: int) -> float:
    async with round_overhead.foreman(base_url, data_dir, "") as (run, _counts):
        for i in range(round_overhead.WARM_ROUNDS):
            await run(f"warm up {i}")
        cpu = time.process_time()
        for i in range(rounds):
            await run(f"round {i}")
        return (time.process_time() - cpu) * 1000 / rounds


class Instant:
    name, offline, context_tokens = "stub", False, None

    def model_for(self, agent: str | None) -> str:
        return self.name

    async def complete(self, request: ModelRequest) -> ModelResponse:
        return ModelResponse(text="ok", usage=Usage(120, 30), model="stub")


async def spans_only(rounds: int) -> float:
    """CPU ms per round of tracing alone: a 5-task round's spans, exported."""
    model, request = tracing.traced(Instant()), ModelRequest(purpose="task", messages=[{"role": "user", "content": "x"}])
    cpu = time.process_time()
    for n in range(rounds):
        wid = f"bench-{n}"
        with tracing.round_span(wid, 1):
            with tracing.span("foreman.read_files"):
                pass
            with tracing.span("foreman.plan"):
                await model.complete(request)
            for i in range(5):
                with tracing.task_span("analyst", f"t{i}"):
                    await model.complete(request)
            with tracing.span("foreman.final_answer"):
                await model.complete(request)
            tracing.outcome(wid, 1, "completed")
        if n % 50 == 49:  # a loop this fast outruns the batch queue (2,048 spans): dropped spans cost nothing
            tracing.flush()
    tracing.shutdown()  # exports what is pending: its CPU counts
    return (time.process_time() - cpu) * 1000 / rounds


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--rounds", type=int, default=30)
    args = parser.parse_args()
    round_overhead.OpenAIModel = traced_client
    receiver = subprocess.Popen([sys.executable, "-c", RECEIVER], stdout=subprocess.PIPE, text=True)
    assert receiver.stdout is not None
    os.environ["OTEL_EXPORTER_OTLP_ENDPOINT"] = f"http://127.0.0.1:{int(receiver.stdout.readline())}"
    figures: dict[bool, list[float]] = {False: [], True: []}
    try:
        with tempfile.TemporaryDirectory() as tmp, round_overhead.stub(0.0) as base_url:
            for _ in range(args.repeats):
                for on in (False, True):  # interleaved
                    if on:
                        tracing.configure(os.environ)  # the exporter reads the endpoint from the environment
                    try:
                        data_dir = Path(tmp) / uuid.uuid4().hex[:8]
                        figures[on].append(uvloop.run(cpu_per_round(base_url, data_dir, args.rounds)))
                    finally:
                        tracing.shutdown()
        disabled = asyncio.run(spans_only(500))  # tracing off: what the instrumentation points cost
        tracing.configure(os.environ)
        alone = asyncio.run(spans_only(500))
    finally:
        receiver.terminate()
        receiver.wait(10)
    off, traced = statistics.median(figures[False]), statistics.median(figures[True])
    print("CPU ms/round, each repeat: off " + ", ".join(f"{v:.1f}" for v in figures[False])
          + "; on " + ", ".join(f"{v:.1f}" for v in figures[True]))
    print(f"5-task round, instant model, SQLite: CPU per round tracing off {off:.1f} ms, on {traced:.1f} ms: "
          f"{traced / off:.2f}x (target < 1.1x)")
    print(f"tracing's own CPU per round, measured apart: {alone:.2f} ms; off + that: {(off + alone) / off:.2f}x")
    print(f"the same span calls with tracing off (with the instant model's calls): {disabled:.3f} ms per round, "
          f"{disabled / off * 100:.2f}% of a round's CPU")


if __name__ == "__main__":
    main()
