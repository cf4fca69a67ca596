"""Published flows as MCP tools, driven by the `mcp` SDK's client over streamable HTTP: listed with their
schemas (only the caller's, only published ones), called to completion, a human node answered with
review_round, and as tasks (the tasks extension): followed to the outputs, a human node as
input_required answered with tasks/update, cancelled."""

from __future__ import annotations

import uuid

from mcp_types import CallToolResult, Result

from tests.harness import wait_for, wait_status
from tests.protocols.flows import both, gated, greeting, held, publish
from tests.protocols.test_mcp import connect
from tests.protocols.test_mcp_tasks import (
    CancelTask,
    CreatedTask,
    TaskParams,
    UpdateParams,
    UpdateTask,
    follow,
)
from tests.protocols.test_mcp_tasks import connect as connect_tasks


async def test_published_flows_are_the_callers_tools_and_a_call_answers_the_outputs(server):
    name = f"Greet people {uuid.uuid4().hex[:6]}"
    with server.client("k1") as rest:
        flow_id = publish(rest, greeting(name), versions=2)
        draft_only = rest.post("/api/flows", json=greeting(f"Draft {uuid.uuid4().hex[:6]}")).json()["id"]
    slug = "flow_" + name.lower().replace(" ", "_")
    async with connect(server) as mcp:
        tools = {t.name: t for t in (await mcp.list_tools()).tools}
        assert {"start_round", "read_round", "stop_round", "review_round"} <= set(tools)  # they stay
        tool = tools[slug]
        assert tool.title == name and tool.description == "Greets someone, politely or not"
        assert tool.input_schema["required"] == ["who"]
        assert tool.input_schema["properties"]["who"] == {"type": "string", "description": "whom to greet"}
        assert tool.input_schema["properties"]["polite"] == {"type": "boolean", "default": True}
        assert "greeting" in tool.output_schema["properties"]["outputs"]["properties"]
        assert not any(t.startswith("flow_draft") for t in tools)  # a flow never published is no tool

        done = await mcp.call_tool(slug, {"who": "Ada"})
        assert not done.is_error, done.content
        body = done.structured_content
        assert body["status"] == "completed" and body["outputs"] == {"greeting": "Good day, Ada."}
        assert done.content[0].text == "Good day, Ada."
        rude = await mcp.call_tool(slug, {"who": "Bob", "polite": False, "version": 1})
        assert rude.structured_content["outputs"] == {"greeting": "Hi Bob"}
        with server.client("k1") as rest:
            [user] = [m for m in rest.get(f"/api/workflows/{rude.structured_content['workflowId']}/messages")
                      .json()["items"] if m["role"] == "user"]
            assert user["metadata"]["flow"]["id"] == flow_id and user["metadata"]["flow"]["version"] == 1

        bad = await mcp.call_tool(slug, {"polite": "very"})
        assert bad.is_error and "invalid_inputs" in bad.content[0].text and "who" in bad.content[0].text
        missing = await mcp.call_tool(slug, {"who": "Ada", "version": 9})
        assert missing.is_error and "flow_version_not_found" in missing.content[0].text

    async with connect(server, "k2") as other:  # another user's flows are not their tools
        names = {t.name for t in (await other.list_tools()).tools}
        assert slug not in names and not any(str(draft_only) in t for t in names)
        hidden = await other.call_tool(slug, {"who": "Eve"})
        assert hidden.is_error and "Unknown tool" in hidden.content[0].text


async def test_a_human_node_answers_its_question_and_review_round_takes_an_action(server):
    name = f"Gated {uuid.uuid4().hex[:6]}"
    with server.client("k1") as rest:
        publish(rest, gated(name))
    async with connect(server) as mcp:
        asked = await mcp.call_tool("flow_" + name.lower().replace(" ", "_"), {"word": "it"})
        body = asked.structured_content
        assert body["status"] == "waiting" and body["decisions"] == ["send", "drop"]
        assert body["question"].startswith("Send it?")
        wrong = await mcp.call_tool("review_round", {"workflow_id": body["workflowId"], "decision": "maybe"})
        assert wrong.is_error and "send, drop" in wrong.content[0].text
        taken = await mcp.call_tool("review_round", {"workflow_id": body["workflowId"], "decision": "send"})
        assert not taken.is_error, taken.content
        read = await mcp.call_tool("read_round", {"workflow_id": body["workflowId"], "wait_seconds": 60})
        assert read.structured_content["status"] == "completed"
        assert read.structured_content["messages"][-1]["content"] == "sent it"


