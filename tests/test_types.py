"""The tree type-checks with mypy as configured in pyproject.toml, no worse than the baseline.

`tests/types_baseline.json` holds, for each file that still has errors, how many; every other
file has none. The test fails when a file has more errors than its baseline (or any, when it has
no baseline), printing the errors of those files; and when a file has fewer, asking for its
baseline to be lowered (the baseline only goes down). `python -m tests.test_types` writes the
baseline from the tree as it is: for a merge that moved errors between files, never to let new
ones in.

Run time (the test's call, which is one mypy process over `app/`, `agents/` and `extractors/`;
the shared two-core machine, 2026-11-26): 57 s from a cold cache, 1.5 s warm (mypy's cache is
`.mypy_cache/`, which git ignores).
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
BASELINE = Path(__file__).with_name("types_baseline.json")
ERROR = re.compile(r"^(?P<file>[^:\s]+\.py):\d+: error: ")


def mypy_errors() -> list[str]:
    """mypy's error lines over the configured files (notes left out)."""
    done = subprocess.run([sys.executable, "-m", "mypy", "--no-color-output", "--no-pretty", "--no-error-summary"],
                          cwd=ROOT, capture_output=True, text=True, timeout=900)
    assert done.returncode in (0, 1), f"mypy did not run (exit code {done.returncode}):\n{done.stdout}{done.stderr}"
    return [line for line in done.stdout.splitlines() if ERROR.match(line)]


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
