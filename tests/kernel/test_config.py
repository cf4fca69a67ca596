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
        "PORT": "9000", "DATA_DIR": "/tmp/x", "API_KEYS": "key-alpha-secret:3:7, key-beta-secret:3:8", "OPENAI_BASE_URL": "http://127.0.0.1:1/v1",
        "LLM_MODEL": "m", "LLM_MODEL_WRITER": "big", "MAX_UPLOAD_BYTES": "10", "DATABASE_URL":
        "postgresql+asyncpg://u@h/db",
    })
    assert settings.port == 9000 and settings.data_dir == Path("/tmp/x")
    assert [(k.mandate_id, k.user_id) for k in settings.api_keys] == [(3, 7), (3, 8)]
    assert not settings.offline and settings.agent_models == {"writer": "big"}
    assert settings.system_database_url == "postgresql+psycopg://u@h/db"
    # Keys never reach logs through repr (keys no random part of the repr can spell: "abc" once
    # failed here when the executor id's hex happened to contain it).
    assert "key-alpha-secret" not in repr(settings) and "key-beta-secret" not in repr(settings)


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


def test_help_prints_every_setting_and_exits_without_serving():
    import subprocess
    import sys
    from pathlib import Path

    from app.config.docs import rows

    done = subprocess.run([sys.executable, "-m", "app", "--help"], capture_output=True, text=True, timeout=60,
                          cwd=Path(__file__).resolve().parents[2], env={"PATH": "/usr/bin:/bin", "HOST": "0.0.0.0"})
    assert done.returncode == 0, done.stderr
    for row in rows():
        assert f"  {row.env} (default: " in done.stdout
    assert "CORS_ORIGINS" in done.stdout and "EXTRACT_TIMEOUT_SECONDS" in done.stdout
    assert "Uvicorn running" not in done.stdout + done.stderr


def test_cors_origins_are_read_and_checked():
    from app.config import SettingsError, from_env

    assert from_env({}).cors_origins == ()
    assert from_env({"CORS_ORIGINS": "http://localhost:3000, https://app.example/"}).cors_origins == (
        "http://localhost:3000", "https://app.example")
    with pytest.raises(SettingsError, match="CORS_ORIGINS"):
        from_env({"CORS_ORIGINS": "localhost:3000"})


def test_embeddings_are_local_by_default_off_on_request_and_anything_else_is_refused():
    from app.config import SettingsError, from_env

    assert from_env({}).embeddings == "local" and from_env({}).embedding_workers == 1
    assert from_env({"EMBEDDINGS": "OFF", "EMBEDDING_WORKERS": "2"}).embeddings == "off"
    with pytest.raises(SettingsError, match="EMBEDDINGS must be local or off"):
        from_env({"EMBEDDINGS": "remote"})
