"""How much of real Dify apps imports: every `.yml`/`.yaml` under a directory (default: the files kept under
tests/agents/flows/dify), translated by `agents.flows.from_dify` and validated.

    .venv/bin/python bench/dify_import.py [DIR]

Prints, per app, whether it imports whole and valid (with nodes with a counterpart / nodes), then the
totals and the node types that have no counterpart. The figure in docs/flow-versions.md is of the 46 YAML
files of github.com/svcvit/Awesome-Dify-Workflow at e730ed3.
"""

from __future__ import annotations

import collections
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
from agents.flows import (  # noqa: E402
    DifyError,
    FlowDefinition,
    YamlError,
    dify_coverage,
    from_dify,
    is_dify,
    load_yaml,
    validate_flow,
)
from agents.flows.dify import SUPPORTED, _graph, _type  # noqa: E402


def main() -> None:
    where = Path(sys.argv[1]) if len(sys.argv) > 1 else ROOT / "tests" / "agents" / "flows" / "dify"
    total = imported = whole = apps = 0
    missing: collections.Counter[str] = collections.Counter()
    for path in sorted([*where.rglob("*.yml"), *where.rglob("*.yaml")]):
        try:
            data = load_yaml(path.read_bytes())
        except YamlError as exc:
            print(f"not YAML   {path.name}: {exc}")
            continue
        if not is_dify(data):
            continue
        apps += 1
        have, nodes = dify_coverage(data)
        total, imported = total + nodes, imported + have
        missing.update(_type(n) for n in _graph(data)[0] if _type(n) not in SUPPORTED and not _type(n).endswith("-start"))
        try:
            problems = validate_flow(FlowDefinition.decode(from_dify(data).definition), agents=(), max_nodes=10_000)
            state = "imports" if not problems else f"invalid ({problems[0].code})"
            whole += not problems
        except DifyError as exc:
            state = f"refused ({str(exc)[:70]})"
        print(f"{have:>3}/{nodes:<3} {path.name}: {state}")
    print(f"{apps} apps: {whole} import whole; nodes with a counterpart {imported} / {total}"
          f" ({imported / max(total, 1):.0%}); without: {dict(missing.most_common())}")


if __name__ == "__main__":
    main()
