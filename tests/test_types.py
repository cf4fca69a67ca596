"""The tree type-checks with mypy as configured in pyproject.toml, no worse than the baseline.

`tests/types_baseline.json` holds, for each file that still has errors, how many; every other
file has none. The test fails when a file has more errors than its baseline (or any, when it has
no baseline), printing the errors of those files; and when a file has fewer, asking for its
baseline to be lowered (the baseline only goes down). `python -m tests.test_types` writes the
baseline from the tree as it is: for a merge that moved errors between files, never to let new
ones in.

Run time (one mypy process over `app/`, `agents/` and `extractors/`; the shared two-core machine,
2026-11-26): 57 s from a cold cache, ~150 s in CI under load, 1.5 s warm (mypy's cache is
`.mypy_cache/`, which git ignores). So that a run of the whole suite does not wait for it, mypy
starts as soon as the tests are collected (`start_beside_the_suite`, called by tests/conftest.py),
niced, beside the tests before this one; the test reads its result (`stop_beside_the_suite` ends
it with the session if the test did not wait for it). Under pytest-xdist the controller starts it before
the workers start (`start_for_the_workers`) and the test runs last, so no worker waits for it.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter
from pathlib import Path
from typing import IO

ROOT = Path(__file__).resolve().parents[1]
BASELINE = Path(__file__).with_name("types_baseline.json")
ERROR = re.compile(r"^(?P<file>[^:\s]+\.py):\d+: error: ")


MYPY = [sys.executable, "-m", "mypy", "--no-color-output", "--no-pretty", "--no-error-summary"]
NICENESS = 10  # beside the suite, mypy takes the CPU the tests leave idle
WAIT_SECONDS = 900
# Under pytest-xdist the controller starts mypy before the workers (`start_for_the_workers`) and names its
# log here; the worker that runs the test reads it when the file `<log>.code` holds mypy's exit code.
LOG_ENV = "FOREMAN_MYPY_LOG"
_running: tuple[subprocess.Popen[bytes], IO[bytes]] | None = None


def start_beside_the_suite() -> None:
    """Start mypy in the background (once; not when the controller started it for the workers);
    `mypy_errors` waits for it."""
    global _running
    if _running is None and not os.environ.get(LOG_ENV):
        output = tempfile.NamedTemporaryFile(prefix="mypy-", suffix=".log")  # a pipe could fill and stall mypy
        _running = _start(output), output


def start_for_the_workers() -> None:
    """Start mypy in this process (pytest-xdist's controller), for the worker that runs the test: its log's
    path goes to the workers in LOG_ENV, and its exit code to `<log>.code` when it ends. The test then
    runs last (tests/conftest.py `_start_order`), when mypy is long done, instead of holding a worker
    while it runs."""
    global _running
    output = tempfile.NamedTemporaryFile(prefix="mypy-", suffix=".log")
    process = _start(output)
    _running = process, output
    code = Path(output.name + ".code")

    def record() -> None:
        code.write_text(str(process.wait()))

    threading.Thread(target=record, name="mypy-exit", daemon=True).start()
    os.environ[LOG_ENV] = output.name


def _start(output: IO[bytes]) -> subprocess.Popen[bytes]:
    return subprocess.Popen(MYPY, cwd=ROOT, stdout=output, stderr=subprocess.STDOUT,
                            preexec_fn=lambda: os.nice(NICENESS))


def stop_beside_the_suite() -> None:
    """End a mypy still running (a session stopped before the test, or the test deselected)."""
    if _running is not None and _running[0].poll() is None:
        _running[0].kill()
        _running[0].wait()
    if _running is not None:
        Path(_running[1].name + ".code").unlink(missing_ok=True)  # the controller's, when it started it


def mypy_errors() -> list[str]:
    """mypy's error lines over the configured files (notes left out)."""
    if log := os.environ.get(LOG_ENV):
        code, text = _started_by_the_controller(Path(log))
    else:
        start_beside_the_suite()
        assert _running is not None
        process, output = _running
        code = process.wait(WAIT_SECONDS)
        text = Path(output.name).read_text(errors="replace")
    assert code in (0, 1), f"mypy did not run (exit code {code}):\n{text}"
    return [line for line in text.splitlines() if ERROR.match(line)]


def _started_by_the_controller(log: Path) -> tuple[int, str]:
    """(exit code, output) of the mypy the controller started, once it has ended."""
    code = log.with_name(log.name + ".code")
    deadline = time.monotonic() + WAIT_SECONDS
    while not code.is_file() or not code.read_text().strip():
        assert time.monotonic() < deadline, f"mypy (started by the controller, log {log}) did not end in {WAIT_SECONDS} s"
        time.sleep(0.5)
    return int(code.read_text()), log.read_text(errors="replace")


def compare(errors: list[str], baseline: dict[str, int]) -> tuple[list[str], list[str]]:
    """(what got worse, with the errors of those files; what got better) against `baseline`."""
    counts = Counter(m.group("file") for line in errors if (m := ERROR.match(line)))
    worse, better = [], []
    for file in sorted(set(counts) | set(baseline)):
        found, allowed = counts.get(file, 0), baseline.get(file, 0)
        if found > allowed:
            lines = [line for line in errors if line.startswith(f"{file}:")]
            worse.append(f"{file}: {found} errors, {allowed} allowed by the baseline:\n  " + "\n  ".join(lines))
        elif found < allowed:
            better.append(f"{file}: {found} errors, the baseline says {allowed}")
    return worse, better


def test_compare_finds_new_errors_and_fixed_ones():
    errors = ["app/a.py:3: error: Missing type arguments for generic type \"dict\"  [type-arg]",
              "app/b.py:7: error: Name \"x\" is not defined  [name-defined]",
              "app/b.py:9: error: Name \"y\" is not defined  [name-defined]"]
    worse, better = compare(errors, {"app/a.py": 1, "app/b.py": 1, "app/c.py": 2})
    assert len(worse) == 1 and worse[0].startswith("app/b.py: 2 errors, 1 allowed") and "app/b.py:9:" in worse[0]
    assert better == ["app/c.py: 0 errors, the baseline says 2"]
    assert compare(errors, {})[0][0].startswith("app/a.py: 1 errors, 0 allowed")


def test_the_tree_type_checks_no_worse_than_the_baseline():
    baseline = json.loads(BASELINE.read_text())
    worse, better = compare(mypy_errors(), baseline)
    assert not worse, "New mypy errors (fix them; the baseline only goes down):\n" + "\n".join(worse)
    assert not better, ("Fewer mypy errors than tests/types_baseline.json allows: lower these files' counts there "
                        "(drop a file at 0) so they cannot come back:\n" + "\n".join(better))


if __name__ == "__main__":
    found = Counter(m.group("file") for line in mypy_errors() if (m := ERROR.match(line)))
    BASELINE.write_text(json.dumps(dict(sorted(found.items())), indent=2) + "\n")
    print(f"{BASELINE.name}: {sum(found.values())} errors in {len(found)} files")
