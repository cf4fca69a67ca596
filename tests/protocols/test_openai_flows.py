"""Published flows as models of the OpenAI-compatible API, driven by the `openai` SDK: listed (only the
caller's, only published ones), run whole and streamed, other inputs from `metadata`, a human node's
question as the answer and the next user message as its action."""

from __future__ import annotations

import uuid

import openai
import pytest

from tests.protocols.flows import gated, greeting, publish
from tests.protocols.test_openai_chat import client


def test_flow_models_are_listed_per_caller_and_run_whole_and_streamed(server):
    name = f"Greet people {uuid.uuid4().hex[:6]}"
    with server.client("k1") as rest:
        publish(rest, greeting(name))
        rest.post("/api/flows", json=greeting(f"Unpublished {uuid.uuid4().hex[:6]}"))
    model = "flow/" + name.lower().replace(" ", "_")
    chat = client(server)
    listed = {m.id for m in chat.models.list()}
    assert "foreman" in listed and model in listed and not any(m.startswith("flow/unpublished") for m in listed)
    assert chat.models.retrieve(model).id == model

    whole = chat.chat.completions.create(model=model, messages=[{"role": "user", "content": "Ada"}])
    assert whole.model == model and whole.choices[0].message.content == "Good day, Ada."
    assert whole.choices[0].finish_reason == "stop"

    stream = chat.chat.completions.create(model=model, stream=True, stream_options={"include_usage": True},
                                          messages=[{"role": "user", "content": "Bob"}],
                                          metadata={"polite": "false"})
    chunks = list(stream)
    text = "".join(c.choices[0].delta.content or "" for c in chunks if c.choices)
    assert text == "Hi Bob"
    assert [c.choices[0].finish_reason for c in chunks if c.choices][-1] == "stop"
    assert chunks[-1].usage is not None

    with pytest.raises(openai.BadRequestError) as bad:
        chat.chat.completions.create(model=model, messages=[{"role": "user", "content": "Ada"}],
                                     metadata={"polite": "very"})
    assert bad.value.body["code"] == "invalid_inputs"

    other = client(server, "k2")  # another user's flows are not their models
    assert model not in {m.id for m in other.models.list()}
    with pytest.raises(openai.NotFoundError) as hidden:
        other.chat.completions.create(model=model, messages=[{"role": "user", "content": "Eve"}])
    assert hidden.value.body["code"] == "model_not_found"


@pytest.mark.parametrize("streamed", [False, True])
def test_a_human_node_asks_in_the_answer_and_the_next_message_is_its_action(server, streamed):
    name = f"Gated {uuid.uuid4().hex[:6]}"
    with server.client("k1") as rest:
        publish(rest, gated(name))
    model = "flow/" + name.lower().replace(" ", "_")
    chat = client(server)

    def ask(messages: list[dict[str, str]]) -> str:
        if streamed:
            return "".join(c.choices[0].delta.content or "" for c in chat.chat.completions.create(
                model=model, messages=messages, stream=True) if c.choices)
        return chat.chat.completions.create(model=model, messages=messages).choices[0].message.content

    history = [{"role": "user", "content": "it"}]
    asked = ask(history)
    assert asked.startswith("Send it?") and "send, drop" in asked
    history += [{"role": "assistant", "content": asked}, {"role": "user", "content": "send"}]
    assert ask(history) == "sent it"
