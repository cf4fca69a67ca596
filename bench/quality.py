"""Quality of what the offline agents deliver, beside a baseline, measured in one run.

    .venv/bin/python bench/quality.py

Sections (each a function returning its figures, printed by `main`):
- question answering: the tuning question set of tests/question_set.py (en/de/fr, four documents
  per question, three of them distractors), answered by the offline analyst (BM25 over
  Snowball-stemmed passages) beside a baseline that quotes the paragraph sharing the most words;
- retrieval on both question sets, tuning and held-out (bench/retrieval_sets.py): recall@5 of the
  answer passage and the answer-quoted rate for BM25 alone, vectors alone and hybrid;
- table fidelity: cells of every table-bearing corpus document found equal, at the same place,
  in the delivered workbook (cells equal / cells in the source), for the tables kept from the
  document's structure and for the old path that re-split the flattened text;
- language detection: UDHR article 1 in the languages named below and one-line requests,
  py3langid with the stopword rules for short prompts against the stopword rules alone.
"""

from __future__ import annotations

import asyncio
import re
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from agents.base import DocumentText, TaskContext, TaskSpec  # noqa: E402
from agents.builtin.analyst import Analyst  # noqa: E402
from agents.knowledge.indexed import text_items  # noqa: E402
from agents.language import detect as language  # noqa: E402
from agents.offline import OfflineModel  # noqa: E402
from agents.registry import build_registry  # noqa: E402
from agents.toolkit.files import xlsx_bytes  # noqa: E402
from agents.toolkit.tables import find_tables  # noqa: E402
from extractors import extract  # noqa: E402
from extractors.language import by_words  # noqa: E402
from tests.agents.conftest import load_document, play_round  # noqa: E402
from tests.corpus import CORPUS  # noqa: E402
from tests.fidelity import TABLE_DOCS, compare, source_tables, workbook_tables  # noqa: E402
from tests.question_set import GROUPS, HELDOUT, QUESTIONS, correct, keyword_baseline  # noqa: E402
from tests.tuning.first_heldout import FIRST_HELDOUT as CASES  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parent))
import retrieval_sets  # noqa: E402

UDHR_LANGUAGES = {
    "English": "en", "French": "fr", "German, Standard (1996)": "de", "Spanish": "es", "Italian": "it",
    "Dutch": "nl", "Russian": "ru", "Polish": "pl", "Czech": "cs", "Swedish": "sv", "Danish": "da",
    "Finnish": "fi", "Hungarian": "hu", "Turkish": "tr", "Japanese": "ja", "Korean": "ko", "Hebrew": "he",
    "Hindi": "hi", "Thai": "th", "Vietnamese": "vi", "Indonesian": "id", "Ukrainian": "uk", "Bulgarian": "bg",
    "Croatian": "hr", "Slovak": "sk", "Estonian": "et", "Latvian": "lv", "Lithuanian": "lt", "Basque": "eu",
    "Icelandic": "is", "Welsh": "cy", "Afrikaans": "af", "Latin": "la", "Tagalog": "tl", "Swahili": "sw",
    "Esperanto": "eo", "Galician": "gl",
}
PROMPTS = [
    ("en", "Summarize this document please."), ("en", "Extract the tables as Excel."),
    ("de", "Fasse das Dokument bitte zusammen."), ("de", "Kannst du mir die Tabellen als Excel-Datei geben?"),
    ("fr", "Résume ce document, s'il te plaît."), ("fr", "Extrais les tableaux en CSV"),
    ("es", "Resume este documento, por favor."), ("de", "Wer hat den Vertrag unterschrieben?"),
    ("fr", "Pourquoi le projet est-il en retard ?"), ("en", "What does the contract say about termination?"),
    ("it", "Riassumi questo documento, per favore."), ("nl", "Vat dit document samen alstublieft."),
]
LOREM = ("Lorem ipsum dolor sit amet, consetetur sadipscing elitr, sed diam nonumy eirmod tempor invidunt "
         "ut labore et dolore magna aliquyam erat, sed diam voluptua.")


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
        citations = result.meta.get("citations", [])
        ours += correct(q, result.text, [c["name"] for c in citations], citations[0]["quote"] if citations else "")
        baseline += keyword_baseline(q, {name: d.text for name, d in docs.items()})
    return ours, baseline, len(QUESTIONS)


