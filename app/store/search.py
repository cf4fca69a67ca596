"""Retrieval over the database's full-text index: chunks built once per extracted file, BM25 on the
matching chunks of a round's documents (agents.knowledge.retrieval ranks; this module feeds it)."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Sequence
from typing import Any, cast

import numpy as np

from agents.base import DocumentText, Passage
from agents.knowledge.embeddings import Rows, nearest
from agents.knowledge.retrieval import (
    Candidate,
    bm25,
    chunk_items,
    chunk_terms,
    document_language,
    hybrid,
    rank_documents,
)
from agents.language import detect_language, query_terms
from agents.toolkit.cleanup import clean_contents
from agents.toolkit.cpu import off_gil, off_loop, off_loop_if_long, text_size
from app.store.repository.chunks import ChunkStore, StoredChunk
from app.store.vectors import VectorIndex
from extractors.base import ContentItem

INDEXED_STATUSES = ("ok", "partial")
# A question in another language than a file's is matched by that file's vectors, not its words (issue 50,
# item 12: asked right after the upload, 5 of 12 cross-language questions were found from keywords while
# the vectors were being made, 7 of 12 once they were): such a question waits for them, this long at most.
# A question in the files' own language answers at once, from keywords until the vectors exist.
CROSS_LANGUAGE_WAIT = 30.0
log = logging.getLogger(__name__)


def text_items(items: Sequence[ContentItem]) -> list[tuple[str, str]]:
    """What the index holds of a file: the cleaned text agents read (ligatures as letters, hyphens
    joined, contents lines out, sections named by their headings), so a quote reads as they do."""
    return [(name, text) for name, text in clean_contents(items) if text.strip()]


def chunk_rows(items: Sequence[ContentItem], limit: int = 0) -> list[dict[str, Any]]:
    """A file's chunks as index rows: text, stemmed terms, length and where each chunk is; the
    first `limit` of them (0: all), so one file's index stays bounded (MAX_INDEXED_PASSAGES)."""
    texts = text_items(items)
    language = document_language(texts)
    rows: list[dict[str, Any]] = []
    for chunk in chunk_items(texts):
        if limit and len(rows) >= limit:
            break
        terms = chunk_terms(chunk, language)
        if terms:
            rows.append(dict(seq=chunk.seq, text=chunk.text, terms=" ".join(terms), length=len(terms),
                             language=language, page=chunk.page, sheet=chunk.sheet, section=chunk.section))
    return rows


async def build_rows(items: Sequence[ContentItem], limit: int = 0) -> list[dict[str, Any]]:
    """`chunk_rows` in a worker process: stemming a book is seconds of CPU."""
    return await off_gil(chunk_rows, items, limit)


