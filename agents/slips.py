"""A small model's slips in what a planned task is told and reads, undone without a model call. Pure.

Qwen2.5 0.5B, shown the workflow's documents as catalogue lines and the earlier rounds as turns,
copies them into its tasks: "Find the entry fee in sommerfest.html (html, 1 KB, 1 tables, round 1,
uploaded): begins "Sommerfest 2024 ..."" sent the analyst searching for "uploaded" and "begins",
and "Plan: I have planned 1 step: run the agent writer. Tasks: t1 writer: ..." became a writer's
whole instruction for "Now translate that to German.". And asked to "Summarise the second one
only.", it read the first. Each fix is reported in a sentence, like `agents.repairs`' fixes.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Any

from agents.base import Plan
from agents.language import pointed_at

COPIED = 24  # characters: a span this long that the instructions share with the material, not the request
_PIECE, _SLIP = 4, 3  # a matched piece this long, this few characters from the next, continues a copy
_OWN_WORDS = 3  # instructions with fewer words of their own than this once the copies are out say nothing
_WORD = re.compile(r"[^\W\d_]{2,}")


def _copies(text: str, material: str, request: str) -> list[tuple[int, int]]:
    """The spans of `text` (start, end) that copy `material` and are not words of the request. A copy
    with a slip in it ("37 KB" for "36 KB") is one span: matches a few characters apart join."""
    low, asked = text.casefold(), " ".join(request.casefold().split())
    matcher = difflib.SequenceMatcher(None, low, material.casefold(), autojunk=False)
    runs: list[list[int]] = []  # start, end, characters matched
    for a, _, size in matcher.get_matching_blocks():
        if size < _PIECE:
            continue
        if runs and a - runs[-1][1] <= _SLIP:
            runs[-1][1:] = [a + size, runs[-1][2] + size]
        else:
            runs.append([a, a + size, size])
    return [(start, end) for start, end, matched in runs
            if matched >= COPIED and " ".join(low[start:end].split()) not in asked]


def _without(text: str, spans: Sequence[tuple[int, int]]) -> str:
    """`text` with the spans cut out and what they leave behind tidied: empty brackets and quotes,
    doubled blanks, a stray colon or semicolon."""
    keep = [True] * len(text)
    for start, end in spans:
        keep[start:end] = [False] * (end - start)
    cut = "".join(c for c, k in zip(text, keep, strict=True) if k)
    cut = re.sub(r"\(\s*\)|\[\s*\]|\"\s*\"|“\s*”|«\s*»", " ", cut)
    cut = re.sub(r"\s+([.,;:!?])", r"\1", " ".join(cut.split()))
    return re.sub(r"[:;,]+(?=[.!?]|$)", "", cut).strip(" :;,-")


def _own_words(text: str, names: Sequence[str]) -> int:
    for name in names:
        text = text.replace(name, " ")
    return len(_WORD.findall(text))


def uncopied(plan: Plan, request: str, catalogue: Mapping[str, str],
             earlier: Sequence[str]) -> tuple[Plan, list[str]]:
    """The plan with what its tasks' instructions copy from the planning prompt taken out.

    `catalogue`: each document's name and the description its catalogue line gives it (sizes, how it
    begins): never an instruction, always cut. `earlier`: the assistant's earlier turns the prompt
    showed (plans, final answers): an instruction may quote from them, so they are cut only when the
    instruction is nothing else. Instructions left with fewer than three words of their own (the
    documents' names not counted) become the user's request."""
    names = list(catalogue)
    notes, tasks = [], []
    for task in plan.tasks:
        text = task.instructions
        spans = [s for description in catalogue.values() for s in _copies(text, description, request)]
        kept = _without(text, spans) if spans else text
        echoed = [s for turn in earlier for s in _copies(kept, turn, request)]
        if echoed and _own_words(_without(kept, echoed), names) < _OWN_WORDS:
            kept = ""
        if kept == text:
            tasks.append(task)
            continue
        if _own_words(kept, names) < _OWN_WORDS:
            kept = request
            notes.append(f"task '{task.id}': its instructions only copied the planning prompt's documents or "
                         "earlier rounds: it does the user's request instead")
        else:
            notes.append(f"task '{task.id}': what its instructions copied from the documents' catalogue lines "
                         "was taken out")
        tasks.append(replace(task, instructions=kept))
    return (replace(plan, tasks=tasks), notes) if notes else (plan, [])


def pointed_inputs(plan: Plan, request: str, facts: Sequence[Mapping[str, Any]]) -> tuple[Plan, list[str]]:
    """The plan with the documents the request points at explicitly (a file's name, "the second one",
    "that", "the summary of round 2": `agents.language.pointed_at`) read by each of its first tasks
    that reads none of them. A document the workflow produced in the round an earlier answer pointed
    at is that answer too ("translate that" read as the file the summary went to is kept)."""
    pointed = pointed_at(request, facts)
    if not pointed:
        return plan, []
    rounds = {int(f.get("round") or 0) for f in facts if f["name"] in pointed and f.get("origin") == "answer"}
    same = set(pointed) | {str(f["name"]) for f in facts
                           if f.get("origin") == "produced" and int(f.get("round") or 0) in rounds}
    catalogue = {str(f["name"]) for f in facts}
    notes, tasks = [], []
    for task in plan.tasks:
        read = [i for i in task.inputs if i in catalogue]
        if task.depends_on or same & set(read):
            tasks.append(task)
            continue
        inputs = pointed + [i for i in task.inputs if i not in catalogue]
        notes.append(f"task '{task.id}': the request points at {', '.join(pointed)}, which it did not read "
                     f"({', '.join(read) or 'nothing'}): it reads them")
        tasks.append(replace(task, inputs=inputs))
    return (replace(plan, tasks=tasks), notes) if notes else (plan, [])
