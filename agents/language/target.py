"""The language a request asks for: "into German", "auf Französisch", "en anglais" name a translation's
target. The names of languages are CLDR's (Babel's locale data): every language Foreman names
(`LANGUAGES`), as each of those languages writes it ("German", "Deutsch", "allemand", "alemán",
"tedesco", ...), with and without accents. They replace a hand list of 33 names in English, German
and French (issue 32). Pure, no I/O beyond Babel's packaged data, read once.
"""

from __future__ import annotations

import functools
import re
import unicodedata

from agents.language.detect import LANGUAGES

_WORD = re.compile(r"[^\W\d_]+", re.UNICODE)
_INTO = {"into", "to", "in", "ins", "auf", "nach", "en", "vers"}


def _plain(word: str) -> str:
    """The word case-folded and without accents ("Französisch" -> "franzosisch")."""
    return "".join(c for c in unicodedata.normalize("NFKD", word.casefold()) if not unicodedata.combining(c))


def _names(locales: list[str]) -> dict[str, str]:
    from babel import Locale

    names: dict[str, str] = {}
    for locale in locales:
        written = Locale.parse(locale).languages
        for code in LANGUAGES:
            name = written.get(code, "")
            if _WORD.fullmatch(name):
                names.setdefault(name.casefold(), code)
                names.setdefault(_plain(name), code)
    return names


@functools.cache
def language_words() -> dict[str, str]:
    """Each language's one-word names in every language Foreman names, folded and plain, -> its code
    (about 0.4 s to read once: `agents.round.Runner.warm_up` reads it off the event loop)."""
    return _names(list(LANGUAGES))


@functools.cache
def _inflected() -> dict[str, str]:
    """German names of languages, which inflect ("ins Deutsche", "auf Französisch"), by their stem. Only
    German's: a stem of every language's names would make "France" French ("francés")."""
    return {name[:-1]: code for name, code in _names(["de"]).items() if len(name) > 5}


@functools.cache
def _written_in(language: str) -> dict[str, str]:
    """CLDR's names of languages as `language` writes them (English for a language Foreman does not name)."""
    from babel import Locale

    return dict(Locale.parse(language if language in LANGUAGES else "en").languages)


def language_name(code: str, written_in: str = "en") -> str:
    """The name of a language code as `written_in` writes it: English for prompts ("German" for "de"),
    the user's for what they read ("Französisch"); the code when CLDR has none."""
    return _written_in(written_in).get(code, code)


def load_names() -> None:
    """Read the names now (about 0.4 s of CPU, blocking: call it from a thread)."""
    language_words()
    _inflected()
    for code in LANGUAGES:  # from the locale data language_words read: names in each, for the final review
        _written_in(code)


def target_language(text: str) -> str | None:
    """The language a request asks to translate into ("into German", "auf Französisch"), if named."""
    words = [w.casefold() for w in _WORD.findall(text)]
    found = [(index, code) for index, word in enumerate(words) if (code := _language_of(word))]
    # "translate this German text into English": the language after "into" is the target.
    for index, code in found:
        if index > 0 and words[index - 1] in _INTO:
            return code
    return found[-1][1] if found else None


def _language_of(word: str) -> str | None:
    names = language_words()
    if word in names:
        return names[word]
    return next((code for stem, code in _inflected().items() if word.startswith(stem)), None)
