"""Start-up says how long each part took (issue 51, item 11: a restart took 25-80 s to be ready on a
loaded machine, and nothing said where the time went)."""

from __future__ import annotations

import logging
import re
from pathlib import Path

import pytest

from tests.harness import LiveServer, settings_for, wait_for

STARTED = re.compile(r"^Started in [0-9.]+ s \(MCP tools [0-9.]+ s, schema [0-9.]+ s, rounds resumed [0-9.]+ s, "
                     r"reconciled [0-9.]+ s\); the rounds to resume are under way, the warm-ups start now in the "
                     r"background\.$")


def test_start_up_logs_each_part_and_the_readers_warm_up(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.INFO)
    with LiveServer(settings_for(tmp_path)) as server, server.client() as client:
        assert client.get("/health").status_code == 200
        wait_for(lambda: any("The file readers were warm" in r.getMessage() for r in caplog.records), 120,
                 "the readers' warm-up line")
    started = [r.getMessage() for r in caplog.records if r.getMessage().startswith("Started in ")]
    assert len(started) == 1 and STARTED.match(started[0]), started
