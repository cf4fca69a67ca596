"""Prometheus metrics: what a replica did (rounds, model calls, extraction, takeovers), served at /metrics.

The metric objects live in prometheus_client's default registry, one set per process; each
update is a lock and an addition, made once per round, call or file, never in a loop over
items. HTTP requests are counted by Litestar's Prometheus middleware (prefix `foreman_http`,
by route template, method and status). With PROMETHEUS_MULTIPROC_DIR set (several worker
processes behind one port), /metrics sums every process's files; otherwise it answers for
this process, and Prometheus scrapes each replica.
"""

from __future__ import annotations

import asyncio
import os
import time
from collections.abc import Mapping
from typing import Any

from litestar import Response, get
from litestar.plugins.prometheus import PrometheusConfig
from prometheus_client import (
    CONTENT_TYPE_LATEST,
    REGISTRY,
    CollectorRegistry,
    Counter,
    Gauge,
    Histogram,
    generate_latest,
    multiprocess,
)

from agents.model import ModelError, ModelRequest, ModelResponse

# Rounds take seconds to many minutes; model calls and extraction from milliseconds to minutes.
ROUND_BUCKETS = (0.5, 1, 2.5, 5, 10, 30, 60, 120, 300, 600, 900, 1800)
CALL_BUCKETS = (0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120)
WAIT_BUCKETS = (0.01, 0.1, 0.5, 1, 5, 10, 30, 60, 300, 900)
HTTP_BUCKETS: list[str | float] = [0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 10, 60]

ROUNDS_STARTED = Counter("foreman_rounds_started_total", "Rounds started (a new workflow or a next round).")
ROUNDS_ENDED = Counter("foreman_rounds_ended_total", "Rounds ended, by outcome.", ["outcome"])
ROUND_SECONDS = Histogram("foreman_round_duration_seconds",
                          "Time a round ran in this process, from its slot to its end (a resumed round: "
                          "from its resumption).", buckets=ROUND_BUCKETS)
SLOT_WAIT_SECONDS = Histogram("foreman_round_slot_wait_seconds",
                              "Time a round waited for one of the MAX_CONCURRENT_ROUNDS slots.",
                              buckets=WAIT_BUCKETS)
ROUNDS_RUNNING = Gauge("foreman_rounds_running", "Rounds holding a slot in this process now.",
                       multiprocess_mode="livesum")
MODEL_CALLS = Counter("foreman_model_calls_total", "Model calls, by model and outcome (ok or the error's code).",
                      ["model", "outcome"])
MODEL_SECONDS = Histogram("foreman_model_call_duration_seconds", "Time of one model call, retries included.",
                          ["model"], buckets=CALL_BUCKETS)
MODEL_TOKENS_IN = Counter("foreman_model_input_tokens_total", "Prompt tokens sent to the model.", ["model"])
MODEL_TOKENS_OUT = Counter("foreman_model_output_tokens_total", "Completion tokens the model answered.", ["model"])
MODEL_RETRIES = Counter("foreman_model_retries_total", "Attempts of model calls beyond each call's first.",
                        ["model"])
EXTRACTION_SECONDS = Histogram("foreman_extraction_duration_seconds",
                               "Time to read one file, by MIME type and outcome (the extraction status, or "
                               "'cached').", ["mime", "outcome"], buckets=CALL_BUCKETS)
TAKEOVERS = Counter("foreman_takeovers_total", "Rounds of a silent replica this replica took over.")
HEARTBEAT_AGE = Gauge("foreman_replica_heartbeat_age_seconds",
                      "Seconds since each other replica's last heartbeat, as this replica last saw it.",
                      ["executor"], multiprocess_mode="max")

OUTCOMES = ("completed", "failed", "stopped")
_replicas: set[str] = set()  # the executors HEARTBEAT_AGE has a series for


def record_transition(before: str | None, after: str, event: str) -> None:
    """Count a round's start or end from the workflow's status change (each happens once: compare-and-set)."""
    if event == "start" and after == "running":
        ROUNDS_STARTED.inc()
    elif before == "running" and after in OUTCOMES:
        ROUNDS_ENDED.labels(after).inc()


