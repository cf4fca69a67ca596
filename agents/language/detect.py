"""Language detection for prompts and documents: py3langid (97 languages, its model ships in the
package); a short prompt it is unsure about is classified again among the languages Foreman names
(`LANGUAGES`), the likeliest for a request of a few words.

Measured on the corpus (UDHR article 1 in 45 languages, 12 one-line requests, a Latin lorem
ipsum; bench/quality.py prints it): py3langid 41/45 and 12/12 and "la" for the lorem ipsum, in
0.04 ms per prompt; lingua 42/45 and 11/12 but 96 MB and 88 s to load its models.
The fallback for unsure short prompts was a hand-written vocabulary of function words and words
of asking in seven languages, until issue 32 took it out. Before -> after (bench/quality.py, 37
UDHR languages now; the tuning sets are what the vocabulary was written for): UDHR 35/37 ->
35/37, requests 12/12 -> 12/12, the one-line prompts of tests/agents/toolkit/test_language.py
28/28 -> 25/28 (lost: "Hello", "Hallo", and the Swedish "Sammanfatta dokumentet, tack.", now
"it"); held-out questions and prompts (tests/question_set.py HELDOUT, tests/heldout/cases.py)
103/105 -> 103/105, py3langid being sure of them all. One greeting is below what character
statistics can tell; in a conversation the conversation's language is the prior a short prompt's
evidence has to outweigh (`detect_in_conversation`).
"""

from __future__ import annotations

import copy
import functools
import re
import threading
from typing import Any

from extractors.language import WORD

# The languages Foreman names and detects short prompts among (ISO 639-1); their names are CLDR's
# (`agents.language.target`).
LANGUAGES = ("en", "de", "fr", "es", "it", "nl", "pt", "ja", "zh", "ko", "ar", "ru", "el", "he", "th", "hi")

# Below this probability on a short text, the stopword rules decide when they have evidence.
_SURE = 0.5
# In a conversation, the prior of the language it has been held in, against (1 - prior) shared by the
# other named languages: 0.2 makes it 3.75 times as likely as each of them, so "continue", "ok", "Merci"
# keep the conversation's language while "Et ensuite ?", "Und danach?" or "Y luego?" take their own.
# Chosen on 28 short follow-ups written for it (tests/agents/test_conversation_language.py, a tuning
# set): priors 0.2 / 0.25 / 0.33 / 0.5 get 26 / 25 / 24 / 24 right; the conversation's language for any
# prompt of one or two words (the rule before) 16.
CONVERSATION_PRIOR = 0.2
_SAMPLE = 2_000  # characters classified: enough for a language, ~20 ms at most
_SHORT_WORDS = 12  # a text of at most this many words is classified without its names
# A name: a capital, then a lower-case letter somewhere after it ("Molière", "Jean-Luc", "McDonald"; not "I", "PDF").
_NAME = re.compile(r"[«\"'(]?[^\W\d_a-zß-ÿ][^\W\d_]*[a-zß-ÿ]")
_LOADING = threading.Lock()
_LOADED: list[Any] = []


def load_detector() -> None:
    """Load the language model now (about 1 s of CPU, blocking: call it from a thread)."""
    _identifier()


def detector_loaded() -> bool:
    """Whether `detect_language` can run without loading the model first."""
    return bool(_LOADED)


def _identifier() -> Any:
    if not _LOADED:
        with _LOADING:
            if not _LOADED:
                from py3langid.langid import MODEL_FILE, LanguageIdentifier

                identifier = LanguageIdentifier.from_model_file(MODEL_FILE, norm_probs=True)
                named = copy.copy(identifier)  # the same model, restricted: no second load
                named.set_languages(sorted(set(LANGUAGES) & set(identifier.nb_classes)))
                _LOADED.extend((identifier, named))
    return _LOADED[0]


@functools.lru_cache(maxsize=256)
def _classify(sample: str, named: bool = False) -> tuple[str, float]:
    # A round asks about its prompt more than once (the request's language, then whether the
    # model's guess should break a tie), and a conversation about its earlier turns every round.
    _identifier()
    code, probability = _LOADED[1 if named else 0].classify(sample)
    return str(code), float(probability)


def _without_names(sample: str) -> str:
    """A short text without the names in it: a capitalised word that does not begin a sentence ("When did
    Molière die?" was French, "Wer ist François Dupont?" Portuguese: a name is spelt in its own language,
    whatever the language around it), when two words or more are left to tell the language by."""
    words = sample.split(" ")
    if len(words) > _SHORT_WORDS:
        return sample
    kept = [w for n, w in enumerate(words)
            if n == 0 or words[n - 1].endswith((".", "!", "?", ":")) or not _NAME.match(w)]
    return " ".join(kept) if len(WORD.findall(" ".join(kept))) >= 2 else sample


def _sure(text: str) -> tuple[str, str | None]:
    """(the text's sample, "" when it has no word; the language the detector is sure of, else None)."""
    whole = " ".join(text[:_SAMPLE].split())
    sample = _without_names(whole)
    if not WORD.search(sample):
        return "", None
    if sample != whole:  # the few words left ("Qui est", "Wann starb") are told apart among the named languages
        return sample, None
    code, probability = _classify(sample)
    return sample, code if probability >= _SURE else None


def detect_language(text: str, default: str = "en") -> str:
    """ISO 639-1 code of the text's language, or `default` when there is no evidence."""
    sample, code = _sure(text)
    if not sample:
        return default
    if code is not None:
        return code
    # A few words ("Resume el documento") are too little to tell 97 languages apart; among the
    # languages Foreman names, the best is the likeliest.
    return _classify(sample, named=True)[0]


def detect_in_conversation(text: str, usual: str) -> str:
    """The text's language in a conversation held in `usual` so far: what the detector is sure of; else
    the likeliest named language once the conversation's language is taken as the prior
    (CONVERSATION_PRIOR), when that language is likelier than not; else `usual`."""
    sample, code = _sure(text)
    if not sample:
        return usual
    if code is not None:
        return code
    likely = _likelihoods(sample)
    others = (1 - CONVERSATION_PRIOR) / max(1, len(likely) - 1)
    weighed = {lang: p * (CONVERSATION_PRIOR if lang == usual else others) for lang, p in likely.items()}
    best = max(weighed, key=weighed.__getitem__)
    return best if best != usual and weighed[best] >= sum(weighed.values()) / 2 else usual


@functools.lru_cache(maxsize=256)
def _likelihoods(sample: str) -> dict[str, float]:
    _identifier()
    return {str(lang): float(p) for lang, p in _LOADED[1].rank(sample)}
