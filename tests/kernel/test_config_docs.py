"""Each setting is declared once: docs/configuration.md and `python -m app --help` are written from the
declarations, and say the same thing."""

from __future__ import annotations

import re
import subprocess
import sys
from dataclasses import fields
from pathlib import Path

import pytest

from app.config import Settings, SettingsError, from_env
from app.config.declare import declared, plain
from app.config.docs import markdown, rows

ROOT = Path(__file__).resolve().parents[2]


def test_the_docs_page_is_what_the_declarations_write():
    page = (ROOT / "docs" / "configuration.md").read_text(encoding="utf-8")
    assert page == markdown(), "run: python -m app.config --markdown > docs/configuration.md"


def test_help_says_what_the_docs_say_for_every_variable():
    done = subprocess.run([sys.executable, "-m", "app", "--help"], capture_output=True, text=True, timeout=60,
                          cwd=ROOT, env={"PATH": "/usr/bin:/bin"})
    assert done.returncode == 0, done.stderr
    shown: dict[str, tuple[str, str]] = {}
    name = ""
    for line in done.stdout.split("\n\n", 2)[2].splitlines():
        if heading := re.fullmatch(r"  (\S+) \(default: (.*)\)", line):
            name = heading[1]
            shown[name] = (heading[2], "")
        else:
            default, meaning = shown[name]
            shown[name] = (default, f"{meaning} {line.strip()}".strip())
    documented = {}
    for line in (ROOT / "docs" / "configuration.md").read_text(encoding="utf-8").splitlines()[6:]:
        variable, default, meaning = (cell.strip() for cell in line.strip("|").split(" | ", 2))
        documented[variable.strip("`")] = (plain(default), plain(meaning))
    assert list(shown) == list(documented)
    assert shown == documented


def test_every_field_but_the_version_is_a_declared_variable_read_from_the_environment():
    undeclared = [item.name for item in fields(Settings) if declared(item) is None]
    assert undeclared == ["app_version"]
    names = [row.env for row in rows()]
    assert len(names) == len(set(names))
    assert from_env({}) == Settings()  # the defaults read from an empty environment are the fields' own


def test_the_flow_settings_have_their_defaults_and_are_read():
    settings = from_env({})
    assert (settings.flow_max_nodes, settings.flow_max_node_runs) == (500, 1000)
    assert (settings.code_timeout_seconds, settings.code_memory_mb, settings.code_max_output_bytes) == (
        10.0, 256, 1_000_000)
    assert settings.flow_http_allow == () and settings.flow_secret_env == ()
    assert settings.mcp_max_result_bytes == 10_000_000
    settings = from_env({"FLOW_MAX_NODES": "20", "FLOW_MAX_NODE_RUNS": "30", "CODE_TIMEOUT_SECONDS": "2.5",
                         "CODE_MEMORY_MB": "64", "CODE_MAX_OUTPUT_BYTES": "4096", "MCP_MAX_RESULT_BYTES": "100",
                         "FLOW_HTTP_ALLOW": "API.example.com, *.example.org., api.example.com",
                         "FLOW_SECRET_ENV": "GITHUB_TOKEN,SLACK_WEBHOOK"})
    assert (settings.flow_max_nodes, settings.flow_max_node_runs, settings.code_timeout_seconds) == (20, 30, 2.5)
    assert (settings.code_memory_mb, settings.code_max_output_bytes, settings.mcp_max_result_bytes) == (64, 4096, 100)
    assert settings.flow_http_allow == ("api.example.com", "*.example.org")
    assert settings.flow_secret_env == ("GITHUB_TOKEN", "SLACK_WEBHOOK")


def test_a_flow_reads_secret_variables_by_name_and_their_values_stay_out_of_the_settings():
    env = {"FLOW_SECRET_ENV": "GITHUB_TOKEN", "GITHUB_TOKEN": "ghp-do-not-print-me"}
    settings = from_env(env)
    assert settings.flow_secret_env == ("GITHUB_TOKEN",)
    assert "ghp-do-not-print-me" not in repr(settings)
    assert "ghp-do-not-print-me" not in str(vars(settings))


@pytest.mark.parametrize(("env", "message"), [
    ({"FLOW_MAX_NODES": "0"}, "FLOW_MAX_NODES must be at least 1."),
    ({"FLOW_MAX_NODE_RUNS": "many"}, "FLOW_MAX_NODE_RUNS must be a number, not 'many'."),
    ({"CODE_TIMEOUT_SECONDS": "0"}, "CODE_TIMEOUT_SECONDS must be more than 0."),
    ({"CODE_MEMORY_MB": "-5"}, "CODE_MEMORY_MB must not be negative."),
    ({"CODE_MAX_OUTPUT_BYTES": "0"}, "CODE_MAX_OUTPUT_BYTES must be at least 1."),
    ({"MCP_MAX_RESULT_BYTES": "1.5"}, "MCP_MAX_RESULT_BYTES must be a number, not '1.5'."),
    ({"FLOW_HTTP_ALLOW": "https://api.example.com"}, "FLOW_HTTP_ALLOW must list host names"),
    ({"FLOW_HTTP_ALLOW": "api.*.com"}, "FLOW_HTTP_ALLOW must list host names"),
    ({"FLOW_SECRET_ENV": "GITHUB TOKEN"}, "FLOW_SECRET_ENV must list names of environment variables"),
    ({"FLOW_SECRET_ENV": "1TOKEN"}, "FLOW_SECRET_ENV must list names of environment variables"),
])
def test_bad_flow_settings_are_refused_naming_the_variable(env, message):
    with pytest.raises(SettingsError, match=re.escape(message)):
        from_env(env)


@pytest.mark.parametrize(("env", "message"), [
    ({"HEARTBEAT_TIMEOUT_SECONDS": "0"}, "HEARTBEAT_TIMEOUT_SECONDS must be more than 0."),
    ({"HOUSEKEEPING_SECONDS": "0"}, "HOUSEKEEPING_SECONDS must be more than 0."),
    ({"DATABASE_POOL_SIZE": "0"}, "DATABASE_POOL_SIZE must be at least 1."),
    ({"DBOS_POOL_SIZE": "0"}, "DBOS_POOL_SIZE must be at least 1."),
    ({"ROUND_MAX_ATTEMPTS": "0"}, "ROUND_MAX_ATTEMPTS must be at least 1."),
    ({"FILE_STORE": "S3"}, "FILE_STORE must be local or database, not 's3'."),
    ({"LOG_FORMAT": "xml"}, "LOG_FORMAT must be plain or json, not 'xml'."),
    ({"LLM_TEMPERATURE_WRITER": "3"}, "LLM_TEMPERATURE_WRITER must be between 0 and 2, not '3'."),
    ({"EMBEDDINGS_BASE_URL": "http://127.0.0.1:1/v1"}, "EMBEDDINGS_MODEL must name the model"),
    ({"METRICS_ENABLED": "perhaps"}, "METRICS_ENABLED must be true or false, not 'perhaps'."),
])
def test_the_bounds_each_declaration_states_are_enforced(env, message):
    with pytest.raises(SettingsError, match=re.escape(message)):
        from_env(env)