class RoundTimer:
    """Times one round in this process: its wait for a slot, then its run while it holds one."""

    def __init__(self) -> None:
        self.t0 = time.perf_counter()
        self.acquired = 0.0

    def acquire(self) -> None:
        self.acquired = time.perf_counter()
        SLOT_WAIT_SECONDS.observe(self.acquired - self.t0)
        ROUNDS_RUNNING.inc()

    def release(self) -> None:
        ROUNDS_RUNNING.dec()
        ROUND_SECONDS.observe(time.perf_counter() - self.acquired)


def record_extraction(mime: str, outcome: str, seconds: float) -> None:
    EXTRACTION_SECONDS.labels(mime, outcome).observe(seconds)


def record_takeover(rounds: int = 1) -> None:
    """A replica took over `rounds` rounds of a silent replica (the takeover code calls this)."""
    TAKEOVERS.inc(rounds)


def record_heartbeats(ages: Mapping[str, float], me: str) -> None:
    """The heartbeat age of every other replica, in seconds; replicas no longer listed are dropped."""
    seen = {executor for executor in ages if executor != me}
    for executor in _replicas - seen:
        HEARTBEAT_AGE.remove(executor)
    for executor in seen:
        HEARTBEAT_AGE.labels(executor).set(max(0.0, ages[executor]))
    _replicas.clear()
    _replicas.update(seen)


class MeteredModel:
    """Any `Model`, counted: calls by model and outcome, latency, tokens in and out, retries.

    Everything else (name, offline, context_tokens, aclose, ...) is the wrapped model's.
    """

    def __init__(self, inner: Any) -> None:
        self.inner = inner

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)

    async def complete(self, request: ModelRequest) -> ModelResponse:
        t0 = time.perf_counter()
        try:
            response: ModelResponse = await self.inner.complete(request)
        except ModelError as exc:
            self._record(self._model(request), exc.code, t0, exc.usage)
            raise
        except Exception:
            self._record(self._model(request), "error", t0, None)
            raise
        self._record(response.model or self._model(request), "ok", t0, response.usage)
        return response

    def _model(self, request: ModelRequest) -> str:
        model_for = getattr(self.inner, "model_for", None)
        return model_for(request.agent) if callable(model_for) else getattr(self.inner, "name", "model")

    @staticmethod
    def _record(model: str, outcome: str, t0: float, usage: Any) -> None:
        MODEL_CALLS.labels(model, outcome).inc()
        MODEL_SECONDS.labels(model).observe(time.perf_counter() - t0)
        if usage is not None:
            MODEL_TOKENS_IN.labels(model).inc(usage.prompt_tokens)
            MODEL_TOKENS_OUT.labels(model).inc(usage.completion_tokens)
            if usage.calls > 1:
                MODEL_RETRIES.labels(model).inc(usage.calls - 1)


def http_metrics() -> PrometheusConfig:
    """Litestar's request metrics: by route template (not the raw path), method and status."""
    return PrometheusConfig(app_name="foreman", prefix="foreman_http", group_path=True, buckets=HTTP_BUCKETS)


def registry() -> CollectorRegistry:
    """This process's metrics, or every worker's when they share PROMETHEUS_MULTIPROC_DIR."""
    if os.environ.get("PROMETHEUS_MULTIPROC_DIR"):
        merged = CollectorRegistry()
        # prometheus_client leaves MultiProcessCollector's __init__ unannotated.
        multiprocess.MultiProcessCollector(merged)  # type: ignore[no-untyped-call]
        return merged
    return REGISTRY


# Prometheus' text type without its charset: Litestar adds `charset=utf-8` to every text/* type itself.
METRICS_TYPE = CONTENT_TYPE_LATEST.split("; charset")[0]


@get("/metrics", summary="Prometheus metrics of this replica (text format; no key needed)", operation_id="metrics",
     tags=["service"], security=[{}], media_type=METRICS_TYPE, include_in_schema=True)
async def metrics_endpoint() -> Response[bytes]:
    # Rendering walks every series: a worker thread's work, not the event loop's.
    body = await asyncio.to_thread(generate_latest, registry())
    return Response(content=body, media_type=METRICS_TYPE)


ROUTES = [metrics_endpoint]


class ReplicaMetrics:
    """The takeover code's observer (app.rounds.replicas.Observer): takeovers and the other replicas' heartbeat ages."""

    def __init__(self, me: str) -> None:
        self.me = me

    def took_over(self, executor_id: str) -> None:
        record_takeover()

    def heartbeat_ages(self, ages: Mapping[str, float]) -> None:
        record_heartbeats(ages, self.me)
