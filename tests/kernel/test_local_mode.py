"""Single-user local mode: no key needed, and it refuses to listen beyond loopback."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from app.config import Settings, SettingsError
from tests.harness import LiveServer, settings_for
from tests.web.conftest import KEYS, check_error

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize("host", ["0.0.0.0", "192.168.1.10", "::", "example.org"])
def test_local_mode_refuses_a_non_loopback_host(host):
    with pytest.raises(SettingsError, match="HOST"):
        Settings(host=host).check()
    Settings(host=host, api_keys=KEYS).check()


@pytest.mark.parametrize("host", ["127.0.0.1", "localhost", "::1", "127.0.0.2"])
def test_local_mode_accepts_loopback(host):
    Settings(host=host).check()


def run_app(tmp_path: Path, **environ: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k not in ("API_KEYS", "OPENAI_API_KEY", "OPENAI_BASE_URL")}
    env |= {"PORT": "0", "DATA_DIR": str(tmp_path / "data"), **environ}
    return subprocess.run([sys.executable, "-m", "app"], cwd=ROOT, env=env, capture_output=True, text=True,
                          timeout=60)


def test_python_m_app_exits_with_a_message_on_a_public_host(tmp_path):
    done = run_app(tmp_path, HOST="0.0.0.0")
    assert done.returncode != 0
    assert "HOST" in done.stderr and "API_KEYS" in done.stderr
    assert "Traceback" not in done.stderr


@pytest.mark.parametrize("keys", ["k1", "k1:1", "k1:one:1", "k1:1:1,k1:1:2"])
def test_python_m_app_exits_with_a_message_on_malformed_api_keys(tmp_path, keys):
    done = run_app(tmp_path, HOST="127.0.0.1", API_KEYS=keys)
    assert done.returncode != 0
    assert "API_KEYS" in done.stderr and "Traceback" not in done.stderr
    assert "k1" not in done.stderr.replace("API_KEYS", "")  # the message never echoes a key


def test_local_mode_needs_no_key(tmp_path, database_url):
    with LiveServer(settings_for(tmp_path, database_url)) as server, server.client() as client:
        assert client.get("/api/workflows").json() == {"items": [], "hasMore": False, "cursor": None}
        with server.client("anything") as keyed:
            assert keyed.get("/api/workflows").status_code == 200
        check_error(client.get("/api/workflows/nope"), 404)
