"""Sentence splitting, extractive summaries and question-matching passages.

Sentences: our own layout rules decide which line breaks end a sentence (`_line_break`: PDF soft
wraps, headings, bullets, table rows, Chinese/Japanese wraps); within the lines they join,
sentencex (Wikimedia, abbreviations and rules for ~300 languages, in Rust) finds the boundaries in
the text's language, in place of our English/German/French abbreviation and month lists. Measured
(issue 32) on tests/agents: the same sentence tests pass (abbreviations, initials, "3. Oktober",
CJK, the UDHR in ten scripts); on tracemonkey.pdf 869 sentences instead of 872, the changes
mostly a bullet's second sentence now split off and "U.S. Government" no longer cut; splitting
freeculture.pdf's text 0.89 to 1.03 times the sentences per second of the word lists in three
runs (CPU time, bench/sentence_split.py). sentencex reads "(a)" or "•" as a list item running to
the paragraph's end and ends a sentence at "file.Txt": both are kept from it (`_split_segment`).
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Mapping, Sequence

import sentencex

from agents.language.detect import detect_language
from agents.language.words import common_words, stems

_CJK = "\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff"
_CJK_CHAR = re.compile(f"[{_CJK}]")
_BULLET = re.compile(r"^\s*(?:[-*•·▪●◦–]|\(?\d{1,3}[.)]|[a-zA-Z][.)])\s+")
_TERMINAL = re.compile(r"[.!?:;。！？…؟।۔][\"'»”’)\]]*$")
_SPACE = re.compile(r"\s+")
_LETTER = re.compile(r"[^\W\d_]")
_FULL_STOP = re.compile(r"[。！？][」』”’)]*$")
# A word hyphenated at a line end ("al-\nternative", "al- ternative" once joined): its halves are no
# words of the text, and a summary scored by them loses the abstract's sentence (tracemonkey.pdf).
_BROKEN_WORD = re.compile(r"(?<=[^\W\d_])-\s+(?=[a-zß-öø-ÿ])")
# Chinese and Japanese put no spaces between words, so a line break between two of their
# characters is a wrap, not a space. Korean separates words with spaces and keeps them.
_HAN_KANA = "\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff"
_CJK_GAP = re.compile(f"(?<=[{_HAN_KANA}])[ \t\r]*\n\\s*(?=[{_HAN_KANA}])")
_TOKEN = re.compile(f"[{_CJK}]+|[^\\W_]+", re.UNICODE)
_BOILERPLATE = re.compile(
    r"https?://|www\.|©|\(c\)|copyright|all rights reserved|alle rechte|tous droits|"
    r"^\s*(?:page|seite)\s+\d+|@\w+\.\w+",
    re.IGNORECASE,
)


# Languages that write an ordinal number with a dot ("am 25. September", "im 3. Stock"): a number and its dot
# before a word that is not a function word are no sentence's end there (sentencex ends one at "am 25." before "September, 9 - 12 Uhr").
ORDINAL_DOT = frozenset({"de", "da", "no", "nb", "nn", "fi", "is", "et", "lv", "cs", "sk", "pl", "hu", "tr", "hr",
                         "sl", "sr", "bs"})
_ORDINAL_END = re.compile(r"(?:^|\s)\d{1,3}\.$")


def _counted(rest: str) -> bool:
    """Whether the text after "25." opens with what an ordinal counts (a month, "Stock", "Platz"): a word,
    not one of the words a sentence opens with ("Das", "Wir")."""
    word = re.match(r"\s*([^\W\d_]+)", rest)
    return word is not None and word.group(1).casefold() not in common_words()


def normalize_space(text: str) -> str:
    """Collapse whitespace runs to one space (none for line breaks inside Chinese/Japanese)."""
    return _SPACE.sub(" ", _CJK_GAP.sub("", text)).strip()


def _lines(block: str, offset: int) -> list[tuple[int, int]]:
    out, pos = [], 0
    for line in block.splitlines(keepends=True):
        body = line.rstrip("\r\n")
        if body.strip():
            start = offset + pos + (len(body) - len(body.lstrip()))
            out.append((start, offset + pos + len(body.rstrip())))
        pos += len(line)
    return out


def _line_break(prev: str, nxt: str, width: int) -> bool:
    """Whether a newline between two lines ends a sentence (True) or is a soft wrap."""
    if _BULLET.match(nxt) or _TERMINAL.search(prev):
        return True
    if "\t" in prev or "\t" in nxt or prev.startswith("|") or nxt.startswith("|"):
        return True  # table rows are records, not wrapped prose
    letters = [ch for ch in prev if ch.isalpha()]
    if len(letters) > 3 and all(ch.isupper() for ch in letters):
        return True  # an ALL-CAPS line is a heading
    if nxt[:1].islower():
        return False  # a lowercase start continues the sentence
    if _CJK_CHAR.match(prev[-1:]) and _CJK_CHAR.match(nxt[:1]):
        return False
    last = prev.rsplit(None, 1)[-1]
    if last.islower() and last in common_words() or prev.endswith((",", "-")):
        return False  # "... for Dynamic\nLanguages" style titles: nothing ends on "for" or ","
    # A line much shorter than its block's longest line ended before the wrap width: it is a
    # heading or the end of a paragraph, not a wrapped line.
    return len(prev) < 0.6 * width or width < 40


def _split_segment(text: str, start: int, end: int, language: str) -> list[tuple[int, int]]:
    """Sentences of text[start:end], a run of lines that `_line_break` joined: sentencex's (its
    abbreviations, initials and numbers in ~300 languages), a piece merged into the next when the
    next starts in lowercase ("approx. three"), no space follows ("Prod.Rev", "example.Com": only
    。！？ end a sentence without one) or the piece has no letter (a list number "1.")."""
    # Wraps are spaces here, and sentencex sees no list markers: a bullet opening the segment is
    # layout (`_line_break`), and sentencex takes "(a)" for an item running to the paragraph's end
    # ("[a]" it does not).
    flat = text[start:end].replace("\n", " ").replace("\r", " ").replace("(", "[").replace(")", "]")
    bullet = _BULLET.match(flat)
    if bullet:
        flat = " " * bullet.end() + flat[bullet.end():]
    out: list[tuple[int, int]] = []
    begin = start
    for bound in sentencex.get_sentence_boundaries(language, flat):
        stop = start + bound["end_index"]
        while stop > begin and text[stop - 1].isspace():
            stop -= 1
        nxt = re.match(r"\s*(\S)", text[stop:end])
        piece = text[begin:stop]
        glued = stop < end and not text[stop].isspace() and not _FULL_STOP.search(piece)
        ordinal = language in ORDINAL_DOT and _ORDINAL_END.search(piece) and _counted(text[stop:end])
        if glued or ordinal or nxt and (nxt.group(1).islower() and not _CJK_CHAR.search(piece[-1:])
                                        or not _LETTER.search(piece)):
            continue
        if piece.strip():
            out.append((begin, stop))
        begin = start + bound["end_index"]
        while begin < end and text[begin].isspace():
            begin += 1
    if begin < end and text[begin:end].strip():
        out.append((begin, end))
    return out


def _spans(text: str) -> list[tuple[int, int, int]]:
    """(start, end, block) of every sentence: offsets into text, block = paragraph number."""
    out: list[tuple[int, int, int]] = []
    language = detect_language(text)
    for block_no, block in enumerate(re.finditer(r"(?:[^\n]|\n(?![ \t\r]*\n))+", text)):
        lines = _lines(block.group(0), block.start())
        if not lines:
            continue
        width = max(b - a for a, b in lines)
        seg_start = lines[0][0]
        for (a, b), (c, d) in zip(lines, lines[1:]):
            if _line_break(text[a:b], text[c:d], width):
                out.extend((s, e, block_no) for s, e in _split_segment(text, seg_start, b, language))
                seg_start = c
        out.extend((s, e, block_no) for s, e in _split_segment(text, seg_start, lines[-1][1], language))
    # Stray punctuation lines (". ." between PDF text runs) are not sentences.
    return [span for span in out if _meaningful(text[span[0] : span[1]])]


def split_sentences(text: str) -> list[str]:
    """Sentences of the text, whitespace-normalised (see normalize_space), in order."""
    return [normalize_space(text[s:e]) for s, e, _ in _spans(text)]


def _meaningful(text: str) -> bool:
    return any(ch.isalnum() for ch in text)


def terms(text: str, language: str, keep_stopwords: bool = False) -> list[str]:
    """Index terms of a text: its words without the common words (`agents.language.words`), Snowball
    stems in `language` (words a line break hyphenated read whole); character bigrams for Chinese
    and Japanese."""
    out: list[str] = []
    words: list[str] = []
    stop = common_words()
    for token in _TOKEN.findall(_BROKEN_WORD.sub("", text)):
        if _CJK_CHAR.match(token):
            out.extend(token[i : i + 2] for i in range(max(1, len(token) - 1)))
            continue
        folded = token.casefold()
        if keep_stopwords or (folded not in stop and len(folded) >= 2):
            words.append(folded)
    return out + stems(words, language)


def _words(sentence: str) -> float:
    cjk = len(_CJK_CHAR.findall(sentence))
    return len(re.findall(r"[^\W\d_]{2,}", sentence)) + cjk / 2


# `_quality` below which a line is a fragment (a table cell, a label, a heading of a word or two):
# fewer than four words without an end is 0.07, a short heading in capitals 0.03.
FRAGMENT = 0.1


def _quality(sentence: str) -> float:
    """How much a sentence looks like informative prose (1.0) rather than a fragment or boilerplate."""
    words = _words(sentence)
    score = 1.0
    if words < 4:
        score *= 0.1
    elif words < 7:
        score *= 0.5
    elif words > 120:
        score *= 0.2  # run-on text without punctuation (OCR, tables) reads badly as a summary
    elif words > 60:
        score *= 0.7
    if _BOILERPLATE.search(sentence):
        score *= 0.2
    letters = [ch for ch in sentence if ch.isalpha()]
    if sentence[:1].islower() or (sentence[:1] in "([" and sentence[1:2].islower()):
        score *= 0.5  # starts mid-sentence: a page or column break cut it
    if letters and not _CJK_CHAR.search(sentence):
        if all(ch.isupper() for ch in letters):
            score *= 0.3  # headings in capitals
        if not _TERMINAL.search(sentence) or sentence.rstrip().endswith(":"):
            score *= 0.7  # headings, table rows, captions, labels ("Petitioner :")
    digits = sum(ch.isdigit() for ch in sentence)
    if digits > 0.3 * max(1, len(letters)):
        score *= 0.3
    return score


def _vector(tokens: list[str], idf: dict[str, float]) -> dict[str, float]:
    return {t: (1 + math.log(n)) * idf[t] for t, n in Counter(tokens).items()}


def _dot(a: Mapping[str, float], b: Mapping[str, float]) -> float:
    if len(a) > len(b):
        a, b = b, a
    return sum(v * b.get(t, 0.0) for t, v in a.items())


def summarize(text: str, max_sentences: int = 5) -> list[str]:
    """The text's most informative sentences (TF-IDF centroid centrality), in original order."""
    return summaries(text, (max_sentences,))[0]


