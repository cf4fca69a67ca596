"""Retrieval over the database's full-text index: chunks built once per extracted file, BM25 on the
matching chunks of a round's documents (agents.retrieval ranks; this module feeds it)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from agents.base import DocumentText, Passage
from agents.retrieval import (
    Candidate,
    chunk_items,
    chunk_terms,
    document_language,
    query_terms,
    rank,
    rank_documents,
    searched_terms,
)
from agents.toolkit.cleanup import clean_contents
from agents.toolkit.cpu import off_gil, off_loop_if_long, text_size
from app.store.repository.chunks import ChunkStore
from extractors.base import ContentItem

INDEXED_STATUSES = ("ok", "partial")


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
    same function, in one BM25 ranking."""

    def __init__(self, store: ChunkStore) -> None:
        self.store = store

    async def search(self, query: str, documents: Sequence[DocumentText], k: int) -> list[Passage]:
        by_sha = {d.sha256: d for d in documents if d.sha256}
        languages = await self.store.indexed(list(by_sha))
        stored = [d for sha, d in by_sha.items() if sha in languages]
        rest = [d for d in documents if d.sha256 not in languages]
        if not stored:
            return await off_loop_if_long(sum(text_size(d.items) for d in rest), rank_documents, query, rest, k)
        size = sum(text_size(d.items) for d in rest)
        memory = await off_loop_if_long(size, _memory_pool, rest)
        searched = [*languages.values(), *(lang for _, _, lang, _ in memory)]
        terms = query_terms(query, searched)
        shas = [d.sha256 for d in stored]
        total, average = await self.store.stats(shas)
        searched_for = searched_terms(terms)  # with the alternatives BM25 counts as query terms
        found = await self.store.match(shas, searched_for)
        candidates = [Candidate(key=("db", c), terms=c.terms, text=c.text) for c in found]
        wanted = set(searched_for)
        candidates += [Candidate(key=("mem", (doc, chunk)), terms=t, text=chunk.text) for doc, chunk, _, t in memory
                       if wanted & set(t)]
        mem_lengths = [len(t) for _, _, _, t in memory]
        n = total + len(mem_lengths)
        mean = (average * total + sum(mem_lengths)) / n if n else 1.0
        ranked = await off_loop_if_long(len(candidates) * 100, rank, query, terms, candidates, n, mean, searched)
        out = []
        for score, cand in ranked[:k]:
            kind, value = cand.key  # type: ignore[misc]
            if kind == "db":
                doc = by_sha[value.sha256]
                out.append(Passage(name=doc.name, text=value.text, score=score, file_id=doc.file_id,
                                   page=value.page, sheet=value.sheet, section=value.section))
            else:
                doc, chunk = value
                out.append(Passage(name=doc.name, text=chunk.text, score=score, file_id=doc.file_id,
                                   page=chunk.page, sheet=chunk.sheet, section=chunk.section))
        return out


def _memory_pool(documents: Sequence[DocumentText]) -> list[tuple[DocumentText, Any, str, list[str]]]:
    pool = []
    for doc in documents:
        language = document_language(doc.items)
        pool.extend((doc, chunk, language, chunk_terms(chunk, language)) for chunk in chunk_items(doc.items))
    return pool
