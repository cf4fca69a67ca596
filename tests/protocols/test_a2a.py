"""Foreman as an A2A agent, driven by the `a2a-sdk` client over real HTTP: the agent card (the caller's
flows as skills), a flow skill followed to completion, an INPUT_REQUIRED task answered, a cancelled task,
a chat round, a produced document as an artifact with its download URL, and tenancy (another key's card and
tasks)."""

from __future__ import annotations

import contextlib
import uuid
from collections.abc import AsyncIterator

import httpx
import pytest
from a2a.client import ClientConfig, create_client
from a2a.types import a2a_pb2 as pb
from a2a.utils.errors import InvalidParamsError, TaskNotFoundError
from google.protobuf.json_format import MessageToDict, ParseDict

from tests.harness import wait_for, wait_status
from tests.protocols.flows import gated, greeting, held, publish


@contextlib.asynccontextmanager
async def connect(server, key: str = "k1", streaming: bool = False) -> AsyncIterator[object]:
    async with httpx.AsyncClient(headers={"Authorization": f"Bearer {key}"}, timeout=120) as http:
        client = await create_client(server.url, ClientConfig(httpx_client=http, streaming=streaming))
        yield client


def message(text: str, skill: str | None = None, task_id: str = "", **meta: object) -> pb.SendMessageRequest:
    metadata = {**({"skill": skill} if skill else {}), **meta}
    sent = pb.Message(message_id=uuid.uuid4().hex, role=pb.ROLE_USER, parts=[pb.Part(text=text)], task_id=task_id)
    if metadata:
        sent.metadata.CopyFrom(ParseDict(metadata, sent.metadata))
    return pb.SendMessageRequest(message=sent)


async def last_task(client, request: pb.SendMessageRequest) -> pb.Task:
    task = None
    async for response in client.send_message(request):
        if response.HasField("task"):
            task = response.task
        elif response.HasField("status_update") and task is not None:
            task.status.CopyFrom(response.status_update.status)
        elif response.HasField("artifact_update") and task is not None:
            task.artifacts.append(response.artifact_update.artifact)
    assert task is not None
    return task


def card_of(server, key: str | None) -> dict:
    with server.client(key) as rest:
        answer = rest.get("/.well-known/agent-card.json")
        assert answer.status_code == 200, answer.text
        return answer.json()


async def test_the_card_lists_the_callers_flows_and_a_flow_skill_runs_to_its_outputs(server):
    name = f"Greet people {uuid.uuid4().hex[:6]}"
    with server.client("k1") as rest:
        publish(rest, greeting(name))
    skill = "flow_" + name.lower().replace(" ", "_")
    card = card_of(server, "k1")
    assert card["name"] == "Foreman" and card["version"] and card["capabilities"]["streaming"]
    assert card["supportedInterfaces"][0]["protocolBinding"] == "JSONRPC"
    assert card["securitySchemes"]["bearer"]["httpAuthSecurityScheme"]["scheme"] == "bearer"
    skills = {s["id"]: s for s in card["skills"]}
    assert "ask_foreman" in skills and skills[skill]["name"] == name
    assert skill not in {s["id"] for s in card_of(server, "k2")["skills"]}  # another user's flows are not theirs

    async with connect(server) as client:
        task = await last_task(client, message("Ada", skill))
        assert task.status.state == pb.TASK_STATE_COMPLETED, task
        [outputs] = [a for a in task.artifacts if a.name == "outputs"]
        assert MessageToDict(outputs.parts[0])["data"] == {"greeting": "Good day, Ada."}
        assert task.status.message.parts[0].text == "Good day, Ada."
        again = await client.get_task(pb.GetTaskRequest(id=task.id))
        assert again.status.state == pb.TASK_STATE_COMPLETED and again.context_id == task.context_id

    async with connect(server, "k2") as other:  # another user's task is no task of theirs, their skill none
        with pytest.raises(TaskNotFoundError):
            await other.get_task(pb.GetTaskRequest(id=task.id))
        with pytest.raises(InvalidParamsError, match="no skill"):
            await last_task(other, message("Eve", skill))


async def test_input_required_is_answered_by_the_next_message_and_a_task_is_cancelled(server, model):
    name = f"Gated {uuid.uuid4().hex[:6]}"
    with server.client("k1") as rest:
        publish(rest, gated(name))
        publish(rest, held(f"Held {name}"))
    skill = "flow_" + name.lower().replace(" ", "_")
    async with connect(server, streaming=True) as client:
        task = await last_task(client, message("it", skill))
        assert task.status.state == pb.TASK_STATE_INPUT_REQUIRED, task
        assert task.status.message.parts[0].text.startswith("Send it?")
        done = await last_task(client, message("send", task_id=task.id))
        assert done.id == task.id and done.status.state == pb.TASK_STATE_COMPLETED
        assert {MessageToDict(a.parts[0]).get("data", {}).get("out") for a in done.artifacts} == {"sent it"}

        token = uuid.uuid4().hex
        running = pb.SendMessageRequest(message=message(token, "flow_held_" + skill.removeprefix("flow_")).message,
                                        configuration=pb.SendMessageConfiguration(return_immediately=True))
        started = await last_task(client, running)
        wait_for(lambda: model.holding(token), 60, "the flow's model call to be held")
        cancelled = await client.cancel_task(pb.CancelTaskRequest(id=started.id))
        assert cancelled.status.state == pb.TASK_STATE_CANCELED
        with server.client("k1") as rest:
            assert wait_status(rest, started.context_id, "stopped")["status"] == "stopped"


async def test_ask_foreman_is_a_chat_round_and_keys_are_required(server):
    async with connect(server) as client:
        task = await last_task(client, message("What can you do?"))
        assert task.status.state == pb.TASK_STATE_COMPLETED and task.status.message.parts[0].text
    with server.client() as anonymous:
        assert anonymous.post("/a2a", json={"jsonrpc": "2.0", "id": 1, "method": "GetTask",
                                            "params": {"id": "x"}}).status_code == 401
        assert [s["id"] for s in anonymous.get("/.well-known/agent-card.json").json()["skills"]] == ["ask_foreman"]


async def test_documents_a_round_produced_are_artifacts_with_download_urls(server):
    async with connect(server) as client:
        task = await last_task(client, message("Write a short note about green tea as a Word document."))
    assert task.status.state == pb.TASK_STATE_COMPLETED, task.status
    files = [a for a in task.artifacts if a.artifact_id.startswith("file-")]
    assert files, [a.name for a in task.artifacts]
    [part] = files[0].parts
    assert part.url.startswith(server.url + "/api/files/") and part.filename.endswith(".docx")
    with server.client("k1") as rest:
        got = rest.get(part.url.removeprefix(server.url))
        assert got.status_code == 200 and got.content[:2] == b"PK"  # a DOCX is a ZIP
    with server.client("k2") as other:  # the URL needs the key of the round's user
        assert other.get(part.url.removeprefix(server.url)).status_code == 404