def summaries(text: str, sizes: Sequence[int]) -> list[list[str]]:
    """`summarize(text, n)` for each n of `sizes`, ranked once: the picks are made one after the other
    (each discounted by the ones before), so the summary of n sentences is the first n picks of a longer
    one (a round's memory keeps two and one sentence of each turn: half the work of two summaries)."""
    sentences, chosen = _picks(text, max(sizes, default=0))
    return [[sentences[i] for i in sorted(chosen[:n])] if n >= 1 else [] for n in sizes]


def _picks(text: str, max_sentences: int) -> tuple[list[str], list[int]]:
    """The text's sentences and the indices of its `max_sentences` most informative ones, best first."""
    sentences = split_sentences(text)
    if max_sentences < 1 or not sentences:
        return sentences, []
    language = detect_language(text)
    bags = [terms(s, language) for s in sentences]
    df = Counter(t for bag in bags for t in set(bag))
    n = len(sentences)
    idf = {t: math.log((n + 1) / (d + 0.5)) for t, d in df.items()}
    vectors = [_vector(bag, idf) for bag in bags]
    centroid: Counter[str] = Counter()
    for vector in vectors:
        norm = math.sqrt(_dot(vector, vector)) or 1.0
        centroid.update({t: v / norm for t, v in vector.items()})
    c_norm2 = _dot(centroid, centroid)
    repeats = Counter(sentences)
    qualities = [_quality(sentence) for sentence in sentences]  # each sentence's, once
    scores = []
    for i, (sentence, vector) in enumerate(zip(sentences, vectors)):
        norm = math.sqrt(_dot(vector, vector))
        if not norm:
            scores.append(0.0)
            continue
        # Similarity to the centroid of all other sentences, so a sentence does not vote for
        # itself (which would favour long outliers in short texts).
        own = _dot(vector, centroid) / norm - 1.0
        rest = math.sqrt(max(c_norm2 - 2 * (own + 1.0) + 1.0, 1e-9))
        centrality = own / rest if n > 1 else 1.0
        # Openings (abstracts, lead paragraphs) tend to state the topic; the prior fades over
        # the first tenth of the text.
        lead = 1.0 + 0.3 * max(0.0, 1.0 - i / max(10.0, 0.1 * n))
        quality = qualities[i]
        if repeats[sentence] >= 3:
            quality *= 0.1  # running headers and footers repeat on every page
        scores.append((max(centrality, 0.0) * lead + 1e-6) * quality)
    # Maximal marginal relevance: each pick is discounted by its similarity to the picks so far,
    # so the summary covers several topics instead of repeating the dominant one.
    norms = [math.sqrt(_dot(v, v)) or 1.0 for v in vectors]
    overlap = [0.0] * n
    chosen: list[int] = []
    seen: set[str] = set()
    # A fragment ("Total HT", "2 450,00 €", "Petitioner :") is no sentence of a summary while prose is left.
    prose = {i for i in range(n) if qualities[i] >= FRAGMENT} or set(range(n))
    limit = min(max_sentences, len(prose))
    while len(chosen) < limit:
        best = max(
            (i for i in prose if i not in chosen and sentences[i] not in seen),
            key=lambda i: (scores[i] * (1.0 - overlap[i]), -i),
            default=None,
        )
        if best is None:
            break
        chosen.append(best)
        seen.add(sentences[best])
        if len(chosen) == limit:
            break  # no pick follows: its overlaps would be read by none
        for i in range(n):
            similarity = _dot(vectors[i], vectors[best]) / (norms[i] * norms[best])
            overlap[i] = max(overlap[i], min(similarity, 1.0))
    return sentences, chosen


