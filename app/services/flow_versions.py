"""A flow's history and its files: one version read (and exported as YAML or JSON), two versions (or the
draft) compared, a version restored into the draft, and a file imported as a new flow (Foreman's format,
or a Dify DSL app translated by `agents.flows.from_dify`). No HTTP here."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from typing import Literal

from agents.flows import FlowDefinition, FlowDiff, write_definition
from app.contract.flows import FlowView
from app.errors import BadRequestError, NotFoundError
from app.services.flows import FlowService
from app.store.records import Owner
from app.store.tables import FlowVersionRow


@dataclass(frozen=True)
class Imported:
    """A flow made from a file: the flow, and for a Dify app how many of its nodes have a counterpart."""

    flow: FlowView
    source: str  # "foreman" or "dify"
    nodes: int
    imported: int


def _version_ref(raw: str) -> int | str:
    text = raw.strip()
    if text == "draft":
        return "draft"
    if text.isascii() and text.isdigit() and 0 < int(text) < 2**31:
        return int(text)
    raise BadRequestError(f"A version is a number (1, 2, ...) or \"draft\", not {raw[:40]!r}.", code="bad_version")


class FlowVersions:
    """Versions, diffs, restore, export and import of the flows of one service."""

    def __init__(self, flows: FlowService) -> None:
        self.flows = flows
        self.repo = flows.repo

    async def version(self, owner: Owner, flow_id: int, version: int) -> tuple[FlowVersionRow, FlowDefinition]:
        """One published version with its definition (404 naming the version when there is none)."""
        await self.flows.owned(owner, flow_id)
        row = await self.repo.flows.version(flow_id, version)
        if row is None:
            raise NotFoundError(f"Flow {flow_id} has no version {version}.", code="flow_version_not_found")
        return row, await self._definition(row.hash)

    async def _definition(self, digest: str) -> FlowDefinition:
        body = await self.repo.flows.definition(digest)
        return await asyncio.to_thread(FlowDefinition.decode, (body or "{}").encode())

    async def at(self, owner: Owner, flow_id: int, ref: str) -> FlowDefinition:
        """The definition of `ref`: a version number or "draft"."""
        which = _version_ref(ref)
        if which == "draft":
            return await self._definition((await self.flows.owned(owner, flow_id)).draft_hash)
        assert isinstance(which, int)
        return (await self.version(owner, flow_id, which))[1]

    async def diff(self, owner: Owner, flow_id: int, before: str, after: str) -> FlowDiff:
        """What `after` changes of `before` (each a version number or "draft")."""
        old, new = await self.at(owner, flow_id, before), await self.at(owner, flow_id, after)
        return await asyncio.to_thread(FlowDiff.between, old, new)

    async def export(self, owner: Owner, flow_id: int, version: int, fmt: Literal["yaml", "json"]) -> tuple[str, str]:
        """The version as a file: its text and its file name."""
        row, definition = await self.version(owner, flow_id, version)
        stem = "".join(c if (c.isascii() and c.isalnum()) or c in "-_" else "-" for c in definition.name)[:60] or "flow"
        return await asyncio.to_thread(write_definition, definition, fmt), f"{stem}-v{row.version}.{fmt}"

    async def restore(self, owner: Owner, flow_id: int, version: int) -> FlowView:
        """The version copied into the draft (the versions stay as they were)."""
        row, definition = await self.version(owner, flow_id, version)
        body = await self.repo.flows.definition(row.hash)
        restored = await self.repo.flows.replace(owner, flow_id, definition.name, definition.description, row.hash,
                                                 body or "{}")
        if restored is None:
            raise NotFoundError(f"There is no flow {flow_id}.", code="flow_not_found")
        return await self.flows.view(restored)

    async def import_file(self, owner: Owner, raw: bytes, media: str) -> Imported:
        """A new flow from a YAML or JSON file: Foreman's definition, or a Dify DSL app (`kind: app`)."""
        read = await self.flows.checked(raw, media=media)
        return Imported(await self.flows.saved(owner, read), read.source, read.nodes, read.imported)
