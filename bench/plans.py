"""Plan quality on a small local model: this tree's planner against an older one, in one run.

    .venv/bin/python bench/plans.py [--before REF] [--base-url URL] [--skip N] [--only N] [--limit SECONDS]

Serves Qwen2.5-Coder-0.5B-Instruct (Q4_K_M, installed by .ci/install-realmodel.sh) with
llama-cpp-python at n_ctx 4096, unless --base-url names a running OpenAI-compatible server,
then plans 20 requests (English, German, French; answer-only, one task, several tasks; with and
without corpus documents) with the planner of REF (default: the commit before the planning
work, unpacked with git archive) and with this tree's, alternating per request so both see the
same machine load. Each side runs in one worker process for all requests, and each plan gets at
most --limit seconds (first answer and repairs; later, it counts as not valid). Prints, per
side: the share of valid plans on the first answer (as the model wrote it), without a second
call (after the deterministic repairs), after all repairs; the share with the right agents; the
median planning latency and the median prompt tokens of the first call (for requests with and
without documents); then the ratios after/before."""

from __future__ import annotations

import argparse
import contextlib
import json
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CORPUS = ROOT.parent / "shared" / "corpus"
sys.path.insert(0, str(ROOT))
from tests.realmodel import qwen_endpoint, wait_idle  # noqa: E402

BEFORE = "a55b04d"  # main before issue 13: the long prompt, no repairs, no streaming
LIMIT = 120.0  # seconds per plan; more is no use to a person waiting for a round

# (prompt, documents, acceptable sets of agents; an empty set: the answer needs no task)
CASES: list[tuple[str, list[str], list[set[str]]]] = [
    ("What is a good name for a bakery?", [], [set()]),
    ("Wie viele Tage hat ein Schaltjahr?", [], [set()]),
    ("Quelle est la capitale de l'Italie ?", [], [set()]),
    ("Give me three tips for a job interview.", [], [set(), {"writer"}]),
    ("Write a short cover letter for a junior accountant position.", [], [{"writer"}, set()]),
    ("Écris un court article sur le télétravail.", [], [{"writer"}, set()]),
    ("Fasse das Dokument zusammen", ["testWORD.docx"], [{"summarizer"}]),
    ("Summarise this document in three bullet points", ["docx_comments.docx"], [{"summarizer"}]),
    ("Résume ce document en cinq phrases.", ["sample-french-1.txt"], [{"summarizer"}]),
    ("Extract the table as CSV", ["testEXCEL.xlsx"], [{"data_extractor"}]),
    ("Extrahiere die Tabellen als CSV", ["2023-half-year-analyses-by-segment.xlsx"], [{"data_extractor"}]),
    ("Translate this document into German.", ["testWORD_numbered_list.docx"], [{"translator"}]),
    ("Traduis ce document en anglais.", ["sample-french-1.txt"], [{"translator"}]),
    ("Which team won the most Stanley Cups?", ["stanley-cups.tsv"], [{"analyst"}, {"data_extractor"}]),
    ("Welche Zahlen stehen in der Tabelle?", ["testEXCEL.xlsx"], [{"analyst"}, {"data_extractor"}]),
    ("Summarise the document, then translate the summary into French.", ["testWORD.docx"],
     [{"summarizer", "translator"}]),
    ("Extract the table as CSV and write a short report about it.", ["testEXCEL.xlsx"],
     [{"data_extractor", "writer"}, {"data_extractor", "analyst", "writer"}]),
    ("Fasse das Dokument zusammen und schreibe daraus einen Bericht.", ["docx_comments.docx"],
     [{"summarizer", "writer"}]),
    ("Extrais les tableaux puis rédige une note de synthèse.", ["2023-half-year-analyses-by-segment.xlsx"],
     [{"data_extractor", "writer"}, {"data_extractor", "summarizer"}]),
    ("Translate the document into German and into French.", ["testWORD_numbered_list.docx"], [{"translator"}]),
]

