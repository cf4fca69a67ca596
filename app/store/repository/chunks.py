"""The full-text index's SQL: chunks of extracted files, FTS5 on SQLite, tsvector on PostgreSQL."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from sqlalchemy import bindparam, delete, func, select, text
from sqlalchemy.engine import Connection
from sqlmodel import col

from app.store.database import Database
from app.store.tables import ChunkRow, ChunkVectorRow, table_of

C = ChunkRow
V = ChunkVectorRow
REMEMBERED_FILES = 100_000  # files whose chunk facts are kept in memory (a few dozen bytes each)
CANDIDATES = 300  # chunks fetched per query at most, best first by the database's own rank (see `ChunkStore.match`)


@dataclass
class StoredChunk:
    """A chunk as the index returns it."""

    id: int
    sha256: str
    seq: int
    text: str
    terms: list[str]
    page: int | None
    sheet: str | None
    section: str | None


def insert_chunks_tx(conn: Connection, sha256: str, rows: Sequence[dict[str, Any]], is_sqlite: bool) -> None:
    """Store a file's chunks (once per content hash) with their full-text entries."""
    if not rows or conn.execute(select(col(C.id)).where(col(C.sha256) == sha256).limit(1)).first():
        return
    ct = table_of(C)
    ids = conn.execute(ct.insert().returning(ct.c.id, sort_by_parameter_order=True),
                       [dict(r, sha256=sha256) for r in rows])
    if is_sqlite:
        conn.execute(text("INSERT INTO chunks_fts(rowid, terms) VALUES (:id, :terms)"),
                     [{"id": i, "terms": r["terms"]} for i, r in zip(ids.scalars().all(), rows, strict=True)])


def delete_chunks_tx(conn: Connection, shas: Sequence[str], is_sqlite: bool) -> None:
    """Drop the chunks of these content hashes."""
    if is_sqlite:
        conn.execute(text("DELETE FROM chunks_fts WHERE rowid IN (SELECT id FROM chunks WHERE sha256 IN :shas)")
                     .bindparams(bindparam("shas", expanding=True)), {"shas": list(shas)})
    conn.execute(delete(V).where(col(V.sha256).in_(list(shas))))
    conn.execute(delete(C).where(col(C.sha256).in_(list(shas))))


def add_vectors_tx(conn: Connection, sha256: str, model: str, rows: Sequence[tuple[int, bytes]]) -> None:
    """Some of a file's chunk vectors by `model`, in place of any those chunks had and of every vector of
    the file by another model; nothing for chunks removed meanwhile (the file was deleted while it was
    embedded). Written a batch at a time, so a start cut short keeps what it made."""
    ids = {i for (i,) in conn.execute(select(col(C.id)).where(col(C.sha256) == sha256))}
    conn.execute(delete(V).where(col(V.sha256) == sha256, col(V.model) != model))
    kept = [{"chunk_id": i, "sha256": sha256, "model": model, "vector": blob} for i, blob in rows if i in ids]
    if kept:
        conn.execute(delete(V).where(col(V.chunk_id).in_([r["chunk_id"] for r in kept])))
        conn.execute(table_of(V).insert(), kept)


@dataclass(frozen=True, slots=True)
class ChunkFacts:
    """What BM25 needs of a file's chunks beside the matches: their language, number and total length."""

    language: str
    count: int
    length: int


