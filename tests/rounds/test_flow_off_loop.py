"""A large flow file is parsed, translated and compared off the event loop: a ticker beside the work turns
while it runs (no timing measured: it either ran during the work or it did not)."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import yaml

from app.services.flow_versions import FlowVersions
from app.services.flows import FlowService
from app.store.records import Owner
from tests.agents.test_off_loop import ticker


class Flows(FlowService):
    """The flow service without a database: an import reads and checks the file as the service does, and
    what it would save is given back."""

    def __init__(self) -> None:
        super().__init__(SimpleNamespace(repo=None,  # type: ignore[arg-type]
                                         runner=SimpleNamespace(registry=SimpleNamespace(names=lambda: [])),
                                         settings=SimpleNamespace(flow_max_nodes=5000)))

    async def saved(self, owner: Owner, read: Any) -> Any:
        return SimpleNamespace(draft=read.version.definition)


def dify_chain(count: int) -> bytes:
    nodes = [{"id": "s", "data": {"type": "start", "variables": [{"variable": "q", "type": "paragraph"}]}}]
    nodes += [{"id": f"{i}", "data": {"type": "template-transform", "template": "{{ x }} " + str(i),
                                      "variables": [{"variable": "x", "value_selector": ["s", "q"]}]}}
              for i in range(count)]
    nodes.append({"id": "e", "data": {"type": "end", "outputs": [{"variable": "out",
                                                                 "value_selector": [f"{count - 1}", "output"]}]}})
    edges = [{"source": "s", "target": "0"}, *[{"source": f"{i - 1}", "target": f"{i}"} for i in range(1, count)],
             {"source": f"{count - 1}", "target": "e"}]
    return yaml.safe_dump({"kind": "app", "version": "0.1.5", "app": {"name": "big", "mode": "workflow"},
                           "workflow": {"graph": {"nodes": nodes, "edges": edges}}}).encode()


async def test_importing_a_large_dify_app_keeps_the_loop_turning():
    versions = FlowVersions(Flows())
    big = dify_chain(2000)
    async with ticker() as ticks:
        found = await versions.import_file(Owner(1, 1), big, "application/yaml")
    assert ticks[0] > 0
    assert found.source == "dify" and found.nodes == found.imported == 2002