class IndexRetriever:
    """Passages from the full-text index; documents it does not hold are ranked in memory with the
    same function, in one BM25 ranking. With a `VectorIndex`, the files whose vectors exist are
    also ranked by their nearness to the question, and the two rankings fused
    (`agents.knowledge.retrieval.hybrid`); the passages then say `method="hybrid"`, else `"keyword"`."""

    def __init__(self, store: ChunkStore, vectors: VectorIndex | None = None) -> None:
        self.store = store
        self.vectors = vectors

    async def search(self, query: str, documents: Sequence[DocumentText], k: int) -> list[Passage]:
        by_sha = {d.sha256: d for d in documents if d.sha256}
        facts = await self.store.facts(list(by_sha))
        languages = {sha: f.language for sha, f in facts.items()}
        stored = [d for sha, d in by_sha.items() if sha in languages]
        rest = [d for d in documents if d.sha256 not in languages]
        if not stored:
            return await off_loop_if_long(sum(text_size(d.items) for d in rest), rank_documents, query, rest, k)
        size = sum(text_size(d.items) for d in rest)
        memory = await off_loop_if_long(size, _memory_pool, rest)
        searched = [*languages.values(), *(lang for _, _, lang, _ in memory)]
        terms = query_terms(query, searched)
        shas = [d.sha256 for d in stored]
        total = sum(f.count for f in facts.values())
        average = sum(f.length for f in facts.values()) / total if total else 0.0
        # The question is embedded and the vectors searched while the database matches its terms:
        # the embedder and SQLite both run in C without the GIL, on the machine's two cores.
        asked_in = detect_language(query, default="")
        other = [d.sha256 for d in stored if asked_in and languages[d.sha256] not in ("", asked_in)]
        nearness = asyncio.ensure_future(self._nearest(query, shas, other))
        try:
            matched = await self.store.match(shas, terms)
        finally:
            near = await nearness
        # The matches and the nearest chunks read in one statement (they are mostly not the same).
        found = {c.id: c for c in await self.store.chunks(list(dict.fromkeys([*matched, *(i for i, _ in near or [])])))}
        candidates = [Candidate(key=("db", i), terms=found[i].terms, text=found[i].text,
                                language=languages[found[i].sha256]) for i in matched if i in found]
        wanted = set(terms)
        candidates += [Candidate(key=("mem", i), terms=t, text=chunk.text, language=language)
                       for i, (_, chunk, language, t) in enumerate(memory) if wanted & set(t)]
        nearest = _candidates(near, found, languages)
        mem_lengths = [len(t) for _, _, _, t in memory]
        n = total + len(mem_lengths)
        mean = (average * total + sum(mem_lengths)) / n if n else 1.0
        if nearest is None:
            ranked = await off_loop_if_long(len(candidates) * 100, bm25, terms, candidates, n, mean)
            how = "keyword"
        else:
            scored = await off_loop_if_long(len(candidates) * 100, bm25, terms, candidates, n, mean)
            ranked = hybrid(query, scored, nearest, searched)
            how = "hybrid"
        out = []
        for score, cand in ranked[:k]:
            # The keys made above: ("db", a chunk's id) or ("mem", a position in `memory`).
            kind, value = cast("tuple[str, int]", cand.key)
            if kind == "db":
                chunk = found[value]
                doc = by_sha[chunk.sha256]
                out.append(Passage(name=doc.name, text=chunk.text, score=score, file_id=doc.file_id,
                                   page=chunk.page, sheet=chunk.sheet, section=chunk.section, method=how))
            else:
                doc, chunk, _, _ = memory[value]
                out.append(Passage(name=doc.name, text=chunk.text, score=score, file_id=doc.file_id,
                                   page=chunk.page, sheet=chunk.sheet, section=chunk.section, method=how))
        return out

    async def _nearest(self, query: str, shas: Sequence[str], other: Sequence[str] = ()) -> list[tuple[int, float]] | None:
        """(chunk id, cosine) of the chunks nearest the question among the files whose vectors
        exist, or None when none has vectors yet (they are being made: BM25 alone answers meanwhile).
        The files in another language than the question's (`other`) are waited for, up to
        CROSS_LANGUAGE_WAIT: their words are not the question's, and BM25 alone would miss."""
        if self.vectors is None:
            return None
        ready = await self.vectors.ready(shas)
        if any(sha not in ready for sha in other):
            log.info("waiting up to %.0f s for the vectors of %d file(s) in another language than the question",
                     CROSS_LANGUAGE_WAIT, sum(sha not in ready for sha in other))
            await self.vectors.wait_ready(other, CROSS_LANGUAGE_WAIT)
            ready = await self.vectors.ready(shas)
        if not ready:
            return None
        matrices = [await self.vectors.matrix(sha) for sha in shas if sha in ready]
        try:
            question = await self.vectors.question(query)
        except Exception:  # noqa: BLE001 - an embeddings endpoint that fails leaves BM25 to answer
            log.warning("the question could not be embedded; BM25 alone answers", exc_info=True)
            return None
        # A hundred books are 100,000 rows: the int8 scan and the sort are 15 ms of CPU, off the loop.
        ids, order = await off_loop(_nearness, matrices, question)
        return [(int(ids[i]), score) for i, score in order]


def _nearness(matrices: Sequence[tuple[np.ndarray, Rows]], question: np.ndarray) -> tuple[np.ndarray, list[tuple[int, float]]]:
    """The chunk ids of these files and (position, cosine) of the nearest, nearest first."""
    ids = np.concatenate([m[0] for m in matrices])
    return ids, nearest([m[1] for m in matrices], question)


def _candidates(near: list[tuple[int, float]] | None, found: dict[int, StoredChunk],
                languages: dict[str, str]) -> list[tuple[float, Candidate]] | None:
    """The nearest chunks as candidates (those still there)."""
    if near is None:
        return None
    return [(score, Candidate(key=("db", i), terms=found[i].terms, text=found[i].text,
                              language=languages.get(found[i].sha256, ""))) for i, score in near if i in found]


def _memory_pool(documents: Sequence[DocumentText]) -> list[tuple[DocumentText, Any, str, list[str]]]:
    pool: list[tuple[DocumentText, Any, str, list[str]]] = []
    for doc in documents:
        language = document_language(doc.items)
        pool.extend((doc, chunk, language, chunk_terms(chunk, language)) for chunk in chunk_items(doc.items))
    return pool
