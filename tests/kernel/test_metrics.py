"""GET /metrics: Prometheus text that parses, and counters that move by what one round did."""

from __future__ import annotations

from collections import defaultdict

import httpx
from prometheus_client.parser import text_string_to_metric_families

from app.config import from_env
from app.metrics import HEARTBEAT_AGE, record_heartbeats
from tests.harness import LiveServer, plan_of, settings_for, upload, wait_for, wait_status
from tests.openai_stub import Reply, Status

KEY = "metrics-test-key"


def scrape(client: httpx.Client) -> dict[str, dict[tuple, float]]:
    """Every sample, by name and then by its labels (sorted pairs)."""
    response = client.get("/metrics")
    assert response.status_code == 200
    assert response.headers["content-type"].startswith("text/plain")
    samples: dict[str, dict[tuple, float]] = defaultdict(dict)
    for family in text_string_to_metric_families(response.text):
        for sample in family.samples:
            samples[sample.name][tuple(sorted(sample.labels.items()))] = sample.value
    return samples


def total(samples: dict[str, dict[tuple, float]], name: str, **labels: str) -> float:
    """The sum of a metric's samples whose labels include `labels`."""
    return sum(v for k, v in samples.get(name, {}).items() if set(labels.items()) <= set(k))


def moved(before: dict, after: dict, name: str, **labels: str) -> float:
    return total(after, name, **labels) - total(before, name, **labels)


def test_one_round_moves_each_counter_by_what_it_did(tmp_path, database_url, openai_stub):
    # t1 then t2: t1's first attempt gets a 503 and its retry succeeds; t2's call fails for good (400).
    openai_stub.script([Reply(plan_of(2, chain=True), usage=(120, 30)), Status(503, retry_after=0),
                        Reply("Part one done.", usage=(80, 10)), Status(400, message="context length exceeded")])
    openai_stub.default = lambda body: "Reviewed."
    settings = settings_for(tmp_path, database_url, openai_base_url=openai_stub.base_url, openai_api_key="sk-test",
                            max_replans=0,  # the failed task is not planned again: each call counted below
                            api_keys=from_env({"API_KEYS": f"{KEY}:1:1"}).api_keys, llm_model="stub-model")
    with LiveServer(settings) as server, server.client() as anonymous, server.client(KEY) as client:
        before = scrape(anonymous)  # no key needed
        [file] = upload(client, "stanley-cups.tsv")
        wid = client.post("/api/workflows/start", json={"prompt": "Two parts", "listFileId": [file["id"]]}).json()["id"]
        assert wait_status(client, wid, "completed", "failed")["status"] == "completed"
        # The round gives back its slot (and is timed) just after its last write.
        def left_its_slot() -> dict | None:
            samples = scrape(anonymous)
            return samples if moved(before, samples, "foreman_round_duration_seconds_count") else None

        after = wait_for(left_its_slot, 30, "the round to leave its slot")

    assert moved(before, after, "foreman_rounds_started_total") == 1
    assert moved(before, after, "foreman_rounds_ended_total", outcome="completed") == 1
    assert moved(before, after, "foreman_rounds_ended_total", outcome="failed") == 0
    assert moved(before, after, "foreman_round_duration_seconds_count") == 1
    assert moved(before, after, "foreman_round_slot_wait_seconds_count") == 1
    assert total(after, "foreman_rounds_running") == 0

    # plan, t1 (after one retry) and the final review answered; t2's call failed
    assert moved(before, after, "foreman_model_calls_total", model="stub-model", outcome="ok") == 3
    assert moved(before, after, "foreman_model_calls_total", model="stub-model", outcome="model_error") == 1
    assert moved(before, after, "foreman_model_retries_total", model="stub-model") == 1
    assert moved(before, after, "foreman_model_call_duration_seconds_count", model="stub-model") == 4
    sent, answered = openai_stub.usage_total
    assert moved(before, after, "foreman_model_input_tokens_total", model="stub-model") == sent
    assert moved(before, after, "foreman_model_output_tokens_total", model="stub-model") == answered
    assert sent >= 200 and answered >= 40

    assert moved(before, after, "foreman_extraction_duration_seconds_count",
                 mime="text/tab-separated-values", outcome="ok") == 1
    assert moved(before, after, "foreman_http_requests_total", path="/api/workflows/start", method="POST",
                 status_code="200") == 1
    assert moved(before, after, "foreman_http_requests_total", path="/api/files", method="POST",
                 status_code="201") == 1
    polls = "/api/workflows/{workflow_id}/status"  # the route template, never the raw path
    assert moved(before, after, "foreman_http_requests_total", path=polls, status_code="200") >= 1
    assert moved(before, after, "foreman_http_request_duration_seconds_count", path=polls) >= 1


def test_metrics_can_be_switched_off(tmp_path):
    settings = from_env({"METRICS_ENABLED": "false", "DATA_DIR": str(tmp_path)})
    assert not settings.metrics
    with LiveServer(settings_for(tmp_path, metrics=False)) as server, server.client() as client:
        assert client.get("/metrics").json()["code"] == "route_not_found"
        assert "/metrics" not in client.get("/schema/openapi.json").json()["paths"]


def test_the_schema_documents_metrics_as_public_text(tmp_path):
    with LiveServer(settings_for(tmp_path)) as server, server.client() as client:
        operation = client.get("/schema/openapi.json").json()["paths"]["/metrics"]["get"]
    assert operation["operationId"] == "metrics" and operation["tags"] == ["service"]
    assert operation["security"] == []  # public, as /health and /ready
    assert any(t.startswith("text/plain") for t in operation["responses"]["200"]["content"])


def test_heartbeat_ages_of_the_other_replicas_only():
    record_heartbeats({"me": 0.0, "b": 3.5, "c": 40.0}, me="me")
    seen = {s.labels["executor"]: s.value for m in HEARTBEAT_AGE.collect() for s in m.samples}
    assert seen == {"b": 3.5, "c": 40.0}
    record_heartbeats({"me": 0.0, "b": 1.0}, me="me")  # c is gone: its series too
    seen = {s.labels["executor"]: s.value for m in HEARTBEAT_AGE.collect() for s in m.samples}
    assert seen == {"b": 1.0}
    record_heartbeats({}, me="me")
