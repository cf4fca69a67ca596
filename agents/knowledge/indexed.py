"""Retrieval over a stored index: what goes into it (a file's chunks as rows) and how what it gives back is
ranked. The index stores and finds (`agents.knowledge.retrieval.PassageIndex`, which `app.store.search`
implements); the stemming, the language and the ranking are here, the same functions `MemoryRetriever` uses."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from typing import Any, cast

from agents.base import DocumentText, Likeness, Passage
from agents.knowledge.passages import Chunk, chunk_items, with_tables
from agents.knowledge.retrieval import (
    Candidate,
    IndexedChunk,
    PassageIndex,
    bm25,
    chunk_terms,
    document_language,
    hybrid,
    rank_documents,
)
from agents.language import detect_language, query_terms
from agents.model import CallScope
from agents.toolkit.cleanup import clean_contents
from agents.toolkit.cpu import off_gil, off_loop_if_long, text_size
from extractors.base import ContentItem
from extractors.tables import table_from_wire


def text_items(items: Sequence[ContentItem]) -> list[tuple[str, str]]:
    """What the index holds of a file: the cleaned text agents read (ligatures as letters, hyphens
    joined, contents lines out, sections named by their headings), so a quote reads as they do, and the
    tables that text does not hold (`with_tables`)."""
    tables = [table_from_wire(t) for c in items for t in c.metadata.get("tables") or [] if isinstance(t, dict)]
    return with_tables([(name, text) for name, text in clean_contents(items) if text.strip()], tables)


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
    """Passages from a stored index; documents it does not hold are ranked in memory with the same
    function, in one BM25 ranking. When the index has vectors for some files, those are also ranked by
    their nearness to the question, and the two rankings fused (`agents.knowledge.retrieval.hybrid`);
    the passages then say `method="hybrid"`, else `"keyword"`."""

    def __init__(self, index: PassageIndex) -> None:
        self.index = index

    async def search(self, query: str, documents: Sequence[DocumentText], k: int) -> list[Passage]:
        by_sha = {d.sha256: d for d in documents if d.sha256}
        facts = await self.index.facts(list(by_sha))
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
        # A question in another language than a file's shares few words with it: its vectors are waited for
        # (issue 50, item 12); one in the file's own language answers at once.
        asked_in = detect_language(query, default="")
        other = [d.sha256 for d in stored if asked_in and languages[d.sha256] not in ("", asked_in)]
        if CallScope.current().resumed:
            # Not in a round resumed after a crash: each start would wait again for vectors begun anew,
            # and under repeated crashes the round would never get on (issue 51, item 11). Keywords
            # answer until they exist, as for a question in the files' own language.
            other = []
        nearness = asyncio.ensure_future(self.index.nearest(query, shas, other))
        try:
            matched = await self.index.match(shas, terms)
        finally:
            near = await nearness
        # The matches and the nearest chunks read in one statement (they are mostly not the same).
        found = {c.id: c for c in await self.index.chunks(list(dict.fromkeys([*matched, *(i for i, _ in near or [])])))}
        candidates = [Candidate(key=("db", i), terms=found[i].terms, text=found[i].text,
                                language=languages[found[i].sha256]) for i in matched if i in found]
        wanted = set(terms)
        candidates += [Candidate(key=("mem", i), terms=t, text=chunk.text, language=language)
                       for i, (_, chunk, language, t) in enumerate(memory) if wanted & set(t)]
        nearest = _candidates(near, found, languages)
        mem_lengths = [len(t) for _, _, _, t in memory]
        n = total + len(mem_lengths)
        mean = (average * total + sum(mem_lengths)) / n if n else 1.0
        scored = await off_loop_if_long(len(candidates) * 100, bm25, terms, candidates, n, mean)
        ranked, how = (scored, "keyword") if nearest is None else (hybrid(query, scored, nearest, searched), "hybrid")
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
                doc, piece, _, _ = memory[value]
                out.append(Passage(name=doc.name, text=piece.text, score=score, file_id=doc.file_id,
                                   page=piece.page, sheet=piece.sheet, section=piece.section, method=how))
        return out


    async def likeness(self, texts: Sequence[str], others: Sequence[str]) -> list[list[float]] | None:
        """How alike `texts` and `others` are in meaning, by the index's vectors (None without them)."""
        return await self.index.likeness(texts, others) if isinstance(self.index, Likeness) else None


def _candidates(near: list[tuple[int, float]] | None, found: dict[int, IndexedChunk],
                languages: dict[str, str]) -> list[tuple[float, Candidate]] | None:
    """The nearest chunks as candidates (those still there)."""
    if near is None:
        return None
    return [(score, Candidate(key=("db", i), terms=found[i].terms, text=found[i].text,
                              language=languages.get(found[i].sha256, ""))) for i, score in near if i in found]


def _memory_pool(documents: Sequence[DocumentText]) -> list[tuple[DocumentText, Chunk, str, list[str]]]:
    pool: list[tuple[DocumentText, Chunk, str, list[str]]] = []
    for doc in documents:
        language = document_language(doc.items)
        pool.extend((doc, chunk, language, chunk_terms(chunk, language))
                    for chunk in chunk_items(with_tables(doc.items, doc.tables)))
    return pool
