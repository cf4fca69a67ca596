"""Words: the one tokenizer, stemmer and stop-word source of the code that reads natural language.

Stems are Snowball's (PyStemmer, 15 languages), accents folded after stemming; text in another
language is only case- and accent-folded. Stop words are the `stopwords` package's list for the
language (what an index leaves out); a question also leaves out the common words, the stop words
of every language Foreman names ("welche", "combien"). The words of asking of seven languages
("please", "summarize", "fasse") were common words too, from the word detector's hand-written
vocabulary, until issue 32 took it out (retrieval before and after: docs/benchmarks.md). Extractive
summaries stem with Snowball too: the light stem they had (a suffix off, 7 characters) was kept
because with Snowball tracemonkey.pdf's summary lost the sentence stating the paper's
contribution; the cause was the halves of words hyphenated at line ends ("al- ternative"), which
`agents.language.sentences.terms` now reads whole. Pure, no I/O.
"""

from __future__ import annotations

import re
import threading
import unicodedata
from collections.abc import Iterable, Sequence
from functools import lru_cache

import Stemmer
import stopwordsiso
from stopwords import LANGUAGE_MAPPING, get_stopwords

from agents.language.detect import LANGUAGES, detect_language

# Snowball algorithms by ISO 639-1 code.
_ALGORITHMS = {"en": "english", "de": "german", "fr": "french", "es": "spanish", "it": "italian",
               "nl": "dutch", "pt": "portuguese", "sv": "swedish", "da": "danish", "no": "norwegian",
               "fi": "finnish", "ru": "russian", "hu": "hungarian", "ro": "romanian", "tr": "turkish"}
TOKEN = re.compile(r"[^\W_]+", re.UNICODE)


def tokens(text: str) -> list[str]:
    """The text's words and numbers, as written."""
    return TOKEN.findall(text)


def fold(word: str) -> str:
    """The word without its accents (case kept)."""
    decomposed = unicodedata.normalize("NFKD", word)
    return "".join(ch for ch in decomposed if not unicodedata.combining(ch))


_THREAD = threading.local()


def _stemmer(language: str) -> Stemmer.Stemmer | None:
    """This thread's stemmer for `language`: PyStemmer's object keeps a word cache that is not safe to share
    between threads (two threads ranking at once raised KeyError inside its stemWord)."""
    stemmers: dict[str, Stemmer.Stemmer | None] | None = getattr(_THREAD, "stemmers", None)
    if stemmers is None:
        stemmers = _THREAD.stemmers = {}
    if language not in stemmers:
        algorithm = _ALGORITHMS.get(language)
        stemmers[language] = Stemmer.Stemmer(algorithm) if algorithm else None
    return stemmers[language]


def stems(words: Sequence[str], language: str) -> list[str]:
    """The words' Snowball stems in `language` (the words themselves for a language without one), accents folded."""
    stemmer = _stemmer(language)
    return [fold(s) for s in (stemmer.stemWords(list(words)) if stemmer else words)]


@lru_cache(maxsize=64)
def stop_words(language: str) -> frozenset[str]:
    """The language's stop words, case-folded: what an index leaves out (empty for a language the
    `stopwords` package does not know)."""
    name = LANGUAGE_MAPPING.get(language)
    return frozenset(w.casefold() for w in get_stopwords(name)) if name else frozenset()


@lru_cache(maxsize=64)
def function_words(language: str) -> frozenset[str]:
    """The language's function words and words of asking, case-folded: the `stopwords` package's list
    and stopwords-iso's, the larger maintained list ("gibt", "viele", "lange", "many", "cher" are only
    there). For judging what a question is about (`agents.knowledge.coverage`), never for the index: its terms
    stay those of `stop_words`, which the stored full-text indexes were built with."""
    larger = stopwordsiso.stopwords(language) if stopwordsiso.has_lang(language) else set()
    return stop_words(language) | frozenset(w.casefold() for w in larger)


@lru_cache(maxsize=1)
def common_words() -> frozenset[str]:
    """The stop words of every language Foreman names ("the", "welche", "combien"): what no question
    is about, whatever its language, and what no sentence ends on."""
    return frozenset().union(*(stop_words(code) for code in LANGUAGES))


def index_terms(text: str, language: str) -> list[str]:
    """The text's index terms: words without the language's stop words, Snowball-stemmed, accents folded."""
    stop = stop_words(language)
    words = [w for w in (t.casefold() for t in tokens(text)) if w not in stop and (len(w) > 1 or w.isdigit())]
    return stems(words, language)


def query_languages(question: str, languages: Iterable[str]) -> list[str]:
    """The languages a question's words are stemmed in: its own, then each of the documents' languages."""
    return list(dict.fromkeys([detect_language(question, default="en"), *languages]))


def content_words(question: str, language: str, shortest: int = 1) -> list[str]:
    """The question's words that say what it is about: not a stop word of its language or of asking
    in any answer language, at least `shortest` letters (one letter only for a number). A word in
    capitals is a name ("Zone NA", "the US"), even when it is a function word somewhere."""
    stop = stop_words(language) | common_words()
    return [t for t in tokens(question)
            if (len(t) > 1 and t.isupper() and shortest <= 1)
            or (t.casefold() not in stop and len(t) >= shortest and (len(t) > 1 or t.isdigit()))]


_SENTENCE_START = re.compile(r"(?:^|[.!?:;¿¡\n]\s*|[«\"“„]\s*)$")


def names(question: str, language: str, same_language: bool = False) -> list[str]:
    """The words a question writes as names, each once: "Canadiens" in "How many Cups did the Canadiens
    win?", "A320", "NASA". A name is spelt alike in every language, so a name no document writes is a
    strong sign the documents do not answer, even over a document in another language.

    A word with a digit among letters or in capitals is a name in any language. A capitalised word not
    opening a sentence is one too, except in German, which capitalises every noun ("Mannschaft" may be
    the translation of the document's "team"): there it counts only when the documents are in the
    question's language too (`same_language`), where a noun they never write is as strong a sign as a name."""
    found: dict[str, str] = {}
    for match in TOKEN.finditer(question):
        word = match.group()
        if len(word) < 2 or word.isdigit() or word.casefold() in common_words():
            continue
        coded = any(ch.isdigit() for ch in word) or (word.isupper() and len(word) >= 2)
        capital = word[0].isupper() and not _SENTENCE_START.search(question[:match.start()])
        if coded or (capital and (language != "de" or same_language)):
            found.setdefault(word.casefold(), word)
    return list(found.values())


def query_terms(question: str, languages: Iterable[str]) -> list[str]:
    """A question's terms, stemmed for its own language and every language of the documents it
    searches (a German question over an English report still matches its numbers and names)."""
    stemmed = query_languages(question, languages)
    words = [w.casefold() for w in content_words(question, stemmed[0])]
    if not words:  # a question made only of common words still asks something
        words = [w.casefold() for w in tokens(question)]
    terms: list[str] = []
    for language in stemmed:
        for stem in stems(words, language):
            if stem not in terms:
                terms.append(stem)
    return terms
