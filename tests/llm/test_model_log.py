"""LOG_MODEL_IO: every model call logged with where it came from, read back as JSON lines."""

from __future__ import annotations

import json
import logging

import pytest

from agents.model import CallScope, ModelRequest
from app.config import SettingsError, from_env
from app.logs import JsonFormatter, PlainFormatter
from tests.openai_stub import OpenAIStub, Reply


def lines(caplog: pytest.LogCaptureFixture, formatter: logging.Formatter) -> list[str]:
    return [formatter.format(r) for r in caplog.records if r.name == "foreman.model_io"]


async def test_each_call_is_logged_with_workflow_round_task_and_agent(
        openai_stub: OpenAIStub, make_model, caplog: pytest.LogCaptureFixture) -> None:
    long_text = "word " * 2000  # 10,000 characters: cut in the log, its length noted
    openai_stub.script([Reply("A short answer.", usage=(30, 4))])
    model = make_model(api_key="sk-secret-key-123", log_io=True)
    caplog.set_level(logging.INFO, logger="foreman.model_io")
    with CallScope.entered(workflow="7", round_no=2, task="t1"):
        await model.complete(ModelRequest(purpose="task", agent="writer", messages=[
            {"role": "system", "content": "You write."}, {"role": "user", "content": long_text}]))
    [line] = lines(caplog, JsonFormatter())
    entry = json.loads(line)
    assert (entry["workflowId"], entry["round"], entry["taskId"], entry["agent"]) == ("7", 2, "t1", "writer")
    assert entry["level"] == "info" and entry["logger"] == "foreman.model_io" and entry["time"]
    assert entry["mode"] == "text" and entry["answer"] == "A short answer." and entry["finishReason"] == "stop"
    assert entry["usage"]["promptTokens"] == 30 and entry["usage"]["completionTokens"] == 4
    assert entry["seconds"] >= 0 and entry["temperature"] == 0.5
    assert entry["messages"][0] == {"role": "system", "content": "You write."}
    assert entry["messages"][1]["content"].endswith("[cut: 10000 characters in full]")
    assert len(entry["messages"][1]["content"]) < 4100
    assert "sk-secret-key-123" not in line
    [plain] = lines(caplog, PlainFormatter())
    assert "workflowId=7 round=2 taskId=t1" in plain and "sk-secret-key-123" not in plain


async def test_nothing_is_logged_by_default(openai_stub: OpenAIStub, make_model,
                                            caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.INFO, logger="foreman.model_io")
    await make_model().complete(ModelRequest(purpose="task", messages=[{"role": "user", "content": "Hi"}]))
    assert lines(caplog, JsonFormatter()) == []


def test_settings_read_the_log_and_temperature_variables() -> None:
    settings = from_env({"LOG_MODEL_IO": "true", "LOG_FORMAT": "json", "LLM_TEMPERATURE": "0.3",
                         "LLM_TEMPERATURE_WRITER": "0.9"})
    assert settings.log_model_io and settings.log_format == "json"
    assert settings.llm_temperature == 0.3 and settings.agent_temperatures == {"writer": 0.9}
    assert not from_env({}).log_model_io and from_env({}).llm_temperature is None
    with pytest.raises(SettingsError, match="LOG_FORMAT must be plain or json"):
        from_env({"LOG_FORMAT": "xml"})
    with pytest.raises(SettingsError, match="LLM_TEMPERATURE_WRITER must be between 0 and 2"):
        from_env({"LLM_TEMPERATURE_WRITER": "5"})


async def test_temperature_per_call_kind_and_per_agent(openai_stub: OpenAIStub, make_model) -> None:
    model = make_model(agent_temperatures={"writer": 0.9})
    ask = [{"role": "user", "content": "Hi"}]
    await model.complete(ModelRequest(purpose="plan", agent="project_manager", messages=ask))
    await model.complete(ModelRequest(purpose="task", agent="summarizer", messages=ask))
    await model.complete(ModelRequest(purpose="task", agent="writer", messages=ask))
    assert [r["temperature"] for r in openai_stub.requests] == [0.0, 0.5, 0.9]