def best_passages(question: str, text: str, k: int = 3) -> list[str]:
    """Up to k passages (one or two adjacent sentences) that best match the question, best first."""
    spans = _spans(text)
    if not spans or k < 1:
        return []
    language = detect_language(text)
    query = set(terms(question, language)) or set(terms(question, language, keep_stopwords=True))
    if not query:
        return []
    bags = [terms(text[s:e], language) for s, e, _ in spans]
    n = len(bags)
    df = Counter(t for bag in bags for t in set(bag))
    # Words the text never uses exactly may still share a stem prefix ("Cups" ~ "cup",
    # "Umsatzes" ~ "Umsatz"); they count at reduced weight.
    weights: dict[str, float] = {}
    for q in query:
        if q in df:
            weights[q] = 1.0
        elif len(q) >= 4 and not _CJK_CHAR.match(q):
            for t in df:
                if len(t) >= 4 and (t.startswith(q[:5]) or q.startswith(t[:5])):
                    weights[t] = max(weights.get(t, 0.0), 0.6)
    if not weights:
        return []
    idf = {t: math.log(1 + (n - df[t] + 0.5) / (df[t] + 0.5)) for t in weights}
    windows = [(i, i) for i in range(n)]
    windows += [(i, i + 1) for i in range(n - 1) if spans[i][2] == spans[i + 1][2]]
    lengths = [sum(len(bags[j]) for j in range(a, b + 1)) for a, b in windows]
    avg = sum(lengths) / len(lengths) or 1.0
    scored = []
    for (a, b), length in zip(windows, lengths):
        tf = Counter(t for j in range(a, b + 1) for t in bags[j] if t in weights)
        if not tf:
            continue
        score = sum(
            weights[t] * idf[t] * f * 2.2 / (f + 1.2 * (0.25 + 0.75 * length / avg))
            for t, f in tf.items()
        )
        coverage = sum(weights[t] for t in tf) / len(query)
        scored.append((score * (0.5 + coverage), a, b))
    scored.sort(key=lambda item: (-item[0], item[1], item[2]))
    taken: set[int] = set()
    out = []
    for _, a, b in scored:
        if taken.intersection(range(a, b + 1)):
            continue
        taken.update(range(a, b + 1))
        out.append(normalize_space(text[spans[a][0] : spans[b][1]]))
        if len(out) == k:
            break
    return out


