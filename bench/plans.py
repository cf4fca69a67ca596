"""Plan quality on a small local model: this tree's planner against an older one, in one run.

    .venv/bin/python bench/plans.py [--before REF] [--base-url URL] [--only N]

Serves Qwen2.5-Coder-0.5B-Instruct (Q4_K_M, installed by .ci/install-realmodel.sh) with
llama-cpp-python at n_ctx 4096, unless --base-url names a running OpenAI-compatible server,
then plans 20 requests (English, German, French; answer-only, one task, several tasks; with and
without corpus documents) with the planner of REF (default: the commit before the planning
work, checked out in a temporary git worktree) and with this tree's, alternating per request so
both see the same machine load. Prints, per side: the share of valid plans on the first answer
(as the model wrote it), after the deterministic repairs, after all repairs; the share with the
right agents; the median planning latency and the median prompt tokens of the first call (for
requests with and without documents); then the ratios after/before.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CORPUS = ROOT.parent / "shared" / "corpus"
BEFORE = "a55b04d"  # main before issue 13: the long prompt, no repairs, no streaming

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

# Runs inside the tree being measured (its own agents/ and app/), one request per line on stdin.
WORKER = r'''
import asyncio, json, sys, time
from pathlib import Path
sys.path.insert(0, ".")
from agents.base import DocumentText
from agents.model import Model
from agents.manager import PlanLimits, RoundInput, make_plan
from agents.registry import build_registry
from app.llm import OpenAIModel
from extractors import extract

CORPUS = Path(sys.argv[2])

def load(name):
    data = (CORPUS / name).read_bytes()
    found = extract(data, name)
    items = [(i.name, i.data) for i in found.items if i.is_text and i.data.strip()]
    summary = "; ".join(i.summary for i in found.items if i.summary)[:500]
    return DocumentText(name=name, ext=name.rsplit(".", 1)[-1], mime=found.mime, size=len(data),
                        items=items, summary=summary)

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
    async with OpenAIModel(base_url=sys.argv[1], api_key="none", model="qwen", timeout=600,
                           max_retries=0) as client:
        for line in sys.stdin:
            case = json.loads(line)
            model = Counting(client)
            inp = RoundInput(prompt=case["prompt"], documents=[load(d) for d in case["docs"]])
            started = time.perf_counter()
            result = {"ok": False, "agents": [], "repairs": 0, "error": ""}
            try:
                outcome = await make_plan(inp, model, registry, PlanLimits(max_tasks=8))
                result.update(ok=True, agents=[t.agent for t in outcome.plan.tasks],
                              repairs=len(getattr(outcome, "repairs", [])))
            except Exception as exc:
                result["error"] = str(exc)[:300]
            result["seconds"] = time.perf_counter() - started
            result["purposes"] = [c[0] for c in model.calls]
            # A refused response_format attempt reports no tokens, so this is the one planning prompt.
            result["first_prompt_tokens"] = model.calls[0][1] if model.calls else 0
            print(json.dumps(result), flush=True)

asyncio.run(main())
'''


def run_side(tree: Path, base_url: str, case: tuple[str, list[str], list[set[str]]]) -> dict:
    prompt, docs, _ = case
    done = subprocess.run([sys.executable, "-c", WORKER, base_url, str(CORPUS)], cwd=tree, text=True,
                          input=json.dumps({"prompt": prompt, "docs": docs}) + "\n", capture_output=True,
                          timeout=1800)
    lines = [line for line in done.stdout.splitlines() if line.startswith("{")]
    if not lines:
        return {"ok": False, "agents": [], "repairs": 0, "seconds": 0.0, "purposes": [],
                "first_prompt_tokens": 0, "error": (done.stderr.strip().splitlines() or ["no output"])[-1]}
    return json.loads(lines[-1])


def summary(results: list[dict]) -> dict[str, float]:
    n = len(results)
    first = [r for r in results if r["ok"] and r["purposes"].count("repair") == 0 and not r["repairs"]]
    no_second = [r for r in results if r["ok"] and r["purposes"].count("repair") == 0]
    right = [r for r, (_, _, expected) in zip(results, CASES[:n]) if r["ok"] and set(r["agents"]) in expected]
    bare = [r["first_prompt_tokens"] for r, c in zip(results, CASES[:n]) if not c[1] and r["first_prompt_tokens"]]
    docs = [r["first_prompt_tokens"] for r, c in zip(results, CASES[:n]) if c[1] and r["first_prompt_tokens"]]
    return {
        "valid_first": len(first) / n, "valid_no_second_call": len(no_second) / n,
        "valid_after_repairs": sum(r["ok"] for r in results) / n, "right_agents": len(right) / n,
        "median_seconds": statistics.median(r["seconds"] for r in results),
        "median_prompt_tokens_no_docs": statistics.median(bare) if bare else 0.0,
        "median_prompt_tokens_with_docs": statistics.median(docs) if docs else 0.0,
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--before", default=BEFORE, help="git ref of the planner to compare with")
    parser.add_argument("--base-url", default="", help="a running OpenAI-compatible server (…/v1)")
    parser.add_argument("--only", type=int, default=len(CASES), help="the first N requests only")
    args = parser.parse_args()
    cases = CASES[:args.only]
    with tempfile.TemporaryDirectory(prefix="plans-before-") as tmp:
        before = Path(tmp)
        archive = subprocess.run(["git", "-C", str(ROOT), "archive", args.before], check=True,
                                 capture_output=True).stdout
        subprocess.run(["tar", "-x", "-C", str(before)], input=archive, check=True)
        if True:
            server = None
            base_url = args.base_url
            if not base_url:
                sys.path.insert(0, str(ROOT))
                from tests.realmodel import LlamaServer, qwen_missing, qwen_path

                reason = qwen_missing()
                if reason:
                    raise SystemExit(reason)
                server = LlamaServer(qwen_path(), n_ctx=4096).__enter__()
                base_url = server.base_url
            try:
                results: dict[str, list[dict]] = {"before": [], "after": []}
                for number, case in enumerate(cases, 1):
                    for side, tree in (("before", before), ("after", ROOT)):
                        result = run_side(tree, base_url, case)
                        results[side].append(result)
                        print(f"{number:2d} {side:6s} ok={result['ok']!s:5s} agents={result['agents']} "
                              f"calls={result['purposes']} {result['seconds']:.1f}s "
                              f"{result.get('error', '')[:120]}", flush=True)
            finally:
                if server is not None:
                    server.__exit__()
    sums = {side: summary(r) for side, r in results.items()}
    print(f"\n{len(cases)} requests, Qwen2.5-Coder-0.5B-Instruct Q4_K_M, n_ctx 4096")
    print(f"{'':32s}{'before':>10s}{'after':>10s}{'after/before':>14s}")
    for key in sums["after"]:
        b, a = sums["before"][key], sums["after"][key]
        ratio = f"{a / b:.2f}" if b else "-"
        print(f"{key:32s}{b:10.2f}{a:10.2f}{ratio:>14s}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
