"""Settings come from an environment mapping, read once, and refuse unsafe combinations."""

from __future__ import annotations

from pathlib import Path

import pytest

from app.config import SettingsError, from_env


def test_defaults_are_the_embedded_offline_service():
    settings = from_env({})
    assert settings.offline and settings.local_mode
    assert (settings.host, settings.port) == ("127.0.0.1", 8000)
    assert settings.app_database_url.endswith("data/foreman.db") and settings.is_sqlite
    assert settings.system_database_url.startswith("sqlite:///")
    settings.check()


def test_environment_values_are_parsed():
    settings = from_env({
        "PORT": "9000", "DATA_DIR": "/tmp/x", "API_KEYS": "abc:3:7, def:3:8", "OPENAI_BASE_URL": "http://127.0.0.1:1/v1",
        "LLM_MODEL": "m", "LLM_MODEL_WRITER": "big", "MAX_UPLOAD_BYTES": "10", "DATABASE_URL":
        "postgresql+asyncpg://u@h/db",
    })
    assert settings.port == 9000 and settings.data_dir == Path("/tmp/x")
    assert [(k.mandate_id, k.user_id) for k in settings.api_keys] == [(3, 7), (3, 8)]
    assert not settings.offline and settings.agent_models == {"writer": "big"}
    assert settings.system_database_url == "postgresql+psycopg://u@h/db"
    assert "abc" not in repr(settings)  # keys never reach logs through repr


@pytest.mark.parametrize(("env", "message"), [
    ({"PORT": "eighty"}, "PORT must be a number"),
    ({"MAX_UPLOAD_BYTES": "-1"}, "must not be negative"),
    ({"API_KEYS": "justakey"}, "key:mandateId:userId"),
    ({"API_KEYS": "a:1:1,a:1:2"}, "same key twice"),
])
def test_bad_values_name_the_variable(env, message):
    with pytest.raises(SettingsError, match=message):
        from_env(env)


def test_local_mode_refuses_a_public_address():
    with pytest.raises(SettingsError, match="loopback"):
        from_env({"HOST": "0.0.0.0"}).check()
    from_env({"HOST": "0.0.0.0", "API_KEYS": "k:1:1"}).check()
    from_env({"HOST": "::1"}).check()
