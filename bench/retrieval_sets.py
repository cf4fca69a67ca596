"""Retrieval on the two question sets (tests/question_set.py): recall@5 of the passage holding the
answer and the offline analyst's answer-quoted rate, for BM25 alone, vectors alone and hybrid.

    .venv/bin/python bench/retrieval_sets.py [--vectors FILE] [--embedder e5|use|ensemble] [--sets tuning]
                                             [--no-rules]

`--vectors FILE` keeps the passages' vectors in FILE between runs (a pickle, by model and text), so
a second run does not embed the long tuning book again (minutes of CPU); an ensemble's parts are
kept each under its own model. `--embedder` measures one model alone or the ensemble the service
uses (the default, `agents.knowledge.embeddings.local_embedder`); `--sets tuning` leaves the held-out set
out (while choosing); `--no-rules` skips the runs with each hand-written rule removed.

Printed per set (tuning, the cross-language tuning questions, those over a group of documents in
several languages, held-out) and, on the held-out set,
for same-language and cross-language questions apart. Run by bench/quality.py too.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import pickle
import sys
from collections.abc import Callable
from pathlib import Path
from unittest import mock

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import numpy as np  # noqa: E402

from agents.base import DocumentText, Passage, TaskContext, TaskSpec  # noqa: E402
from agents.builtin.analyst import PASSAGES, Analyst, follow_up  # noqa: E402
from agents.knowledge.embeddings import Embedder, Ensemble, LocalE5, LocalUSE, local_embedder  # noqa: E402
from agents.knowledge.indexed import text_items  # noqa: E402
from agents.knowledge.retrieval import MemoryRetriever  # noqa: E402
from agents.language import refers_back  # noqa: E402
from agents.offline import OfflineModel  # noqa: E402
from extractors import extract  # noqa: E402
from tests.question_set import (  # noqa: E402
    CROSS_GROUPS,
    CROSS_TUNING,
    CROSS_TUNING_MIXED,
    GROUPS,
    HELDOUT,
    HELDOUT_GROUPS,
    QUESTIONS,
    Question,
    _norm,
    correct,
    cross_language,
    document_path,
)

MODES = ("keyword", "vector", "hybrid")


def load_groups(groups: dict[str, list[str]]) -> dict[str, list[DocumentText]]:
    out: dict[str, list[DocumentText]] = {}
    for group, names in groups.items():
        out[group] = []
        for n, name in enumerate(names):
            data = document_path(name).read_bytes()
            items = text_items(extract(data, name).items)
            out[group].append(DocumentText(name=name, ext="", mime="", size=len(data), items=items, file_id=n))
    return out


def history(q: Question) -> list[tuple[str, str]]:
    return [("user", f"[round 1] {q.previous}"), ("assistant", "[round 1] (answered)")] if q.previous else []


async def retrieved(q: Question, docs: list[DocumentText], retriever: MemoryRetriever) -> list[Passage]:
    """The passages the analyst would quote from, found as it finds them (follow-ups included)."""
    found = await retriever.search(q.question, docs, PASSAGES)
    if not found or refers_back(q.question):
        _, found = await follow_up(q.question, found, docs, history(q), retriever)
    return found


def holds_answer(q: Question, passage: Passage) -> bool:
    text = _norm(passage.text)
    return passage.name == q.document and any(_norm(f) in text for f in (q.fact, q.source_fact) if f)


async def score(questions: list[Question], groups: dict[str, list[DocumentText]],
                retriever: MemoryRetriever) -> list[tuple[Question, bool, bool]]:
    """(question, answer passage in the top 5, answer quoted by the offline analyst) per question."""
    out = []
    for q in questions:
        docs = groups[q.group]
        found = await retrieved(q, docs, retriever)
        recall = any(holds_answer(q, p) for p in found[:5])
        task = TaskSpec(id="t1", agent="analyst", instructions=q.question)
        context = TaskContext(prompt=q.question, language=q.language, documents={d.name: d for d in docs},
                              predecessors={}, model=OfflineModel(), history=history(q), retriever=retriever)
        result = await Analyst().run(task, context)
        citations = result.meta.get("citations", [])
        quoted = correct(q, result.text, [c["name"] for c in citations], citations[0]["quote"] if citations else "")
        out.append((q, recall, quoted))
    return out


def line(label: str, rows: list[tuple[Question, bool, bool]]) -> str:
    n = max(len(rows), 1)
    return (f"    {label:16s} n={len(rows):3d}  recall@5 {sum(r for _, r, _ in rows) / n:.3f}  "
            f"answer quoted {sum(a for _, _, a in rows) / n:.3f}")


class Kept:
    """An embedder whose passages' vectors are kept by text (in the `--vectors` file between runs)."""

    def __init__(self, embedder: Embedder, store: dict[str, np.ndarray]) -> None:
        self.embedder = embedder
        self.name = embedder.name
        self.store = store

    def passages(self, texts: list[str]) -> np.ndarray:
        missing = [t for t in dict.fromkeys(texts) if t not in self.store]
        if missing:
            self.store.update(zip(missing, self.embedder.passages(missing), strict=True))
        return np.stack([self.store[t] for t in texts]) if texts else self.embedder.passages([])

    def query(self, text: str) -> np.ndarray:
        return self.embedder.query(text)


