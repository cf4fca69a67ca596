"""The README's curl walk-through, run from the README's own text against a live local server."""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest

from tests.harness import LiveServer, settings_for

README = Path(__file__).resolve().parents[2] / "README.md"


def walkthrough() -> str:
    text = README.read_text()
    section = text[text.index("## A walk-through with curl"):]
    block = re.search(r"```sh\n(.*?)```", section, re.S)
    assert block, "the walk-through has no sh block"
    return block.group(1)


@pytest.mark.skipif(not (shutil.which("curl") and shutil.which("jq")), reason="needs curl and jq")
def test_the_readme_walkthrough_works_as_written(tmp_path):
    script = walkthrough()
    assert script.startswith("API=http://127.0.0.1:8000\n")
    with LiveServer(settings_for(tmp_path)) as server:  # local mode, as the README says
        work = tmp_path / "work"
        work.mkdir()
        done = subprocess.run(["bash", "-euo", "pipefail", "-c", script.replace("http://127.0.0.1:8000", server.url,
                                                                               1)],
                              cwd=work, capture_output=True, text=True, timeout=300)
    out = done.stdout
    assert done.returncode == 0, done.stdout + done.stderr
    assert "user [first]: Summarise the sales." in out
    assert "assistant [last]:" in out
    assert "log 100%:" in out and "round 1: completed" in out
    assert "north,10" in out  # the download, saved under its own name
    assert '"status":"running","currentRound":2' in out
    assert '"status":"stopped"' in out or '"code":"illegal_transition"' in out
    assert '"deleted":"workflow"' in out
    assert out.rstrip().endswith("workflow_not_found")
