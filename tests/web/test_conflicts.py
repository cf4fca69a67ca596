"""Every 409 the server answers is the ConflictBody its OpenAPI schema describes."""

from __future__ import annotations

import asyncio
import uuid
from typing import Any

import httpx
import pytest
from openapi_schema_validator import OAS31Validator

import app.services.workflows as workflow_service
from app.contract.schemas import StartRequest
from app.services.workflows import request_fingerprint
from app.store.database import Database
from app.store.repository import Repository
from tests.web.conftest import check_error, run_round, start, start_held


@pytest.fixture(scope="module")
def spec(server) -> dict[str, Any]:
    with server.client() as client:
        return client.get("/schema/openapi.json").json()


def conform(spec: dict[str, Any], path: str, method: str, response: httpx.Response) -> dict[str, Any]:
    """The 409 body validated against the schema the server serves for that operation's 409."""
    body = check_error(response, 409)
    schema = spec["paths"][path][method]["responses"]["409"]["content"]["application/json"]["schema"]
    OAS31Validator(schema | {"components": spec["components"]}).validate(body)  # its $refs point there
    return body


def claim_elsewhere(database_url: str, key: str, body: dict[str, Any]) -> None:
    """Claim an Idempotency-Key as another process that is still starting the round would."""
    async def claim() -> None:
        db = Database(database_url)
        try:
            fingerprint = request_fingerprint(None, StartRequest(prompt=body["prompt"], list_file_id=[]))
            assert await Repository(db).idempotency.claim(f"1:1:{key}", fingerprint) == (True, None)
        finally:
            await db.dispose()

    asyncio.run(claim())


def test_every_409_body_is_the_documented_conflict_body(server, spec, c1, model, monkeypatch):
    # A round still running: its status and round.
    held = start_held(c1, model)
    running = conform(spec, "/api/workflows/start", "post", start(c1, "Again", workflow_id=held["id"]))
    assert (running["code"], running["status"], running["currentRound"]) == ("round_running", "running", 1)
    assert c1.post(f"/api/workflows/{held['id']}/stop").status_code == 200

    # Stopping a completed workflow: its status and round.
    done = run_round(c1, "Compare the figures.")
    illegal = conform(spec, "/api/workflows/{workflow_id}/stop", "post", c1.post(f"/api/workflows/{done['id']}/stop"))
    assert (illegal["code"], illegal["status"], illegal["currentRound"]) == ("illegal_transition", "completed", 1)

    # A retry while another process still works on the same Idempotency-Key: about the request,
    # not a workflow, so status and round are null, and the body still matches the schema.
    key, body = uuid.uuid4().hex, {"prompt": "Summarise the quarter."}
    claim_elsewhere(server.settings.app_database_url, key, body)
    monkeypatch.setattr(workflow_service, "CLAIM_WAIT_SECONDS", 0.2)  # how long a retry waits for the other answer
    pending = conform(spec, "/api/workflows/start", "post", start(c1, body["prompt"], key=key))
    assert (pending["code"], pending["status"], pending["currentRound"]) == ("idempotency_in_progress", None, None)
    assert "retry" in pending["detail"]
