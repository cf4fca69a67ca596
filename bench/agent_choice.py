"""Which agents a small real model's plans pick, on tuning requests only: this tree's planner.

    .venv/bin/python bench/agent_choice.py [--base-url URL] [--kinds plans,questions,revise] [--every N]

Serves Qwen2.5-Coder-0.5B-Instruct (installed by .ci/install-realmodel.sh) with llama-cpp-python at
n_ctx 4096 unless --base-url names a running OpenAI-compatible server, then plans, one after the other:
- `plans`: bench/plans.py's 20 requests (answer-only, one task, several tasks; en/de/fr), each with the
  sets of agents that are right for it;
- `questions`: every N-th question of the tuning question set (tests/question_set.py `QUESTIONS`) over
  its group's four documents: a question about documents is the analyst's;
- `revise`: issue 29's plan review: "Summarise this table." over testCSV.csv, then the plan revised
  with the feedback "Also give me the table as Excel." as the service does it (`changes_prompt`): right
  when a task that can deliver a workbook is planned.
Prints one line per request and, per kind, how many plans picked the right agents. The held-out set
(tests/heldout/, bench/heldout.py) is never used here.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import sys
import time
from dataclasses import replace
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
from agents.base import DocumentText, Plan  # noqa: E402
from agents.planning.manager import PlanLimits, RoundInput, make_plan, render_plan_message  # noqa: E402
from agents.planning.replan import changes_prompt  # noqa: E402
from agents.registry import build_registry  # noqa: E402
from app.llm.client import OpenAIModel  # noqa: E402
from bench.plans import CASES  # noqa: E402
from extractors import extract  # noqa: E402
from tests.corpus import CORPUS  # noqa: E402
from tests.question_set import GROUPS, QUESTIONS  # noqa: E402
from tests.realmodel import qwen_endpoint  # noqa: E402

LIMIT = 240.0  # seconds per plan (a revision: both plans)


def load(name: str) -> DocumentText:
    data = (CORPUS / name).read_bytes()
    found = extract(data, name)
    return DocumentText.of(name, name.rsplit(".", 1)[-1], found.mime, len(data), list(found.items))


def agents_of(plan: Plan) -> list[str]:
    return [t.agent for t in plan.tasks]


def delivers_workbook(plan: Plan) -> bool:
    return any(t.agent == "data_extractor" and (not t.outputs or any(o.name.lower().endswith(".xlsx") for o in t.outputs))
               for t in plan.tasks)


async def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--base-url", default="")
    parser.add_argument("--kinds", default="plans,questions,revise")
    parser.add_argument("--every", type=int, default=4, help="every N-th tuning question")
    parser.add_argument("--first", type=int, default=0, help="only the first N requests of each kind")
    args = parser.parse_args()
    kinds = args.kinds.split(",")
    registry = build_registry(entry_points=False)
    with contextlib.ExitStack() as stack:
        base_url = qwen_endpoint(stack, args.base_url)
        async with OpenAIModel(base_url=base_url, api_key="none", model="qwen", timeout=LIMIT,
                               max_retries=0) as model:
            cases: list[tuple[str, str, list[str], object]] = []
            if "plans" in kinds:
                cases += [("plans", p, d, ok) for p, d, ok in CASES]
            if "questions" in kinds:
                cases += [("questions", q.question, GROUPS[q.group], [{"analyst"}]) for q in QUESTIONS[::args.every]]
            if "revise" in kinds:
                cases.append(("revise", "Summarise this table.", ["testCSV.csv"], "Also give me the table as Excel."))
            right: dict[str, list[bool]] = {}
            for kind, prompt, docs, expected in cases:
                if args.first and len(right.get(kind, [])) >= args.first:
                    continue
                started = time.perf_counter()
                inp = RoundInput(prompt=prompt, documents=[load(d) for d in docs])
                shown = ""
                try:
                    outcome = await asyncio.wait_for(make_plan(inp, model, registry, PlanLimits(max_tasks=8)), LIMIT)
                    plan = outcome.plan
                    if kind == "revise":
                        assert isinstance(expected, str)
                        first = agents_of(plan)
                        revised = replace(inp, prompt=f"{prompt}\n\n{expected}",
                                          history=[("user", prompt), ("assistant", render_plan_message(plan))],
                                          changes=changes_prompt(plan, expected))
                        plan = (await asyncio.wait_for(make_plan(revised, model, registry, PlanLimits(max_tasks=8)),
                                                       LIMIT)).plan
                        ok = delivers_workbook(plan)
                        shown = f"first {first} "
                    else:
                        ok = set(agents_of(plan)) in expected  # type: ignore[operator]
                    shown += f"agents={agents_of(plan)} outputs={[o.name for t in plan.tasks for o in t.outputs]}"
                except Exception as exc:  # a plan that cannot be made counts as wrong
                    ok, shown = False, f"error: {str(exc)[:160]}"
                right.setdefault(kind, []).append(ok)
                print(f"{kind:9s} {'right' if ok else 'WRONG':5s} {time.perf_counter() - started:6.1f}s "
                      f"{prompt[:60]!r} {shown}", flush=True)
    print()
    for kind, marks in right.items():
        print(f"{kind:9s} right {sum(marks)} of {len(marks)}")
    return 0


if __name__ == "__main__":
    sys.exit(asyncio.run(main()))
