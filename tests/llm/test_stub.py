"""The stub speaks enough OpenAI for the real SDK, from sync code and a subprocess too."""

from __future__ import annotations

import json
import subprocess
import sys
import urllib.error
import urllib.request

from tests.openai_stub import OpenAIStub, Reply, Status, example_for


def post(stub: OpenAIStub, body: dict) -> tuple[int, dict]:
    request = urllib.request.Request(f"{stub.base_url}/chat/completions", data=json.dumps(body).encode(),
                                     headers={"content-type": "application/json"})
    try:
        with urllib.request.urlopen(request, timeout=5) as response:
            return response.status, json.load(response)
    except urllib.error.HTTPError as error:
        return error.code, json.load(error)


def test_sync_client_gets_scripted_answers_then_defaults(openai_stub: OpenAIStub) -> None:
    openai_stub.script([Status(503), Reply("scripted", usage=(7, 3))])
    body = {"model": "m", "messages": [{"role": "user", "content": "hi"}]}
    assert post(openai_stub, body)[0] == 503
    status, answer = post(openai_stub, body)
    assert (status, answer["choices"][0]["message"]["content"]) == (200, "scripted")
    assert answer["usage"]["prompt_tokens"] == 7
    assert post(openai_stub, body)[1]["choices"][0]["message"]["content"] == "stub reply"
    assert openai_stub.usage_total[0] == 7 + openai_stub.records[2].usage[0]  # the 503 cost nothing
    assert len(openai_stub.requests) == 3 and openai_stub.pending == 0


def test_default_reply_follows_the_requested_schema(openai_stub: OpenAIStub) -> None:
    schema = {"type": "object", "properties": {"tags": {"type": "array", "items": {"enum": ["a", "b"]}},
                                               "n": {"type": "integer"}}}
    body = {"model": "m", "messages": [], "response_format": {"type": "json_object", "schema": schema}}
    content = post(openai_stub, body)[1]["choices"][0]["message"]["content"]
    assert json.loads(content) == {"tags": ["a"], "n": 1} == example_for(schema)


def test_a_subprocess_can_use_the_stub(openai_stub: OpenAIStub) -> None:
    code = ("import json, sys, urllib.request as u; r = u.Request(sys.argv[1] + '/models'); "
            "print(json.load(u.urlopen(r, timeout=5))['data'][0]['id'])")
    out = subprocess.run([sys.executable, "-c", code, openai_stub.base_url], capture_output=True,
                         text=True, timeout=30, check=True)
    assert out.stdout.strip() == "stub-model"
