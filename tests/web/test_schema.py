"""The OpenAPI schema: valid, complete, and enough for a generated client to do a whole round."""

from __future__ import annotations

import importlib
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from openapi_spec_validator import validate

from app.web.openapi import OPERATIONS, all_codes
from tests.corpus import CORPUS
from tests.harness import LiveServer, wait_for

APP = Path(__file__).resolve().parents[2] / "app"
# Codes of errors that never reach HTTP (the model client's own) or that only name a base class.
NOT_HTTP = {"model_budget_exhausted", "model_error", "model_output_invalid", "bad_request", "conflict",
            "not_found", "unauthorized", "payload_too_large", "unsupported_media_type", "unprocessable"}


@pytest.fixture(scope="module")
def schema(server: LiveServer) -> dict[str, Any]:
    with server.client() as client:
        return client.get("/schema/openapi.json").json()


def test_schema_is_valid_openapi(schema):
    validate(schema)  # raises with the first error


def test_every_code_the_server_raises_is_documented():
    raised = set()
    for module in APP.glob("*.py"):
        text = module.read_text()
        raised |= set(re.findall(r'code\s*=\s*"([a-z_]+)"', text))
        raised |= {f"bad_{n}" for n in re.findall(r'_int_param\(query, "([a-zA-Z]+)"', text)}
    assert raised - NOT_HTTP <= set(all_codes()), raised - NOT_HTTP - set(all_codes())


def test_schema_says_what_the_server_does(schema):
    assert schema["components"]["securitySchemes"]["bearer"] == {
        "type": "http", "scheme": "bearer", "description": schema["components"]["securitySchemes"]["bearer"][
            "description"]}
    assert schema["security"] == [{"bearer": []}]
    paths = schema["paths"]
    for path in ("/health", "/ready"):
        assert paths[path]["get"]["security"] == []
    assert sorted(paths["/ready"]["get"]["responses"]) == ["200", "503"]
    ids = [op["operationId"] for item in paths.values() for op in item.values()]
    gets = [path for (method, path) in OPERATIONS if method == "get"]
    assert len(ids) == len(set(ids)) == len(OPERATIONS) + len(gets) and all(len(i) <= 20 for i in ids)
    for path in gets:  # HEAD wherever GET is: the same answers, with their headers and no body
        get, head = paths[path]["get"], paths[path]["head"]
        assert head["operationId"] == get["operationId"] + "Head"
        assert sorted(head["responses"]) == sorted(get["responses"])
        assert not any("content" in answer for answer in head["responses"].values())
        assert head.get("parameters") == get.get("parameters")
    assert "ETag" in paths["/api/workflows/{workflow_id}/status"]["head"]["responses"]["200"]["headers"]
    assert all(op.get("tags") for item in paths.values() for op in item.values())
    start = paths["/api/workflows/start"]["post"]
    assert {"200", "400", "401", "404", "409", "413", "415", "422"} <= set(start["responses"])
    for parameter in start["parameters"]:
        assert parameter["schema"]["type"] == "string", parameter
    schemas = schema["components"]["schemas"]
    assert "default" not in schemas["StartRequest"]["properties"]["prompt"]
    assert schemas["Message"]["properties"]["status"]["enum"] == ["first", "step", "last"]
    assert set(schemas["Message"]["properties"]["role"]["enum"]) == {"user", "assistant", "system"}
    assert set(schemas["LogEntry"]["properties"]["type"]["enum"]) == {"info", "warning", "error"}
    assert set(schemas["WorkflowStatusView"]["properties"]["status"]["enum"]) == {"running", "waiting", "completed",
                                                                                  "stopped", "failed"}
    assert "waitingFor" in schemas["WorkflowStatusView"]["required"]
    assert set(schemas["DataStats"]["required"]) == {"bytesSent", "bytesReceived", "tokensUsed", "processingTime"}
    assert {"status", "currentRound"} <= set(schemas["ConflictBody"]["required"])
    assert schemas["ErrorBody"]["properties"]["code"]["enum"] == all_codes()
    download = paths["/api/files/{file_id}/content"]["get"]["responses"]["200"]
    assert download["content"]["application/octet-stream"]["schema"] == {"type": "string", "format": "binary"}
    assert {"Content-Disposition", "X-Content-Type-Options"} <= set(download["headers"])
    status = paths["/api/workflows/{workflow_id}/status"]["get"]
    assert "ETag" in status["responses"]["200"]["headers"] and "304" in status["responses"]
    assert any(p["name"] == "If-None-Match" for p in status["parameters"])
    logs = paths["/api/workflows/{workflow_id}/logs"]["get"]
    assert all(p["name"] != "includeData" for p in logs["parameters"])
    deletes = [op["responses"]["200"]["content"]["application/json"]["schema"]
               for path, item in paths.items() for method, op in item.items() if method == "delete"
               and not path.startswith("/api/flows")]
    assert deletes and all(d == {"$ref": "#/components/schemas/Deleted"} for d in deletes)
    assert paths["/api/flows/{flow_id}"]["delete"]["responses"]["200"]["content"]["application/json"]["schema"] == {
        "$ref": "#/components/schemas/FlowDeleted"}
    text = str(schema)
    assert "9.223372036854776e+18" not in text and "'format': 'int64'" in text
    for (method, path), (_, _, statuses) in OPERATIONS.items():
        for status, codes in statuses.items():
            documented = paths[path][method]["responses"][str(status)]["content"]["application/json"]["schema"]
            assert documented["properties"]["code"]["enum"] == list(dict.fromkeys(codes))


