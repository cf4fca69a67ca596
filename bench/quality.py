"""Quality of what the offline agents deliver, measured on the shared corpus in this run.

    .venv/bin/python bench/quality.py

Question answering: the question set of tests/question_set.py (en/de/fr, four documents per
question, three of them distractors), answered by the offline analyst (BM25 over Snowball-stemmed
passages) beside a baseline that quotes the paragraph sharing the most words with the question.
"""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from agents.analyst import Analyst  # noqa: E402
from agents.base import DocumentText, TaskContext, TaskSpec  # noqa: E402
from agents.offline import OfflineModel  # noqa: E402
from app.search import text_items  # noqa: E402
from extractors import extract  # noqa: E402
from tests.question_set import GROUPS, QUESTIONS, correct, keyword_baseline  # noqa: E402

CORPUS = Path(__file__).resolve().parents[2] / "shared" / "corpus"


async def question_set_scores() -> tuple[int, int, int]:
    """(answered right by the offline analyst, by the keyword-overlap baseline, questions)."""
    groups: dict[str, dict[str, DocumentText]] = {}
    for group, names in GROUPS.items():
        groups[group] = {}
        for n, name in enumerate(names):
            data = (CORPUS / name).read_bytes()
            items = text_items(extract(data, name).items)
            groups[group][name] = DocumentText(name=name, ext="", mime="", size=len(data), items=items, file_id=n)
    ours = baseline = 0
    for q in QUESTIONS:
        docs = groups[q.group]
        task = TaskSpec(id="t1", agent="analyst", instructions=q.question)
        context = TaskContext(prompt=q.question, language=q.language, documents=docs, predecessors={},
                              model=OfflineModel())
        result = await Analyst().run(task, context)
        ours += correct(q, result.text, [c["name"] for c in result.meta.get("citations", [])])
        baseline += keyword_baseline(q, {name: d.text for name, d in docs.items()})
    return ours, baseline, len(QUESTIONS)


def print_question_set(ours: int, baseline: int, total: int) -> None:
    print(f"question set ({total} questions, en/de/fr, 3 distractors each):")
    print(f"  offline analyst (BM25, Snowball stems, citations): {ours}/{total} = {ours / total:.0%}")
    print(f"  baseline (paragraph with most shared words):       {baseline}/{total} = {baseline / total:.0%}")
    print(f"  gain: {ours / max(baseline, 1):.2f}x")


if __name__ == "__main__":
    print_question_set(*asyncio.run(question_set_scores()))
