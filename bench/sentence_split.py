"""Sentence splitting speed on a book: `agents.language.split_sentences` over freeculture.pdf's text.

    .venv/bin/python bench/sentence_split.py [--tree DIR]

Prints the sentences found, the seconds (best of 3, after one warm-up that also loads the language
detector) and the sentences per second. With `--tree DIR` (another checkout, e.g. a `git worktree`
of main for the "before" figures) the same runs there in a subprocess, and the ratio
this tree / DIR is printed. CPU seconds of this process (the machine is shared): compare within one run.

Measured (issue 32, sentencex for the abbreviation list): see `agents/language/sentences.py`.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def _text() -> str:
    from extractors import extract
    from tests.corpus import CORPUS

    name = "freeculture.pdf"
    found = extract((CORPUS / name).read_bytes(), name)
    return "\n\n".join(i.data for i in found.items if i.is_text and isinstance(i.data, str))


def measure() -> dict[str, float]:
    """{'characters', 'sentences', 'seconds'} for split_sentences over the book in this process."""
    from agents.language import split_sentences

    text = _text()
    split_sentences(text[:5000])  # loads the language detector
    best = float("inf")
    sentences = []
    for _ in range(3):
        start = time.process_time()
        sentences = split_sentences(text)
        best = min(best, time.process_time() - start)
    return {"characters": len(text), "sentences": len(sentences), "seconds": best}


def _in(tree: Path) -> dict[str, float]:
    code = (f"import sys, json; sys.path.insert(0, {str(tree)!r}); sys.path.insert(1, {str(REPO / 'bench')!r});"
            "import sentence_split; print(json.dumps(sentence_split.measure()))")
    env = {**os.environ, "PYTHONPATH": str(tree)}
    out = subprocess.run([sys.executable, "-c", code], cwd=tree, env=env, capture_output=True, text=True, check=True)
    return dict(json.loads(out.stdout.strip().splitlines()[-1]))


def _line(label: str, m: dict[str, float]) -> str:
    return (f"  {label:6s} {int(m['sentences']):6d} sentences of {int(m['characters']):,} characters in "
            f"{m['seconds']:.2f} s: {m['sentences'] / m['seconds']:,.0f} sentences/s")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tree", type=Path, help="another checkout to compare with (the 'before')")
    args = parser.parse_args()
    print("split_sentences over freeculture.pdf's text:")
    now = _in(REPO)
    print(_line("here", now))
    if args.tree:
        before = _in(args.tree.resolve())
        print(_line("before", before))
        ratio = (now["sentences"] / now["seconds"]) / (before["sentences"] / before["seconds"])
        print(f"  sentences/s here / before: {ratio:.2f}")


if __name__ == "__main__":
    main()
