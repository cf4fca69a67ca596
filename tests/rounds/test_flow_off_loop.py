"""A large flow file is parsed, translated and compared off the event loop: a ticker beside the work turns
while it runs (no timing measured: it either ran during the work or it did not)."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import yaml

from agents.flows import decode_definition
from app.services.flow_versions import FlowVersions
from app.store.records import Owner
from tests.agents.test_off_loop import ticker


class Flows:
    """The one part of FlowService an import uses: `create`, here without a database."""

    repo = None

    async def create(self, owner: Owner, raw: Any) -> Any:
        return SimpleNamespace(draft=decode_definition(raw) if isinstance(raw, dict) else raw)


def dify_chain(count: int) -> bytes:
    nodes = [{"id": "s", "data": {"type": "start", "variables": [{"variable": "q", "type": "paragraph"}]}}]
    nodes += [{"id": f"{i}", "data": {"type": "template-transform", "template": "{{ x }} " + str(i),
                                      "variables": [{"variable": "x", "value_selector": ["s", "q"]}]}}
              for i in range(count)]
    edges = [{"source": "s", "target": "0"}, *[{"source": f"{i - 1}", "target": f"{i}"} for i in range(1, count)]]
    return yaml.safe_dump({"kind": "app", "version": "0.1.5", "app": {"name": "big", "mode": "workflow"},
                           "workflow": {"graph": {"nodes": nodes, "edges": edges}}}).encode()


async def test_importing_a_large_dify_app_keeps_the_loop_turning():
    versions = FlowVersions(Flows())  # type: ignore[arg-type]
    big = dify_chain(2000)
    async with ticker() as ticks:
        found = await versions.import_file(Owner(1, 1), big, "application/yaml")
    assert ticks[0] > 0
    assert found.source == "dify" and found.nodes == 2001
