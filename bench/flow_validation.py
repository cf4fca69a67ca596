"""Validation of a flow's definition is linear: a chain of N template nodes (each reading the one
before) and the same chain closed into a cycle, at N = 500 and N = 5,000.

    .venv/bin/python bench/flow_validation.py

Prints CPU (process time, best of 3) per size and the 5,000 / 500 ratio (10 is linear). Every template
is distinct, so each is parsed once: the figure includes Jinja's parse of every template.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
from agents.flows.definition import FlowDefinition  # noqa: E402
from agents.flows.validate import validate  # noqa: E402


def flow(count: int, *, cycle: bool, salt: str) -> dict[str, Any]:
    nodes: list[dict[str, Any]] = [{"id": "start", "type": "start"},
                                   {"id": "n0", "type": "template", "config": {"text": salt + "{{ inputs.word }}"}}]
    nodes += [{"id": f"n{i}", "type": "template", "config": {"text": f"{salt}{{{{ n{i - 1}.output }}}}"}}
              for i in range(1, count)]
    ids = [n["id"] for n in nodes]
    edges = [{"source": a, "target": b} for a, b in zip(ids, ids[1:], strict=False)]
    if cycle:
        edges.append({"source": f"n{count - 1}", "target": "n0"})
    return {"name": "bench", "inputs": {"word": {"type": "string"}}, "nodes": nodes, "edges": edges}


def best(count: int, *, cycle: bool) -> tuple[float, int]:
    times, found = [], 0
    for attempt in range(3):
        defn = FlowDefinition.decode(flow(count, cycle=cycle, salt=f"{attempt}{cycle} "))  # fresh templates each time
        start = time.process_time()
        found = len(validate(defn, agents=(), max_nodes=10_000))
        times.append(time.process_time() - start)
    return min(times), found


def main() -> None:
    results = {}
    for cycle in (False, True):
        for count in (500, 5_000):
            seconds, problems = best(count, cycle=cycle)
            results[cycle, count] = seconds
            print(f"{'cycle' if cycle else 'chain'} {count:>5} nodes: {seconds * 1000:8.1f} ms CPU"
                  f" ({seconds / count * 1e6:.0f} us/node, {problems} problem{'s' * (problems != 1)})")
    for cycle in (False, True):
        print(f"{'cycle' if cycle else 'chain'} 5,000 / 500: x{results[cycle, 5_000] / results[cycle, 500]:.1f}")


if __name__ == "__main__":
    main()
