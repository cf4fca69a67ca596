"""Passage retrieval: the passages of `agents.knowledge.passages`, their index terms
(`agents.language.index_terms`: Snowball stems without stop words, per language) and BM25 ranking. Pure, no I/O.

The service keeps the chunks in a full-text index in its database (`app.store.search`, a `PassageIndex`
that finds and never ranks); agents ask through the `Retriever` interface: `agents.knowledge.indexed`
ranks what the index finds, and `MemoryRetriever` ranks in memory with the same functions
(documents the index does not hold, tests, plug-ins run without a database).
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Protocol, cast

import numpy as np

from agents.base import DocumentText, Passage
from agents.knowledge.embeddings import Embedder, fuse, vector_order
from agents.knowledge.passages import Chunk, chunk_items, with_tables
from agents.language import (
    detect_language,
    index_terms,
    query_terms,
)
from agents.toolkit.cpu import LONG_TEXT, off_loop_if_long, text_size

K1, B = 1.2, 0.75  # BM25's usual constants
# The keyword rank's weight in the fusion for a passage in another language than the question's
# (`hybrid`): its matches are then names and numbers the languages share, or words that only look
# alike, and RRF's ranks are so close (1/61 against 1/66 for ranks 1 and 6) that even a small weight
# reorders the vector ranking. Weighed per passage, not per question: in a group of documents in
# several languages, a French question over an English book is "in one of the documents' languages"
# while its answer is not, and the French files' keyword matches pushed the book's passage out.
# Chosen on the cross-language tuning questions (tests/question_set.CROSS_TUNING and
# CROSS_TUNING_MIXED, 54; first search with the local ensemble's vectors, recall@5: weight 0 0.926,
# 0.1 0.889, 0.25 0.852, 1 0.815; the same weight per question, as before, 0 0.870; vectors alone
# 0.926). The tuning set (QUESTIONS) is 0.969 with 0 and with 0.25 (1.000 with e5 alone and 0.1: a
# German question over an English table found by its numbers). The rest of such a passage's
# weight goes to its vector rank (`hybrid`): on the mixed group's 23 questions the answer passage
# ranked first 0.478 without, 0.609 with it (vectors alone 0.609), recall@5 unchanged everywhere.
CROSS_KEYWORD_WEIGHT = 0.0



# ---- the port a stored index implements (`app.store.search`; ranked by `agents.knowledge.indexed`) ----


class IndexedChunk(Protocol):
    """A stored chunk: its id, its file's SHA-256, its text, its index terms and where it is."""

    id: int
    sha256: str
    text: str
    terms: list[str]
    page: int | None
    sheet: str | None
    section: str | None


class IndexFacts(Protocol):
    """What BM25 needs of a stored file beside its matches: its language, number of chunks and total length."""

    @property
    def language(self) -> str: ...
    @property
    def count(self) -> int: ...
    @property
    def length(self) -> int: ...


class PassageIndex(Protocol):
    """A stored index of chunks (rows made by `agents.knowledge.indexed.chunk_rows`): it finds, it never ranks."""

    async def facts(self, shas: Sequence[str]) -> Mapping[str, IndexFacts]:
        """The facts of the files it holds among `shas`, by SHA-256."""

    async def match(self, shas: Sequence[str], terms: Sequence[str]) -> list[int]:
        """The ids of the chunks of these files that hold any of `terms`."""

    async def nearest(self, query: str, shas: Sequence[str], wait_for: Sequence[str] = ()) -> list[tuple[int, float]] | None:
        """(chunk id, cosine) of the chunks nearest the question, nearest first; None without vectors.
        The files of `wait_for` (in another language than the question's) are worth waiting for
        while their vectors are being made, within a bound the index keeps."""

    async def chunks(self, ids: Sequence[int]) -> Sequence[IndexedChunk]:
        """The chunks of these ids that are still there."""


# ---- terms ----------------------------------------------------------------------------------


def chunk_terms(chunk: Chunk, language: str) -> list[str]:
    """A chunk's index terms, and those of the name of where it is: its section ("comments",
    "footnotes", "slide 2 notes"), so a question about the comments finds the comments, not a
    paragraph that mentions one; its sheet ("2021", "Nord"), so "croissants in 2021" finds the
    croissants row of the sheet named 2021, not the same row of every year's sheet."""
    where = " ".join(name for name in (chunk.section, chunk.sheet) if name)
    return index_terms(chunk.text, language) + (index_terms(where, language) if where else [])