class ChunkStore:
    """Reads and writes the index of one database."""

    def __init__(self, db: Database) -> None:
        self.db = db
        self._facts: dict[str, ChunkFacts] = {}
        if db.is_sqlite:
            self._match = text(
                "SELECT c.id FROM chunks_fts JOIN chunks c ON c.id = chunks_fts.rowid "
                "WHERE chunks_fts MATCH :query AND c.sha256 IN :shas "
                "ORDER BY bm25(chunks_fts) LIMIT :limit").bindparams(bindparam("shas", expanding=True))
        else:
            self._match = text(
                "SELECT c.id FROM chunks c WHERE c.sha256 IN :shas AND to_tsvector('simple', c.terms) @@ to_tsquery('simple', :query) "
                "ORDER BY ts_rank(to_tsvector('simple', c.terms), to_tsquery('simple', :query)) DESC "
                "LIMIT :limit").bindparams(bindparam("shas", expanding=True))

    async def add(self, sha256: str, rows: Sequence[dict[str, Any]]) -> None:
        await self.db.run_write(insert_chunks_tx, sha256, rows, self.db.is_sqlite)

    async def indexed(self, shas: Sequence[str]) -> dict[str, str]:
        """The content hashes among `shas` that have chunks, with their text's language."""
        if not shas:
            return {}
        async with self.db.reader.connect() as conn:
            result = await conn.execute(select(col(C.sha256), col(C.language))
                                        .where(col(C.sha256).in_(list(shas))).distinct())
            return {s: lang for s, lang in result}

    async def facts(self, shas: Sequence[str]) -> dict[str, ChunkFacts]:
        """Language, number and total length of the chunks of the files among `shas` that have
        chunks. Remembered: a content hash's chunks never change (bytes deleted and uploaded again
        are chunked the same), so a query over a hundred files does not count their rows again."""
        unknown = [s for s in dict.fromkeys(shas) if s not in self._facts]
        if unknown:
            async with self.db.reader.connect() as conn:
                rows = await conn.execute(select(col(C.sha256), func.min(col(C.language)), func.count(),
                                                 func.sum(col(C.length)))
                                          .where(col(C.sha256).in_(unknown)).group_by(col(C.sha256)))
                for sha, language, count, total in rows:
                    self._facts[sha] = ChunkFacts(language, int(count), int(total or 0))
            while len(self._facts) > REMEMBERED_FILES:
                self._facts.pop(next(iter(self._facts)))
        return {s: self._facts[s] for s in shas if s in self._facts}

    async def embedded(self, shas: Sequence[str], model: str) -> set[str]:
        """The content hashes among `shas` whose chunks all have a vector by `model`."""
        if not shas:
            return set()
        async with self.db.reader.connect() as conn:
            chunks = dict((await conn.execute(
                select(col(C.sha256), func.count()).where(col(C.sha256).in_(list(shas)))
                .group_by(col(C.sha256)))).all())
            vectors = dict((await conn.execute(
                select(col(V.sha256), func.count()).where(col(V.sha256).in_(list(shas)), col(V.model) == model)
                .group_by(col(V.sha256)))).all())
        return {sha for sha, n in chunks.items() if vectors.get(sha) == n}

    async def texts(self, sha256: str) -> list[tuple[int, str]]:
        """(chunk id, text) of a file's chunks, in order."""
        async with self.db.reader.connect() as conn:
            rows = await conn.execute(select(table_of(C).c.id, col(C.text)).where(col(C.sha256) == sha256)
                                      .order_by(col(C.seq)))
            return [(int(i), t) for i, t in rows]

    async def vectors(self, sha256: str, model: str) -> list[tuple[int, bytes]]:
        """(chunk id, stored vector) of a file's chunks by `model`."""
        async with self.db.reader.connect() as conn:
            rows = await conn.execute(select(col(V.chunk_id), col(V.vector))
                                      .where(col(V.sha256) == sha256, col(V.model) == model)
                                      .order_by(col(V.chunk_id)))
            return [(int(i), bytes(v)) for i, v in rows]

    async def vector_ids(self, sha256: str, model: str) -> set[int]:
        """The ids of a file's chunks that have a vector by `model` (all, some or none)."""
        async with self.db.reader.connect() as conn:
            rows = await conn.execute(select(col(V.chunk_id)).where(col(V.sha256) == sha256, col(V.model) == model))
            return {int(i) for (i,) in rows}

    async def add_vectors(self, sha256: str, model: str, rows: Sequence[tuple[int, bytes]]) -> None:
        await self.db.run_write(add_vectors_tx, sha256, model, rows)

    async def chunks(self, ids: Sequence[int]) -> list[StoredChunk]:
        """The chunks with these ids (those still there)."""
        if not ids:
            return []
        async with self.db.reader.connect() as conn:
            rows = await conn.execute(select(col(C.id), col(C.sha256), col(C.seq), col(C.text), col(C.terms),
                                             col(C.page), col(C.sheet), col(C.section))
                                      .where(col(C.id).in_(list(ids))))
            return [StoredChunk(id=r.id, sha256=r.sha256, seq=r.seq, text=r.text, terms=r.terms.split(),
                                page=r.page, sheet=r.sheet, section=r.section) for r in rows]

    async def match(self, shas: Sequence[str], terms: Sequence[str]) -> list[int]:
        """The ids of the chunks of these files holding any of the terms, the CANDIDATES best by the
        database's own rank (FTS5's bm25, ts_rank), best first; `agents.knowledge.retrieval.bm25` ranks them
        again once read (`chunks`, together with the vector ranking's, in one statement).

        300, not 2,000: with 100,000 passages in reach a question of common words matches tens of
        thousands of chunks, and reading 2,000 of them back (text and terms) and ranking them in
        Python was most of a query (bench/embedding.py --only query, CPU per query 58 -> 36 ms, the
        match's median 24 -> 7 ms). A file of a few hundred passages is unaffected: its matches
        are fewer than that. The fused ranking reads the first 50 of each list (DEPTH).

        Only the ids are sorted: the text and terms of every match were carried through SQLite's
        sort before (23,200 matches: 77 -> 70 ms of CPU). What is left is FTS5's bm25 itself,
        about 1.5 us a matching row (44 ms of the 70; the rows alone are read in 10)."""
        if not shas or not terms:
            return []
        joiner = " OR " if self.db.is_sqlite else " | "
        query = joiner.join(f'"{t}"' if self.db.is_sqlite else t for t in terms)
        async with self.db.reader.connect() as conn:
            rows = await conn.execute(self._match, {"query": query, "shas": list(shas), "limit": CANDIDATES})
            return [int(i) for (i,) in rows]