# Runs inside the tree being measured (its own agents/ and app/): one request per line on stdin, one
# result per line on stdout, so each side imports and loads its models once for all requests.
WORKER = r"""
import asyncio, json, sys, time
from pathlib import Path
sys.path.insert(0, ".")
from agents.base import DocumentText
try:
    from agents.model import Model
except ImportError:  # an older tree: the model interface was in app/
    Model = object
from agents.planning.manager import PlanLimits, RoundInput, make_plan
from agents.registry import build_registry
from app.llm.client import OpenAIModel
from extractors import extract

BASE_URL, CORPUS, LIMIT = sys.argv[1], Path(sys.argv[2]), float(sys.argv[3])

def load(name):
    data = (CORPUS / name).read_bytes()
    found = extract(data, name)
    document_of = getattr(DocumentText, "of", None)  # the service's own view of a document (tables, pages, sheets)
    if document_of is None:  # a tree before DocumentText.of
        try:
            from app.rounds.documents import document_of
        except ImportError:
            document_of = None
    if document_of is None:
        items = [(i.name, i.data) for i in found.items if i.is_text and i.data.strip()]
        summary = "; ".join(i.summary for i in found.items if i.summary)[:500]
        return DocumentText(name=name, ext=name.rsplit(".", 1)[-1], mime=found.mime, size=len(data),
                            items=items, summary=summary)
    return document_of(name, name.rsplit(".", 1)[-1], found.mime, len(data), found.items)

class Counting(Model):
    def __init__(self, inner):
        self.inner, self.name, self.offline, self.calls = inner, inner.name, False, []
        self.context_tokens = 4096
    def model_for(self, agent):
        return self.inner.model_for(agent)
    async def complete(self, request):
        response = await self.inner.complete(request)
        self.calls.append((request.purpose, response.usage.prompt_tokens, response.usage.calls))
        return response

async def main():
    registry = build_registry(entry_points=False)
    async with OpenAIModel(base_url=BASE_URL, api_key="none", model="qwen", timeout=LIMIT,
                           max_retries=0) as client:
        for line in sys.stdin:
            case = json.loads(line)
            model = Counting(client)
            inp = RoundInput(prompt=case["prompt"], documents=[load(d) for d in case["docs"]])
            started = time.perf_counter()
            result = {"ok": False, "agents": [], "repairs": 0, "error": "", "timed_out": False}
            try:
                # The whole plan (first answer and repairs) within the limit; a streaming client
                # closes its stream when cancelled, so the server stops generating.
                outcome = await asyncio.wait_for(make_plan(inp, model, registry, PlanLimits(max_tasks=8)),
                                                 LIMIT)
                result.update(ok=True, agents=[t.agent for t in outcome.plan.tasks],
                              repairs=len(getattr(outcome, "repairs", [])))
            except TimeoutError:
                result.update(error=f"no plan within {LIMIT:g}s", timed_out=True)
            except Exception as exc:
                result["error"] = str(exc)[:300]
            result["seconds"] = time.perf_counter() - started
            result["purposes"] = [c[0] for c in model.calls]
            # A refused response_format attempt reports no tokens, so this is the one planning prompt.
            result["first_prompt_tokens"] = model.calls[0][1] if model.calls else 0
            print(json.dumps(result), flush=True)

asyncio.run(main())
"""


class Side:
    """One tree's planner in a long-lived worker process."""

    def __init__(self, tree: Path, base_url: str, limit: float) -> None:
        self.tree, self.base_url, self.limit = tree, base_url, limit
        self.process: subprocess.Popen[str] | None = None
        self.errors = tempfile.TemporaryFile("w+")  # the planner's warnings; a pipe could fill up

    def plan(self, case: tuple[str, list[str], list[set[str]]]) -> dict:
        prompt, docs, _ = case
        if self.process is None or self.process.poll() is not None:
            self.process = subprocess.Popen(
                [sys.executable, "-c", WORKER, self.base_url, str(CORPUS), str(self.limit)], cwd=self.tree,
                text=True, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=self.errors)
        assert self.process.stdin and self.process.stdout
        self.process.stdin.write(json.dumps({"prompt": prompt, "docs": docs}) + "\n")
        self.process.stdin.flush()
        while line := self.process.stdout.readline():
            if line.startswith("{"):
                return json.loads(line)
        self.errors.seek(0)
        error = self.errors.read().strip().splitlines()
        self.process = None
        return {"ok": False, "agents": [], "repairs": 0, "seconds": 0.0, "purposes": [], "timed_out": False,
                "first_prompt_tokens": 0, "error": (error or ["the worker ended"])[-1]}

    def close(self) -> None:
        if self.process is not None and self.process.poll() is None:
            assert self.process.stdin
            self.process.stdin.close()
            try:
                self.process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.process.kill()