def kept(embedder: Embedder, vectors: dict[str, dict]) -> Embedder:
    """The embedder with its passages' vectors kept in `vectors` by model (an ensemble's by part)."""
    if isinstance(embedder, Ensemble):
        return Ensemble([(kept(part, vectors), weight) for part, weight in embedder.weighted()])
    return Kept(embedder, vectors.setdefault(embedder.name, {}))


EMBEDDERS: dict[str, Callable[[], Embedder]] = {"ensemble": local_embedder, "e5": LocalE5, "use": LocalUSE}


async def measure(embedder: Embedder | None = None, modes: tuple[str, ...] = MODES,
                  cache: dict | None = None,
                  only: str = "") -> dict[tuple[str, str], list[tuple[Question, bool, bool]]]:
    """{(set, mode): rows}, on the sets whose names start with `only` (all by default)."""
    embedder = embedder or local_embedder()
    cache = {} if cache is None else cache
    tuning = load_groups(GROUPS | CROSS_GROUPS) if only != "held-out" else {}
    sets = {"tuning": (QUESTIONS, tuning), "tuning cross-language": (CROSS_TUNING, tuning),
            "tuning cross-language, mixed group": (CROSS_TUNING_MIXED, tuning)}
    if "held-out".startswith(only):
        sets["held-out"] = (HELDOUT, load_groups(HELDOUT_GROUPS))
    sets = {name: s for name, s in sets.items() if name.startswith(only)}
    results = {}
    for name, (questions, groups) in sets.items():
        for mode in modes:
            retriever = MemoryRetriever(None if mode == "keyword" else embedder, mode, cache)
            results[(name, mode)] = await score(questions, groups, retriever)
            report({(name, mode): results[(name, mode)]})  # as it goes: a long run shows its figures early
    return results


# Hand-written language rules the embeddings may make unneeded, each a switch that turns it off
# for a measurement (a rule measured as unneeded on the held-out set is deleted, and leaves here).
# Removed after measurement: the same-meaning stems (revenue/sales/Umsatz/ventes; held-out unchanged) and
# the superlative reordering (held-out recall@5 unchanged, hybrid answer quoted 0.853 -> 0.882 without it).
def _without_follow_up_words() -> contextlib.AbstractContextManager:
    """Follow-ups not read by their pronouns and few words (agents.language.refers_back); a question
    whose own words find nothing is still read with the one before it."""
    stack = contextlib.ExitStack()
    for where in ("agents.builtin.analyst.refers_back", f"{__name__}.refers_back"):
        stack.enter_context(mock.patch(where, lambda question: False))
    return stack


RULES: dict[str, Callable[[], contextlib.AbstractContextManager]] = {
    "follow-up pronouns and few words (agents.language.refers_back)": _without_follow_up_words,
}


async def measure_rules(embedder: Embedder, cache: dict, only: str = "") -> dict[str, dict]:
    """{rule: {(set, mode): rows}} with that rule off, for BM25 and hybrid."""
    out = {}
    for rule, off in RULES.items():
        print(f"With the rule removed: {rule}")
        with off():
            out[rule] = await measure(embedder, ("keyword", "hybrid"), cache, only)
    return out


def report(results: dict[tuple[str, str], list[tuple[Question, bool, bool]]]) -> None:
    for (name, mode), rows in results.items():
        print(f"  {name} set, {mode}:")
        print(line("all", rows))
        if name == "held-out":
            print(line("same language", [r for r in rows if not cross_language(r[0])]))
            print(line("cross-language", [r for r in rows if cross_language(r[0])]))
            print(line("follow-ups", [r for r in rows if r[0].previous]))


async def _all(vectors: Path | None, model: str = "ensemble", only: str = "", rules: bool = True) -> tuple[dict, dict]:
    stored: dict[str, dict] = pickle.loads(vectors.read_bytes()) if vectors and vectors.exists() else {}
    embedder = kept(EMBEDDERS[model](), stored)
    print(f"Vectors: {embedder.name}")
    cache: dict[str, np.ndarray] = {}
    try:
        return (await measure(embedder, MODES, cache, only),
                await measure_rules(embedder, cache, only) if rules else {})
    finally:
        if vectors:
            vectors.write_bytes(pickle.dumps(stored))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--vectors", type=Path, help="keep the passages' vectors in this file between runs")
    parser.add_argument("--embedder", choices=sorted(EMBEDDERS), default="ensemble",
                        help="the vectors measured: the service's ensemble (default) or one model alone")
    parser.add_argument("--sets", choices=("tuning", "held-out"), default="",
                        help="only the tuning sets (while choosing) or only the held-out set")
    parser.add_argument("--no-rules", action="store_true", help="skip the runs with each hand-written rule removed")
    args, _ = parser.parse_known_args()  # bench/quality.py runs this with its own arguments
    print("Retrieval (recall@5 of the answer passage; offline analyst's answer quoted), both question sets:")
    asyncio.run(_all(args.vectors, args.embedder, args.sets, not args.no_rules))


if __name__ == "__main__":
    main()