def print_question_set(ours: int, baseline: int, total: int) -> None:
    print(f"question set ({total} questions, en/de/fr, 3 distractors each):")
    print(f"  offline analyst (BM25, Snowball stems, citations): {ours}/{total} = {ours / total:.0%}")
    print(f"  baseline (paragraph with most shared words):       {baseline}/{total} = {baseline / total:.0%}")
    print(f"  gain: {ours / max(baseline, 1):.2f}x")


async def _delivered(name: str) -> bytes:
    done = await play_round("Extract the tables as Excel.", [load_document(name)], OfflineModel(),
                           build_registry(entry_points=False))
    files = [f for r in done.results.values() if r for f in r.files if f.name.endswith(".xlsx")]
    return files[0].data if files else b""


def table_fidelity() -> list[tuple[str, int, int, int]]:
    """(document, cells equal now, cells equal by re-splitting the text, cells in the source)."""
    rows = []
    for name in TABLE_DOCS:
        source = source_tables(name)
        data = asyncio.run(_delivered(name))
        now, total = compare(source, workbook_tables(data) if data else [])
        # The old path: the extracted items' text, flattened and re-split by layout rules.
        raw = extract((CORPUS / name).read_bytes(), name)
        flattened = find_tables([(item.name, item.data) for item in raw.items if item.is_text])
        before, _ = compare(source, workbook_tables(xlsx_bytes(flattened)) if flattened else [])
        rows.append((name, now, before, total))
    return rows


def _udhr() -> list[tuple[str, str]]:
    text = (CORPUS / "UDHR_first_article_all.txt").read_text(encoding="utf-8")
    samples = []
    for block in re.split(r"\n\n(?=[^\n]+\n[^\n])", text):
        head, _, body = block.strip().partition("\n")
        if head in UDHR_LANGUAGES:
            samples.append((UDHR_LANGUAGES[head], body.strip()))
    return samples


def heldout_prompts() -> list[tuple[str, str]]:
    """(language, text) of the retrieval held-out questions and of the first held-out request set's
    prompts (now in tests/tuning/: the same texts as before issue 43, so the figure stays comparable)."""
    return [(q.language, q.question) for q in HELDOUT] + [(c.lang, c.prompt) for c in CASES if c.lang]


def language_detection() -> list[tuple[str, int, int, int, int, str, float, int, int]]:
    """(detector, UDHR right, UDHR texts, prompts right, prompts, lorem ipsum's language, ms per text,
    held-out right, held-out texts)."""
    samples, heldout, out = _udhr(), heldout_prompts(), []
    language.load_detector()
    for label, detect in (("py3langid", language.detect_language),
                          ("stop words alone", by_words)):
        start = time.perf_counter()
        udhr = sum(detect(text) == code for code, text in samples)
        prompts = sum(detect(text) == code for code, text in PROMPTS)
        seconds = time.perf_counter() - start
        held = sum(detect(text) == code for code, text in heldout)
        out.append((label, udhr, len(samples), prompts, len(PROMPTS), detect(LOREM),
                    1000 * seconds / (len(samples) + len(PROMPTS)), held, len(heldout)))
    return out


def main() -> None:
    print_question_set(*asyncio.run(question_set_scores()))
    retrieval_sets.main()  # both question sets: BM25, vectors, hybrid
    print("Table fidelity (cells equal / cells in the source), delivered workbook vs text re-split:")
    rows = table_fidelity()
    for name, now, before, total in rows:
        print(f"  {name:42s} {now:4d}/{total:<4d} vs {before:4d}/{total:<4d}")
    now = sum(r[1] for r in rows)
    before = sum(r[2] for r in rows)
    total = sum(r[3] for r in rows)
    print(f"  {'all':42s} {now:4d}/{total:<4d} = {now / total:.3f} vs {before / total:.3f}: "
          f"{now / max(before, 1):.2f} times the cells kept")
    print("Language detection:")
    for label, udhr, n, prompts, m, lorem, ms, held, h in language_detection():
        print(f"  {label:26s} UDHR {udhr}/{n}, requests {prompts}/{m}, lorem ipsum -> {lorem}, {ms:.2f} ms per text; "
              f"held-out questions and prompts {held}/{h}")


if __name__ == "__main__":
    main()
