"""The README's example of each protocol, run as written against a live local server (no keys, as the README says)."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.harness import LiveServer, settings_for

README = Path(__file__).resolve().parents[2] / "README.md"


def examples() -> list[str]:
    text = README.read_text()
    section = text[text.index("## Other protocols"):text.index("## Further reading")]
    blocks = re.findall(r"\n\n((?:      .*\n)+)", section)  # the indented code blocks of the list items
    return [re.sub(r"^      ", "", block, flags=re.M) for block in blocks]


@pytest.fixture(scope="module")
def local(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LiveServer]:
    with LiveServer(settings_for(Path(tmp_path_factory.mktemp("readme")))) as live:
        yield live


def run(script: str, server: LiveServer) -> str:
    script = script.replace("http://127.0.0.1:8000", server.url).replace("python -c", f"{sys.executable} -c")
    done = subprocess.run(["bash", "-euo", "pipefail", "-c", script], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stdout + done.stderr
    return done.stdout


@pytest.mark.skipif(not shutil.which("curl"), reason="needs curl")
def test_the_readme_examples_of_the_protocols_work_as_written(local):
    chat, mcp, ag_ui = examples()
    chunks = [json.loads(line[6:]) for line in run(chat, local).splitlines()
              if line.startswith("data: ") and line != "data: [DONE]"]
    assert "".join(c["choices"][0]["delta"].get("content") or "" for c in chunks if c["choices"])
    assert "start_round" in run(mcp, local)
    events = [json.loads(line[6:])["type"] for line in run(ag_ui, local).splitlines() if line.startswith("data: ")]
    assert events[0] == "RUN_STARTED" and events[-1] == "RUN_FINISHED"
