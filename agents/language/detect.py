"""Language detection for prompts and documents: py3langid (97 languages, its model ships in the
package), with stopwords and letters deciding the short prompts it is unsure about.

Measured on the corpus (UDHR article 1 in 45 languages, 12 one-line requests, a Latin lorem
ipsum; bench/quality.py prints it): py3langid 41/45 and 12/12 and "la" for the lorem ipsum, in
0.04 ms per prompt; lingua 42/45 and 11/12 but 96 MB and 88 s to load its models; the
stopword rules alone (`extractors.language`) 15/45 (they know 16 languages) and "en" for Latin.
"""

from __future__ import annotations

import functools
import threading
from typing import Any

from extractors.language import WORD, by_words

LANGUAGE_NAMES: dict[str, str] = {
    "en": "English",
    "de": "German",
    "fr": "French",
    "es": "Spanish",
    "it": "Italian",
    "nl": "Dutch",
    "pt": "Portuguese",
    "ja": "Japanese",
    "zh": "Chinese",
    "ko": "Korean",
    "ar": "Arabic",
    "ru": "Russian",
    "el": "Greek",
    "he": "Hebrew",
    "th": "Thai",
    "hi": "Hindi",
}

# Below this probability on a short text, the stopword rules decide when they have evidence.
_SURE = 0.5
_SAMPLE = 2_000  # characters classified: enough for a language, ~20 ms at most
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

                _LOADED.append(LanguageIdentifier.from_model_file(MODEL_FILE, norm_probs=True))
    return _LOADED[0]


@functools.lru_cache(maxsize=256)
def _classify(sample: str) -> tuple[str, float]:
    # A round asks about its prompt more than once (the request's language, then whether the
    # model's guess should break a tie), and a conversation about its earlier turns every round.
    code, probability = _identifier().classify(sample)
    return str(code), float(probability)


def detect_language(text: str, default: str = "en") -> str:
    """ISO 639-1 code of the text's language, or `default` when there is no evidence."""
    sample = " ".join(text[:_SAMPLE].split())
    if not WORD.search(sample):
        return default
    code, probability = _classify(sample)
    if probability >= _SURE:
        return code
    # A few words ("Summarize.", "Hallo") are too little for character statistics; the words
    # people use to ask for work on documents are not.
    guess = by_words(sample, "")
    return guess or code