def document_language(items: Sequence[tuple[str, str]]) -> str:
    return detect_language(" ".join(text[:4000] for _, text in items[:5]), default="en")


# ---- ranking ---------------------------------------------------------------------------------


@dataclass
class Candidate:
    """A chunk that matched at least one query term, with what BM25 needs."""

    key: object  # identifies the chunk for the caller
    terms: list[str]
    text: str = ""
    stats: Counter[str] = field(default_factory=Counter)
    language: str = ""  # its document's (ISO 639-1); "" when not known


def bm25(query: Sequence[str], candidates: Sequence[Candidate], total: int, average: float) -> list[tuple[float, Candidate]]:
    """BM25 scores of the candidates, best first. `total` and `average` are the number of chunks
    and their mean length in terms over the whole searched collection; every chunk holding a
    query term is a candidate, so document frequencies are exact.

    Words a question and a document use for one thing ("revenue" for a row labelled "Sales", "der
    Umsatz") are the vectors' to find (`hybrid`): the hand-made list of such stems that BM25 counted
    as one term (revenue/sales/turnover/Umsatz/Erlöse/ventes, total/insgesamt/gesamt) was removed
    for issue 32 after it changed no held-out case (bench/heldout.py offline, 18/9/10 right/partly/
    wrong with and without it; bench/retrieval_sets.py held-out recall@5, see docs/benchmarks.md);
    on the tuning questions it was written for, the offline analyst answers 29/32 instead of 32/32."""
    wanted = set(query)
    for c in candidates:
        c.stats = Counter(t for t in c.terms if t in wanted)
    df = Counter(t for c in candidates for t in c.stats)
    total = max(total, len(candidates), 1)
    average = average or 1.0
    idf = {t: math.log(1 + (total - n + 0.5) / (n + 0.5)) for t, n in df.items()}
    scored = []
    for c in candidates:
        norm = K1 * (1 - B + B * len(c.terms) / average)
        score = sum(idf[t] * f * (K1 + 1) / (f + norm) for t, f in c.stats.items())
        if score > 0:
            scored.append((score, c))
    # Equal scores (rows of one table, "Number: 3; Square: 9" and "Number: 9; Square: 81" for
    # "the square of 9") go to the passage that names a query term first: a row's label says
    # what the row is about, a value further on matches by chance.
    scored.sort(key=lambda sc: (-round(sc[0], 9), _first_match(sc[1].terms, wanted)))
    return scored


def _first_match(terms: Sequence[str], wanted: set[str]) -> int:
    return next((i for i, t in enumerate(terms) if t in wanted), len(terms))


def hybrid(question: str, keyword: list[tuple[float, Candidate]], nearest: list[tuple[float, Candidate]],
           languages: Sequence[str]) -> list[tuple[float, Candidate]]:
    """Keyword (BM25) and vector rankings of the same candidates fused (`agents.knowledge.embeddings.fuse`,
    candidates matched by `key`).

    Each passage has two votes. In a passage of the question's language both count alike; in a
    passage of another language the keyword rank counts CROSS_KEYWORD_WEIGHT (its words match the
    question's only where the languages share a name, a number or a spelling, which says little of
    what it is about) and its vector rank the rest: a passage is not ranked above another for
    being in a language where both lists can vote. (A candidate whose language is not known is
    weighed by whether the question is in one of the documents' `languages`.) In a group of
    documents in several languages, a German question over an English report is then ranked by
    its vectors in the report, and the German files' keyword matches do not push it out."""
    by_key = {c.key: c for _, c in [*keyword, *nearest]}
    own = detect_language(question, default="en")
    shared = own in languages

    def weights(key: object) -> tuple[float, float]:
        language = by_key[key].language
        if language == own if language else shared:
            return 1.0, 1.0
        return CROSS_KEYWORD_WEIGHT, 2.0 - CROSS_KEYWORD_WEIGHT

    fused = fuse([c.key for _, c in keyword], [c.key for _, c in nearest], key_weights=weights)
    return [(score, by_key[key]) for score, key in fused]


