"""A summary of a long text costs a bounded number of model calls, whatever the text's length."""

from __future__ import annotations

from collections import Counter

import pytest

from agents.base import TaskContext, TaskSpec
from agents.builtin.summarizer import MAP_PARTS, part_limit
from agents.language import informative_passages
from agents.offline import OfflineModel
from agents.registry import build_registry
from agents.tasks.calls import input_budget
from agents.tasks.run import run_task
from tests.agents.conftest import RecordingModel, load_document, squash, text_document


def _long(copies: int) -> str:
    prose = load_document("tracemonkey.pdf").text
    return "".join(f"Part {n}.\n\n{prose}\n\n" for n in range(1, copies + 1))


async def _summarise(text: str) -> tuple[str, Counter, list[str]]:
    doc = text_document("long.txt", text)
    task = TaskSpec(id="t1", agent="summarizer", instructions="Summarise it.", inputs=[doc.name])
    model = RecordingModel(OfflineModel(context_tokens=3000))
    lines: list[str] = []

    async def progress(line: str) -> None:
        lines.append(line)

    context = TaskContext(prompt="Summarise it.", language="en", documents={doc.name: doc}, predecessors={},
                          model=model, history=[], progress=progress)
    result = await run_task(build_registry(entry_points=False), task, context)
    return result.text, Counter(request.purpose for request, _ in model.calls), lines


@pytest.mark.parametrize("copies", [1, 6])
async def test_a_long_texts_summary_makes_a_bounded_number_of_calls_and_repeats_no_sentence(copies):
    text = _long(copies)
    summary, calls, lines = await _summarise(text)
    # tracemonkey once is ~30 parts of a 3000-token context; six times, ~180: the same bound.
    assert 1 <= calls["map"] <= MAP_PARTS and 1 <= calls["reduce"] < MAP_PARTS
    bullets = [line[2:] for line in summary.splitlines() if line.startswith("> ")]
    assert bullets and len(set(bullets)) == len(bullets), "no sentence is quoted twice"
    source = squash(text)
    assert all(b in source for b in bullets), "the offline model quotes the text, honestly"
    # Its progress: which passages were kept, each part as it ends, then the merge.
    # A 3000-token window reads fewer parts than MAP_PARTS: together they stay within SUMMARY_TOKENS.
    parts = part_limit(input_budget(OfflineModel(context_tokens=3000), "summarizer"))
    assert 2 <= parts < MAP_PARTS
    assert lines[0].startswith(f"Summarising long.txt: {4 * parts} most informative of ") and f"{parts} parts" in lines[0]
    assert [line for line in lines if f" of {parts} done" in line] == [
        f"Summarising long.txt: part {n} of {parts} done" for n in range(1, parts + 1)]
    assert lines[-1].startswith(f"Summarising long.txt: merging {parts} partial results in 1 call")


def test_passages_that_repeat_are_chosen_once():
    topics = ["Tracing compilers record hot loops and compile them to machine code quickly.",
              "Type specialisation lets the compiler emit code for integers and doubles separately.",
              "Garbage collection pauses are shortened by incremental marking of the heap objects."]
    passages = [topics[i % 3] for i in range(30)]
    chosen = informative_passages(passages, 6)
    assert sorted({passages[i] for i in chosen}) == sorted(topics) and len(chosen) == 3