def summary(results: list[dict], cases: list[tuple[str, list[str], list[set[str]]]]) -> dict[str, float]:
    n = len(results)
    first = [r for r in results if r["ok"] and r["purposes"].count("repair") == 0 and not r["repairs"]]
    no_second = [r for r in results if r["ok"] and r["purposes"].count("repair") == 0]
    right = [r for r, (_, _, expected) in zip(results, cases) if r["ok"] and set(r["agents"]) in expected]
    bare = [r["first_prompt_tokens"] for r, c in zip(results, cases) if not c[1] and r["first_prompt_tokens"]]
    docs = [r["first_prompt_tokens"] for r, c in zip(results, cases) if c[1] and r["first_prompt_tokens"]]
    return {
        "valid_first": len(first) / n, "valid_no_second_call": len(no_second) / n,
        "valid_after_repairs": sum(r["ok"] for r in results) / n, "right_agents": len(right) / n,
        "median_seconds": statistics.median(r["seconds"] for r in results),
        "median_prompt_tokens_no_docs": statistics.median(bare) if bare else 0.0,
        "median_prompt_tokens_with_docs": statistics.median(docs) if docs else 0.0,
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--before", default=BEFORE, help="git ref of the planner to compare with "
                        "('none': this tree's planner only)")
    parser.add_argument("--base-url", default="", help="a running OpenAI-compatible server (…/v1)")
    parser.add_argument("--only", type=int, default=len(CASES), help="the first N requests only")
    parser.add_argument("--skip", type=int, default=0, help="leave out the first N requests (with --only: "
                        "requests N+1 to --only)")
    parser.add_argument("--limit", type=float, default=LIMIT, help="seconds a plan may take (first answer "
                        "and repairs); a plan not made by then counts as not valid")
    args = parser.parse_args()
    cases = CASES[args.skip:args.only]
    with contextlib.ExitStack() as stack:
        sides: dict[str, Side] = {}
        base_url = qwen_endpoint(stack, args.base_url)
        if args.before != "none":
            before = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="plans-before-")))
            archive = subprocess.run(["git", "-C", str(ROOT), "archive", args.before], check=True,
                                     capture_output=True).stdout
            subprocess.run(["tar", "-x", "-C", str(before)], input=archive, check=True)
            sides["before"] = Side(before, base_url, args.limit)
        sides["after"] = Side(ROOT, base_url, args.limit)
        for side in sides.values():
            stack.callback(side.close)
        results: dict[str, list[dict]] = {name: [] for name in sides}
        for number, case in enumerate(cases, args.skip + 1):
            for name, side in sides.items():
                result = side.plan(case)
                results[name].append(result)
                print(f"{number:2d} {name:6s} ok={result['ok']!s:5s} agents={result['agents']} "
                      f"calls={result['purposes']} {result['seconds']:.1f}s "
                      f"{result.get('error', '')[:120]}", flush=True)
                if result.get("timed_out"):
                    # The older planner does not stream: the server goes on generating after the
                    # client gave up. The next request must not pay for that.
                    wait_idle(base_url, 900)
    sums = {side: summary(r, cases) for side, r in results.items()}
    print(f"\n{len(cases)} requests ({args.skip + 1}-{args.skip + len(cases)}), Qwen2.5-Coder-0.5B-Instruct Q4_K_M, n_ctx 4096, "
          f"at most {args.limit:g}s per plan")
    print(f"{'':32s}" + "".join(f"{name:>10s}" for name in sums) + ("  after/before" if "before" in sums else ""))
    for key in sums["after"]:
        row = f"{key:32s}" + "".join(f"{sums[name][key]:10.2f}" for name in sums)
        if "before" in sums:
            b, a = sums["before"][key], sums["after"][key]
            row += f"{a / b:14.2f}" if b else f"{'-':>14s}"
        print(row)
    return 0


if __name__ == "__main__":
    sys.exit(main())
