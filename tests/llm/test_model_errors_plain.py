"""Internals never reach users (issue 28, item 9): a model answer that is not UTF-8 is a sentence and is
retried; model errors do not name the provider's address; credentials in OPENAI_BASE_URL are refused at
start-up with a sentence that does not repeat them; the start-up log shows the endpoint redacted."""

from __future__ import annotations

import logging
import os
import subprocess
import sys
from urllib.parse import urlsplit

import httpx

from app.config import redact_url
from tests.harness import ROOT, LiveServer, plan_of, settings_for, wait_status
from tests.openai_stub import NotUtf8, OpenAIStub, Reply, Status


def everything_users_see(client: httpx.Client, workflow_id: str) -> str:
    messages = client.get(f"/api/workflows/{workflow_id}/messages").json()["items"]
    logs = client.get(f"/api/workflows/{workflow_id}/logs").json()["items"]
    return "\n".join([m["content"] for m in messages] + [e["message"] for e in logs])


def served(stub: OpenAIStub, tmp_path, **overrides) -> LiveServer:
    return LiveServer(settings_for(tmp_path, openai_base_url=stub.base_url, openai_api_key="test", **overrides))


def test_an_answer_that_is_not_utf8_is_retried_and_the_round_completes(tmp_path, openai_stub):
    openai_stub.script([Reply(plan_of(1)), NotUtf8(), Reply("Part analysed."), Reply("All done.")])
    with served(openai_stub, tmp_path) as server, server.client() as client:
        wid = client.post("/api/workflows/start", json={"prompt": "Analyse it"}).json()["id"]
        assert wait_status(client, wid, "completed", "failed")["status"] == "completed"
        seen = everything_users_see(client, wid)
        assert "Part analysed." in seen and "codec" not in seen and "0xff" not in seen


def test_model_failures_are_sentences_without_the_providers_address(tmp_path, openai_stub):
    openai_stub.script([Reply(plan_of(2)), NotUtf8(), NotUtf8(), Status(400, message="unknown parameter"),
                        Reply("All done.")])
    address = urlsplit(openai_stub.base_url)
    with served(openai_stub, tmp_path, llm_max_retries=1, task_concurrency=1) as server, \
            server.client() as client:
        wid = client.post("/api/workflows/start", json={"prompt": "Analyse it"}).json()["id"]
        wait_status(client, wid, "completed", "failed")
        seen = everything_users_see(client, wid)
        assert "not UTF-8 text" in seen and "unknown parameter" in seen  # each failure said, as a sentence
        assert "codec" not in seen and "0xff" not in seen
        assert openai_stub.base_url not in seen and address.netloc not in seen and "127.0.0.1" not in seen


def test_credentials_in_the_model_url_are_refused_at_start_up_with_a_sentence(tmp_path):
    env = {**os.environ, "DATA_DIR": str(tmp_path), "OPENAI_BASE_URL": "https://bob:s3cret@llm.example.com/v1"}
    done = subprocess.run([sys.executable, "-m", "app"], cwd=ROOT, env=env, capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 2
    assert "OPENAI_BASE_URL must not carry a user name or password" in done.stderr
    assert "s3cret" not in done.stdout + done.stderr and "bob" not in done.stdout + done.stderr
    assert "Traceback" not in done.stderr


def test_the_start_up_log_shows_the_endpoint_without_its_query_or_credentials(tmp_path, openai_stub, caplog):
    caplog.set_level(logging.INFO, logger="foreman")
    url = f"{openai_stub.base_url}?api-key=s3cret"
    with LiveServer(settings_for(tmp_path, openai_base_url=url, openai_api_key="test")):
        pass
    lines = [r.getMessage() for r in caplog.records if r.getMessage().startswith("Model endpoint")]
    assert lines == [f"Model endpoint {openai_stub.base_url}, model gpt-4o-mini."]
    assert not [r for r in caplog.records if "s3cret" in r.getMessage()]
    assert redact_url("https://bob:pw@llm.example.com:8443/v1?key=k#x") == "https://llm.example.com:8443/v1"
