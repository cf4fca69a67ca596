"""Static summaries of content items, made without a model."""

from __future__ import annotations

import re
import unicodedata

from extractors.base import ContentItem

_WORD = re.compile(r"\w+")
_SAMPLE = 2000
_LATIN_END = 0x250  # below this every letter is Latin; skipping the name lookup keeps summaries cheap
# Small stop-word lists are enough to name the common Latin-script languages cheaply.
_STOP_WORDS = {
    "en": {"the", "and", "of", "to", "is", "in", "that", "for", "with", "this"},
    "de": {"der", "die", "und", "das", "ist", "nicht", "mit", "ein", "eine", "den"},
    "fr": {"le", "la", "les", "et", "des", "est", "une", "pour", "dans", "du"},
    "es": {"el", "los", "las", "y", "que", "es", "una", "por", "con", "del"},
    "it": {"il", "che", "di", "gli", "una", "per", "non", "sono", "della", "con"},
    "pt": {"os", "que", "não", "uma", "com", "para", "do", "da", "em", "se"},
    "nl": {"de", "het", "een", "en", "van", "is", "niet", "dat", "met", "voor"},
}
_SCRIPT_LANGUAGES = {
    "HIRAGANA": "ja",
    "KATAKANA": "ja",
    "HANGUL": "ko",
    "CJK": "zh",
    "CYRILLIC": "ru",
    "ARABIC": "ar",
    "HEBREW": "he",
    "GREEK": "el",
    "THAI": "th",
    "DEVANAGARI": "hi",
}


def describe(item: ContentItem) -> str:
    """One line saying what the item is and how big it is."""
    where = item.name
    if not item.is_text:
        size = len(item.data) * 3 // 4 if item.base64_encoded else len(item.data)
        return f"{where}: binary {item.content_type}, about {size:,} bytes"
    text = item.data
    words = len(_WORD.findall(text))
    parts = [f"{where}: {len(text):,} characters", f"{words:,} words"]
    language = guess_language(text)
    if language:
        parts.append(f"language {language}")
    if item.metadata.get("ocr"):
        parts.append("text recognised by OCR")
    return ", ".join(parts)


def guess_language(text: str) -> str | None:
    """Name the dominant language from its script, or from stop words for Latin script."""
    sample = text[:_SAMPLE]
    counts: dict[str, int] = {}
    for char in sample:
        if char.isalpha():
            script = "LATIN" if ord(char) < _LATIN_END else unicodedata.name(char, "").split(" ", 1)[0]
            counts[script] = counts.get(script, 0) + 1
    if not counts:
        return None
    # Japanese mixes kana with CJK ideographs; any kana outweighs the ideographs.
    if counts.get("HIRAGANA", 0) + counts.get("KATAKANA", 0) > len(sample) // 50:
        return "ja"
    script = max(counts, key=counts.__getitem__)
    if script != "LATIN":
        return _SCRIPT_LANGUAGES.get(script)
    words = [word.lower() for word in _WORD.findall(sample)]
    scores = {lang: sum(word in stops for word in words) for lang, stops in _STOP_WORDS.items()}
    best = max(scores, key=scores.__getitem__)
    return best if scores[best] >= 3 else None