async def test_a_flow_as_a_task_input_required_then_its_outputs_and_a_cancelled_one(server, model):
    name = f"Gated task {uuid.uuid4().hex[:6]}"
    with server.client("k1") as rest:
        publish(rest, gated(name))
        publish(rest, held(f"Held {name}"))
    tool = "flow_" + name.lower().replace(" ", "_")
    async with connect_tasks(server) as mcp:
        created = await mcp.session.call_tool(tool, {"word": "it"}, allow_claimed=True)
        assert isinstance(created, CreatedTask), created
        waiting = await follow(mcp.session, created.task_id, until=("input_required", "completed"))
        assert waiting.status == "input_required" and waiting.status_message.startswith("Send it?")
        [(key, request)] = waiting.input_requests.items()
        assert request["params"]["requestedSchema"]["properties"]["decision"]["enum"] == ["send", "drop"]
        await mcp.session.send_request(UpdateTask(params=UpdateParams(
            task_id=created.task_id, input_responses={key: {"action": "accept", "content": {"decision": "drop"}}})),
            Result)
        done = await follow(mcp.session, created.task_id)
        result = CallToolResult.model_validate(done.result)
        assert done.status == "completed" and result.structured_content["outputs"] == {"out": "dropped"}

        token = uuid.uuid4().hex
        running = await mcp.session.call_tool("flow_held_" + tool.removeprefix("flow_"), {"token": token},
                                              allow_claimed=True)
        assert isinstance(running, CreatedTask), running
        wait_for(lambda: model.holding(token), 60, "the flow's model call to be held")
        await mcp.session.send_request(CancelTask(params=TaskParams(task_id=running.task_id)),
                                       Result)
        assert (await follow(mcp.session, running.task_id, until=("cancelled",))).status == "cancelled"
        with server.client("k1") as rest:
            assert wait_status(rest, running.task_id.split(":")[0], "stopped")["status"] == "stopped"


async def test_human_nodes_waiting_at_once_are_one_input_request_each(server):
    name = f"Both task {uuid.uuid4().hex[:6]}"
    with server.client("k1") as rest:
        publish(rest, both(name))
    async with connect_tasks(server) as mcp:
        created = await mcp.session.call_tool("flow_" + name.lower().replace(" ", "_"), {}, allow_claimed=True)
        assert isinstance(created, CreatedTask), created
        waiting = await follow(mcp.session, created.task_id, until=("input_required", "completed"))
        asks = {r["params"]["message"].split("?")[0]: (key, r) for key, r in waiting.input_requests.items()}
        assert set(asks) == {"Ship A", "Ship B"}
        assert asks["Ship B"][1]["params"]["requestedSchema"]["properties"]["decision"]["enum"] == ["go", "stop"]
        assert "Ship A?" in waiting.status_message and "Ship B?" in waiting.status_message
        await mcp.session.send_request(UpdateTask(params=UpdateParams(task_id=created.task_id, input_responses={
            asks["Ship B"][0]: {"action": "accept", "content": {"decision": "go"}}})), Result)
        # The other node is asked again under the same key until it is answered.
        again = await follow(mcp.session, created.task_id, until=("input_required", "completed"))
        assert list(again.input_requests) == [asks["Ship A"][0]]  # taken at once: B's wait is over when it answers
        await mcp.session.send_request(UpdateTask(params=UpdateParams(task_id=created.task_id, input_responses={
            asks["Ship A"][0]: {"action": "accept", "content": {"decision": "no"}}})), Result)
        done = await follow(mcp.session, created.task_id)
        assert CallToolResult.model_validate(done.result).structured_content["outputs"] == {"out": "A:no B:go"}
