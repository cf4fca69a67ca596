"""How soon a stop ends the generation on a real llama.cpp server (llama-cpp-python), in one run.

    .venv/bin/python bench/stop_generation.py [--runs N]

Serves Qwen2.5-Coder-0.5B-Instruct (installed by .ci/install-realmodel.sh) with
`--interrupt_requests false`, as the README says, and puts a TCP relay between Foreman and it.
N times: a round starts whose planning call streams a long answer; once a dozen token chunks
have come through, the round is stopped, and the bench measures from the stop request to
(a) Foreman closing the stream (seen by the relay) and (b) the server's model being free again
(llama-cpp-python answers GET /v1/models only once no generation holds the model's lock), and
the server's CPU use in the second before the stop and the second after it was free.

For comparison, in the same run and on the same server, one call made as Foreman made it
before it streamed: the same long request without `stream`, abandoned by its client once the
streamed one would have been stopped. The server goes on generating to `max_tokens`; the time
until its model is free is the "before" figure. Target: (b) within 1 s of the stop.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import threading
import time
from pathlib import Path

import httpx

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
from tests.harness import LiveServer, settings_for, wait_for  # noqa: E402
from tests.realmodel import LlamaServer, qwen_missing, qwen_path  # noqa: E402
from tests.relay import Relay  # noqa: E402

PROMPT = "Write a very long story about a dragon and a baker, with many chapters."
STREAMING_BYTES = 3000  # a dozen token chunks: the model is generating, not reading the prompt
MAX_TOKENS = 682  # what the planner asks of a 4096-token model (a sixth of the window)


def cpu_rate(server: LlamaServer, seconds: float = 1.0) -> float:
    """CPU seconds the server used per second, over the next `seconds`."""
    before = server.cpu_seconds()
    time.sleep(seconds)
    return (server.cpu_seconds() - before) / seconds


def stop_a_round(server: LlamaServer, relay: Relay, client: httpx.Client) -> dict[str, float]:
    """One round stopped while its planning call streams; seconds from the stop to each event."""
    seen = relay.received()
    started = time.monotonic()
    workflow = client.post("/api/workflows/start", json={"prompt": PROMPT, "listFileId": []}).json()["id"]
    stream = wait_for(lambda: relay.streaming(STREAMING_BYTES, since=seen), 900, "tokens to stream")
    generating = cpu_rate(server)
    stopped = time.monotonic()
    assert client.post(f"/api/workflows/{workflow}/stop").status_code == 200
    server.wait_idle(600)
    idle = time.monotonic()
    wait_for(lambda: stream.client_closed or stream.server_closed, 60, "the stream to end")
    if stream.client_closed is None:
        raise SystemExit("the generation ended before the stop: nothing was measured")
    return {"closed": stream.client_closed - stopped, "idle": idle - stopped, "until_stop": stopped - started,
            "cpu_generating": generating, "cpu_after": cpu_rate(server)}


def abandon_unstreamed(server: LlamaServer, after: float) -> float:
    """The same request without streaming, given up by its client after `after` seconds; the
    seconds from giving up until the server's model is free."""
    body = {"model": "qwen", "messages": [{"role": "user", "content": PROMPT}], "max_tokens": MAX_TOKENS,
            "temperature": 0.0}

    def call() -> None:
        try:
            httpx.post(f"{server.base_url}/chat/completions", json=body, timeout=after)
        except httpx.TimeoutException:
            pass  # the client gives up and closes the connection, as a stop did before streaming

    caller = threading.Thread(target=call)
    caller.start()
    caller.join()
    gave_up = time.monotonic()
    server.wait_idle(1800)
    return time.monotonic() - gave_up


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=3, help="rounds to stop")
    args = parser.parse_args()
    reason = qwen_missing()
    if reason:
        raise SystemExit(reason)
    with LlamaServer(qwen_path(), n_ctx=4096) as server, Relay(server.port) as relay, \
            tempfile.TemporaryDirectory(prefix="stop-bench-") as tmp:
        settings = settings_for(Path(tmp), openai_base_url=f"http://127.0.0.1:{relay.port}/v1",
                                llm_model="qwen2.5-coder-0.5b", llm_context_tokens=4096,
                                llm_timeout_seconds=900, llm_max_retries=0, max_round_seconds=1800)
        runs = []
        with LiveServer(settings) as service, service.client() as client:
            client.timeout = 60
            for number in range(1, args.runs + 1):
                run = stop_a_round(server, relay, client)
                runs.append(run)
                print(f"run {number}: stream closed {run['closed']:.2f}s and model free {run['idle']:.2f}s "
                      f"after the stop; server CPU {run['cpu_generating']:.2f} s/s generating, "
                      f"{run['cpu_after']:.2f} s/s after", flush=True)
        wait = statistics.median(r["until_stop"] for r in runs)
        before = abandon_unstreamed(server, wait)
        print(f"unstreamed call given up after {wait:.1f}s: model free {before:.2f}s later", flush=True)
    idle = statistics.median(r["idle"] for r in runs)
    print(f"\nQwen2.5-Coder-0.5B Q4_K_M on llama-cpp-python, --interrupt_requests false, {args.runs} stops")
    print(f"stop -> stream closed by Foreman, median      {statistics.median(r['closed'] for r in runs):8.2f} s")
    print(f"stop -> server's model free, median           {idle:8.2f} s   (target 1 s: {idle / 1.0:.2f} of it)")
    print(f"stop -> model free, worst                     {max(r['idle'] for r in runs):8.2f} s")
    print(f"server CPU after / while generating           "
          f"{statistics.median(r['cpu_after'] for r in runs) / statistics.median(r['cpu_generating'] for r in runs):8.2f}")
    print(f"unstreamed (before): give-up -> model free    {before:8.2f} s")
    print(f"streamed / unstreamed                         {idle / before:8.3f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