_PASSAGE_TERMS = 64  # a passage's vector keeps its strongest terms: enough to tell topics apart, cheap on a book


def informative_passages(passages: list[str], k: int) -> list[int]:
    """The indices of up to k of the passages that best cover the text (TF-IDF centrality with
    maximal marginal relevance, as `summarize` picks sentences), in their original order. A
    passage that repeats one already picked, word for word or nearly, is not picked again."""
    n = len(passages)
    if k >= n:
        return list(range(n))
    if k < 1:
        return []
    stop = common_words()
    bags = [[t for t in _TOKEN.findall(p.lower()) if len(t) > 2 and t not in stop] for p in passages]
    df = Counter(t for bag in bags for t in set(bag))
    idf = {t: math.log((n + 1) / (d + 0.5)) for t, d in df.items()}
    vectors = []
    for bag in bags:
        weights = sorted(_vector(bag, idf).items(), key=lambda item: -item[1])[:_PASSAGE_TERMS]
        norm = math.sqrt(sum(v * v for _, v in weights)) or 1.0
        vectors.append({t: v / norm for t, v in weights})
    centroid: Counter[str] = Counter()
    for vector in vectors:
        centroid.update(vector)
    c_norm = math.sqrt(_dot(centroid, centroid)) or 1.0
    lead = [1.0 + 0.3 * max(0.0, 1.0 - i / max(10.0, 0.1 * n)) for i in range(n)]
    scores = [(_dot(v, centroid) / c_norm) * lead[i] + 1e-9 for i, v in enumerate(vectors)]
    keys = [normalize_space(p) for p in passages]
    overlap = [0.0] * n
    chosen: list[int] = []
    open_ = set(range(n))
    while len(chosen) < k and open_:
        best = max(open_, key=lambda i: (scores[i] * (1.0 - overlap[i]), -i))
        chosen.append(best)
        open_ = {i for i in open_ if keys[i] != keys[best]}  # the same words again add nothing
        for i in open_:
            overlap[i] = max(overlap[i], min(_dot(vectors[i], vectors[best]), 1.0))
    return sorted(chosen)
