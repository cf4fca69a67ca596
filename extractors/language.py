"""The language of a text from its script, its stop words and its letters: cheap, no model.

Extractors' summaries say it (`describe`: "language de"). The stop words are the `stopwords`
package's (the one stop-word source, `agents.language.words`), in the languages it knows; a
hand-written vocabulary of function words and words of asking in seven languages was here before
(issue 32). Before -> after (bench/quality.py, "stop words alone"): UDHR article 1 in 37
languages 12/37 -> 22/37, the Latin lorem ipsum "fr" -> "la", held-out questions and prompts
103/105 -> 99/105, one-line requests 12/12 -> 6/12 (the vocabulary's words of asking; prompts are
`agents.language.detect`'s, which asks py3langid and uses only `WORD` from here).
"""

from __future__ import annotations

import re
import unicodedata
from functools import lru_cache

from stopwords import LANGUAGE_MAPPING, get_stopwords

# Letters that (nearly) only one of the Latin-script languages here uses.
_LETTERS: dict[str, str] = {
    "de": "äöüß",
    "fr": "èêëçœàâîïûù",
    "es": "ñ¿¡",
    "pt": "ãõ",
    "it": "ìò",
}

_SCRIPTS: tuple[tuple[str, tuple[tuple[int, int], ...]], ...] = (
    ("ko", ((0xAC00, 0xD7AF), (0x1100, 0x11FF), (0x3130, 0x318F))),
    ("ja", ((0x3040, 0x30FF), (0x31F0, 0x31FF))),
    ("zh", ((0x4E00, 0x9FFF), (0x3400, 0x4DBF), (0xF900, 0xFAFF))),
    ("ar", ((0x0600, 0x06FF), (0x0750, 0x077F), (0xFB50, 0xFDFF), (0xFE70, 0xFEFF))),
    ("ru", ((0x0400, 0x04FF),)),
    ("el", ((0x0370, 0x03FF),)),
    ("he", ((0x0590, 0x05FF),)),
    ("th", ((0x0E00, 0x0E7F),)),
    ("hi", ((0x0900, 0x097F),)),
)

WORD = re.compile(r"[^\W\d_]+(?:['’][^\W\d_]+)?")


def _script(ch: str) -> str | None:
    code = ord(ch)
    for lang, ranges in _SCRIPTS:
        for lo, hi in ranges:
            if lo <= code <= hi:
                return lang
    return None


def by_script(text: str) -> str | None:
    """A language decided by non-Latin script, when such letters dominate the text."""
    counts: dict[str, int] = {}
    latin = 0
    for ch in text:
        lang = _script(ch)
        if lang:
            counts[lang] = counts.get(lang, 0) + 1
        elif ch.isalpha():
            latin += 1
    if not counts:
        return None
    # Japanese mixes kana with Han characters; a little kana is decisive.
    if counts.get("ja", 0) and counts["ja"] * 10 >= counts.get("zh", 0):
        counts["ja"] += counts.pop("zh", 0)
    lang, n = max(counts.items(), key=lambda item: item[1])
    # CJK characters carry a word each, so they weigh like a short Latin word.
    weight = n * (3 if lang in ("zh", "ja", "ko") else 1)
    return lang if weight >= latin else None


@lru_cache(maxsize=1)
def _stop_words() -> dict[str, frozenset[str]]:
    """Each language's stop words, case-folded, for the languages of the `stopwords` package."""
    return {code: frozenset(w.casefold() for w in get_stopwords(name))
            for code, name in LANGUAGE_MAPPING.items() if len(code) == 2}


def by_words(text: str, default: str = "en") -> str:
    """The language whose stop words, letters or script the text shows most, or `default`."""
    sample = text[:20_000]
    scripted = by_script(sample)
    if scripted:
        return scripted
    lowered = unicodedata.normalize("NFC", sample).casefold().replace("’", "'")
    words = WORD.findall(lowered)
    if not words:
        return default
    scores = {lang: float(sum(word in stop for word in words)) for lang, stop in _stop_words().items()}
    for lang, letters in _LETTERS.items():
        hits = sum(lowered.count(letter) for letter in letters)
        # Letters are strong on short prompts but must not swamp stop words on long texts.
        scores[lang] += min(hits, 2 + len(words) // 20) * 0.75
    best = max(scores.values())
    if best <= 0:
        return default
    leaders = [lang for lang, score in scores.items() if score == best]
    # A tie ("der" is German and Danish) goes to the language the package lists more stop words of.
    return default if default in leaders else max(leaders, key=lambda lang: len(_stop_words()[lang]))
