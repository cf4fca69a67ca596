"""The full-text index as retrieval's store: it finds a round's chunks (by their terms, by their vectors'
nearness) and never ranks them (`agents.knowledge.indexed` ranks, behind the port
`agents.knowledge.retrieval.PassageIndex` that this implements). The rows it holds are made by
`agents.knowledge.indexed.chunk_rows`."""

from __future__ import annotations

from collections.abc import Sequence

from app.store.repository.chunks import ChunkFacts, ChunkStore, StoredChunk
from app.store.vectors import VectorIndex

INDEXED_STATUSES = ("ok", "partial")  # the extraction statuses whose items are indexed


class IndexSearch:
    """The chunks of stored files: their facts, the ones that hold a question's terms, the nearest by vector
    (with a `VectorIndex`, for the files whose vectors exist) and the chunks themselves."""

    def __init__(self, store: ChunkStore, vectors: VectorIndex | None = None) -> None:
        self.store = store
        self.vectors = vectors

    async def facts(self, shas: Sequence[str]) -> dict[str, ChunkFacts]:
        return await self.store.facts(shas)

    async def match(self, shas: Sequence[str], terms: Sequence[str]) -> list[int]:
        return await self.store.match(shas, terms)

    async def nearest(self, query: str, shas: Sequence[str], wait_for: Sequence[str] = ()) -> list[tuple[int, float]] | None:
        return None if self.vectors is None else await self.vectors.nearest(query, shas, wait_for)

    async def likeness(self, texts: Sequence[str], others: Sequence[str]) -> list[list[float]] | None:
        return None if self.vectors is None else await self.vectors.likeness(texts, others)

    async def chunks(self, ids: Sequence[int]) -> list[StoredChunk]:
        return await self.store.chunks(ids)
