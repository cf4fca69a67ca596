"""The language a request asks for: "into German", "auf Französisch", "en anglais" name a translation's
target. The names of languages as people write them, in English, German and French. Pure, no I/O.
"""

from __future__ import annotations

import re

# Names of languages as people write them in a request, in English, German and French.
LANGUAGE_WORDS: dict[str, str] = {
    "english": "en", "englisch": "en", "anglais": "en",
    "german": "de", "deutsch": "de", "allemand": "de",
    "french": "fr", "französisch": "fr", "franzosisch": "fr", "français": "fr", "francais": "fr",
    "spanish": "es", "spanisch": "es", "espagnol": "es",
    "italian": "it", "italienisch": "it", "italien": "it",
    "portuguese": "pt", "portugiesisch": "pt", "portugais": "pt",
    "dutch": "nl", "niederländisch": "nl", "néerlandais": "nl",
    "chinese": "zh", "chinesisch": "zh", "chinois": "zh",
    "japanese": "ja", "japanisch": "ja", "japonais": "ja",
    "russian": "ru", "russisch": "ru", "russe": "ru",
}

_WORD = re.compile(r"[^\W\d_]+", re.UNICODE)


def target_language(text: str) -> str | None:
    """The language a request asks to translate into ("into German", "auf Französisch"), if named."""
    words = [w.lower() for w in _WORD.findall(text)]
    found: list[tuple[int, str]] = []
    for index, word in enumerate(words):
        code = _language_of(word)
        if code:
            found.append((index, code))
    # "translate this German text into English": the language after "into" is the target.
    for index, code in found:
        if index > 0 and words[index - 1] in _INTO:
            return code
    return found[-1][1] if found else None


_INTO = {"into", "to", "in", "ins", "auf", "nach", "en", "vers"}


def _language_of(word: str) -> str | None:
    for name, code in LANGUAGE_WORDS.items():
        # German adjectives inflect ("ins Deutsche", "auf Französisch"): match on the stem.
        if word == name or (len(name) > 5 and word.startswith(name[:-1])):
            return code
    return None