def generate_client(schema_url: str, out: Path) -> Path:
    """openapi-python-client over the served schema; fails on any warning."""
    import httpx

    spec = out / "openapi.json"
    spec.write_bytes(httpx.get(schema_url).content)
    config = out / "config.yaml"
    config.write_text("post_hooks: []\n")
    done = subprocess.run(
        [str(Path(sys.executable).parent / "openapi-python-client"), "generate", "--path", str(spec), "--meta",
         "none", "--output-path", str(out / "foreman_client"), "--config", str(config)],
        capture_output=True, text=True, cwd=out, timeout=300)
    output = done.stdout + done.stderr
    assert done.returncode == 0, output
    assert "warning" not in output.lower(), output
    return out


def test_a_generated_client_does_a_whole_round(server: LiveServer, tmp_path, monkeypatch):
    out = generate_client(server.url + "/schema/openapi.json", tmp_path)
    monkeypatch.syspath_prepend(str(out))
    client_mod = importlib.import_module("foreman_client")
    from foreman_client.api.files import download_file, upload_files
    from foreman_client.api.polling import get_status, poll_messages
    from foreman_client.api.workflows import delete_workflow, start_workflow
    from foreman_client.models import StartRequest, UploadFilesBody
    from foreman_client.types import File

    data = (CORPUS / "testCSV.csv").read_bytes()
    with client_mod.AuthenticatedClient(base_url=server.url, token="k1") as api:
        stored = upload_files.sync(client=api, body=UploadFilesBody(files=[File(payload=data,
                                                                                 file_name="testCSV.csv")]))
        assert isinstance(stored, list) and stored[0].name == "testCSV.csv", stored
        answer = start_workflow.sync(client=api, body=StartRequest(prompt="Compare the figures.",
                                                                   list_file_id=[stored[0].id]))
        assert answer.status == "running", answer
        wait_for(lambda: get_status.sync(answer.id, client=api).status == "completed", 60, "the round to complete")
        page = poll_messages.sync(answer.id, client=api, limit=500)
        assert page.items[-1].status == "last" and not page.has_more
        assert page.items[0].documents[0].file_id == stored[0].id
        downloaded = download_file.sync(stored[0].id, client=api)
        assert downloaded.payload.read() == data
        assert delete_workflow.sync(answer.id, client=api).deleted == "workflow"
