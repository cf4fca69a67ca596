"""A 30 MB text file from upload bytes to summary, with the offline model: where the time goes.

Run: python bench/long_text.py [--mb 30] [--no-before]
The text is the corpus's prose (freeculture.pdf's extracted text, then the other text files),
repeated with a part number until it is --mb megabytes: a long file whose sentences recur, the
case where a summary must not quote one sentence twice. Prints the seconds of extraction, of the
clean-up agents read through, and of the summary (its model calls counted), and the number of
repeated sentences in the summary (0 expected). Wall seconds on a shared 2-core machine.

"before": the summary as it was, one map call per budget-sized chunk of the whole text (MAP_PARTS
lifted); "after": at most MAP_PARTS map calls over the most informative passages. Both in one run.
"""

from __future__ import annotations

import argparse
import asyncio
import logging
import sys
import time
from collections import Counter
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from agents.base import DocumentText  # noqa: E402
from agents.builtin import summarizer  # noqa: E402
from agents.offline import OfflineModel  # noqa: E402
from agents.registry import build_registry  # noqa: E402
from extractors import build_registry as build_extractors  # noqa: E402
from tests.agents.conftest import RecordingModel, play_round  # noqa: E402
from tests.corpus import CORPUS  # noqa: E402


def long_text(megabytes: float) -> bytes:
    extractors = build_extractors(ocr=False)
    book = "\n\n".join(i.data for i in extractors.extract((CORPUS / "freeculture.pdf").read_bytes(),
                                                          "freeculture.pdf").items)
    prose = book + "\n\n" + (CORPUS / "UDHR_first_article_all.txt").read_text(encoding="utf-8")
    parts, size, n = [], 0, 0
    while size < megabytes * 1_000_000:
        n += 1
        part = f"Part {n}.\n\n{prose}\n\n"
        parts.append(part)
        size += len(part.encode("utf-8"))
    return "".join(parts).encode("utf-8")


async def main(megabytes: float, before: bool) -> None:
    logging.getLogger("pypdf").setLevel(logging.ERROR)  # one line per odd font of the book is noise here
    data = long_text(megabytes)
    print(f"text: {len(data) / 1e6:.1f} MB")
    start = time.perf_counter()
    extraction = build_extractors(ocr=False).extract(data, "long.txt")
    extracted = time.perf_counter() - start
    start = time.perf_counter()
    doc = DocumentText.of("long.txt", "txt", extraction.mime, len(data), extraction.items)
    cleaned = time.perf_counter() - start
    print(f"extraction: {extracted:.1f} s ({extraction.mime}); clean-up for agents: {cleaned:.1f} s")
    for label, parts in ([("before", 10**9)] if before else []) + [("after", summarizer.MAP_PARTS)]:
        await summarise(label, doc, parts)


async def summarise(label: str, doc, parts: int) -> None:
    kept, summarizer.MAP_PARTS = summarizer.MAP_PARTS, parts
    try:
        model = RecordingModel(OfflineModel())
        start = time.perf_counter()
        done = await play_round("Summarize this document.", [doc], model, build_registry(entry_points=False))
        summarised = time.perf_counter() - start
    finally:
        summarizer.MAP_PARTS = kept
    [summary] = done.by_agent("summarizer")
    purposes = Counter(request.purpose for request, _ in model.calls)
    bullets = [line[2:].strip() for line in summary.text.splitlines() if line.startswith("- ")]
    repeated = sum(n - 1 for n in Counter(bullets).values() if n > 1)
    print(f"{label}: round (plan, summary, final) {summarised:.1f} s, model calls {dict(purposes)}; "
          f"summary {len(bullets)} sentences, {repeated} repeated")

if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--mb", type=float, default=30)
    parser.add_argument("--no-before", dest="before", action="store_false",
                        help="skip the unbounded summary (~944 map calls at 30 MB)")
    args = parser.parse_args()
    asyncio.run(main(args.mb, args.before))