def rank_documents(question: str, documents: Sequence[DocumentText], k: int, embedder: Embedder | None = None,
                   mode: str = "hybrid", cache: dict[str, np.ndarray] | None = None) -> list[Passage]:
    """The k best passages of the documents, ranked in memory: by BM25 without an embedder, else
    by `mode` ("keyword", "vector" or "hybrid"), the passages' vectors kept in `cache` by text."""
    pool: list[tuple[DocumentText, Chunk, list[str], str]] = []
    languages = []
    for doc in documents:
        language = document_language(doc.items)
        languages.append(language)
        pool.extend((doc, chunk, chunk_terms(chunk, language), language)
                    for chunk in chunk_items(with_tables(doc.items, doc.tables)))
    if not pool:
        return []
    query = query_terms(question, languages)
    wanted = set(query)
    candidates = [Candidate(key=i, terms=terms, text=chunk.text, language=language)
                  for i, (_, chunk, terms, language) in enumerate(pool) if wanted & set(terms)]
    average = sum(len(t) for _, _, t, _ in pool) / len(pool)
    if embedder is None or mode == "keyword":
        ranked = bm25(query, candidates, len(pool), average)
        how = "keyword"
    else:
        cache = {} if cache is None else cache
        missing = list(dict.fromkeys(chunk.text for _, chunk, _, _ in pool if chunk.text not in cache))
        cache.update(zip(missing, embedder.passages(missing), strict=True))
        matrix = np.stack([cache[chunk.text] for _, chunk, _, _ in pool])
        nearest = [(score, Candidate(key=i, terms=pool[i][2], text=pool[i][1].text, language=pool[i][3]))
                   for i, score in vector_order(embedder.query(question), matrix)]
        if mode == "vector":
            ranked = nearest
        else:
            ranked = hybrid(question, bm25(query, candidates, len(pool), average), nearest, languages)
        how = mode
    out = []
    for score, cand in ranked[:k]:
        doc, chunk, _, _ = pool[cast(int, cand.key)]  # the keys made above: positions in `pool`
        out.append(Passage(name=doc.name, text=chunk.text, score=score, file_id=doc.file_id, page=chunk.page,
                           sheet=chunk.sheet, section=chunk.section, method=how))
    return out


# A passage's reading: thousands separators dropped, an accounting negative "(999)" written -999.
_THOUSANDS = re.compile(r"(?<=\d)[.,'’\u00a0\u202f ](?=\d{3}\b)")  # a dot too: "7.905" in German
_BRACKETED = re.compile(r"\((\d[\d.]*)\)")
_WORD_OR_NUMBER = re.compile(r"-?\d+(?:\.\d+)?|[^\W\d_]+")


def reading(text: str) -> tuple[str, ...]:
    """The words and numbers a passage says: a table row copied to a workbook or CSV ("Sales: 45580;
    Margin: -999") reads the same as its source ("Sales: 45,580; Margin: (999)")."""
    plain = _BRACKETED.sub(r"-\1", _THOUSANDS.sub("", text.casefold()))
    return tuple(_WORD_OR_NUMBER.findall(plain))


def without_copies(found: Sequence[Passage], documents: Sequence[DocumentText], k: int) -> list[Passage]:
    """The best `k` passages, each said once, the user's documents before the workflow's own.

    Asked again about a table extracted to a workbook, the answer cites the table the user gave,
    in the copy's place, not the copy and then the source. A passage of an uploaded document
    that scores at least half the best goes before every passage of a produced one (the tables,
    CSV files and reports of earlier rounds echo the words of the requests that made them).
    """
    produced = {d.file_id for d in documents if d.origin == "produced"}
    kept: list[Passage] = []
    place: dict[tuple[str, ...], int] = {}
    for passage in found:
        said = reading(passage.text)
        if said not in place:
            place[said] = len(kept)
            kept.append(passage)
        elif kept[place[said]].file_id in produced and passage.file_id not in produced:
            kept[place[said]] = passage  # in the copy's place, with its own score
    best = max((p.score for p in kept), default=0.0)
    first = [p for p in kept if p.file_id not in produced and p.score >= best / 2]
    return (first + [p for p in kept if p not in first])[:k]


class MemoryRetriever:
    """Ranks the documents' passages in memory (off the event loop for long documents): BM25, or
    `mode` with an embedder (benchmarks and tests; the service's index keeps vectors in its database)."""

    def __init__(self, embedder: Embedder | None = None, mode: str = "hybrid",
                 cache: dict[str, np.ndarray] | None = None) -> None:
        self.embedder = embedder
        self.mode = mode
        self._cache: dict[str, np.ndarray] = {} if cache is None else cache

    async def search(self, query: str, documents: Sequence[DocumentText], k: int) -> list[Passage]:
        size = sum(text_size(d.items) for d in documents)
        if self.embedder is not None:
            size = max(size, LONG_TEXT)  # embedding is CPU work however short the text
        return await off_loop_if_long(size, rank_documents, query, documents, k, self.embedder, self.mode, self._cache)
