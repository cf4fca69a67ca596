"""Publishing and comparing versions of a large flow, over real HTTP on a real SQLite file: a chain of N
llm nodes (N = 50 and 500), published, then a tenth of its prompts changed and 5 nodes added, published
again, and the two versions compared (`GET /api/flows/{id}/diff?from=1&to=2`).

    .venv/bin/python bench/flow_versions.py

Prints wall time (best of 5) of a publish and of a diff over HTTP, the CPU of `agents.flows.diff` alone,
and the 500 / 50 ratios (10 is linear).
"""

from __future__ import annotations

import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
from agents.flows import FlowDefinition, FlowDiff  # noqa: E402
from tests.harness import LiveServer, settings_for  # noqa: E402


def chain(count: int, edited: bool = False) -> dict[str, Any]:
    nodes: list[dict[str, Any]] = [{"id": "start", "type": "start"}]
    for i in range(count):
        before = f"n{i - 1}.output" if i else "inputs.word"
        word = "rewrite" if edited and i % 10 == 0 else "summarise"
        nodes.append({"id": f"n{i}", "type": "llm", "config": {"prompt": f"{word} step {i}: {{{{ {before} }}}}"}})
    extra = [f"x{i}" for i in range(5)] if edited else []
    nodes += [{"id": x, "type": "template", "config": {"text": "{{ inputs.word }}"}} for x in extra]
    nodes.append({"id": "end", "type": "end"})
    ids = ["start", *[f"n{i}" for i in range(count)], "end"]
    edges = [{"source": a, "target": b} for a, b in zip(ids, ids[1:], strict=False)]
    edges += [e for x in extra for e in ({"source": "start", "target": x}, {"source": x, "target": "end"})]
    return {"name": f"chain {count}", "inputs": {"word": {"type": "string"}}, "nodes": nodes, "edges": edges,
            "outputs": {"last": f"{{{{ n{count - 1}.output }}}}"}}


def best(times: list[float]) -> float:
    return min(times) * 1000


def measure(client: Any, count: int) -> dict[str, float]:
    publish, compare = [], []
    for _ in range(5):
        flow_id = client.post("/api/flows", json=chain(count)).json()["id"]
        t0 = time.perf_counter()
        assert client.post(f"/api/flows/{flow_id}/versions", json={}).status_code == 201
        publish.append(time.perf_counter() - t0)
        assert client.put(f"/api/flows/{flow_id}", json=chain(count, edited=True)).status_code == 200
        client.post(f"/api/flows/{flow_id}/versions", json={})
        t0 = time.perf_counter()
        answer = client.get(f"/api/flows/{flow_id}/diff", params={"from": "1", "to": "2"})
        compare.append(time.perf_counter() - t0)
        changed = answer.json()
        assert len(changed["nodes"]["changed"]) == count // 10 and len(changed["nodes"]["added"]) == 5
    a, b = FlowDefinition.decode(chain(count)), FlowDefinition.decode(chain(count, edited=True))
    cpu = []
    for _ in range(5):
        t0 = time.process_time()
        FlowDiff.between(a, b)
        cpu.append(time.process_time() - t0)
    return {"publish": best(publish), "diff": best(compare), "diff_cpu": best(cpu)}


def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        settings = settings_for(Path(tmp), flow_max_nodes=1000)
        with LiveServer(settings) as live, live.client() as client:
            results = {count: measure(client, count) for count in (50, 500)}
    for count, found in results.items():
        print(f"{count:>4} nodes: publish {found['publish']:7.1f} ms, diff over HTTP {found['diff']:7.1f} ms, "
              f"FlowDiff.between alone {found['diff_cpu']:6.1f} ms CPU")
    for key in ("publish", "diff", "diff_cpu"):
        print(f"{key} 500 / 50: x{results[500][key] / results[50][key]:.1f}")


if __name__ == "__main__":
    main()
