"""Everything that reads natural language, behind one small interface: the language of a text and the
one a request asks for, sentences, words (one tokenizer, one stemmer, one stop-word source), what a
request asks for (its intents, the kind of fact) and what it points back at.

Callers import from here, not from the modules (`tests/test_layers.py` checks it); the package
imports no other `agents` module, only `extractors` (the word pattern, number parsing).

| module | reads |
|---|---|
| `detect` | a text's language: py3langid, among the languages Foreman names for short prompts it is unsure of |
| `target` | the language a request names ("into German") |
| `words` | tokens, Snowball stems (PyStemmer), stop words (the `stopwords` package), a question's terms |
| `sentences` | sentences, extractive summaries, the passages that match a question |
| `intents` | what a request asks for (extract, summary, translate, answer, write) and in which formats |
| `compare` | what a question asks to compile over a table: the highest, the lowest, the total; what came after a row |
| `parts` | the parts of a question that asks two things or more, the documents each part of a request names |
| `answer_kind` | the kind of fact a question asks for (price, date, number, author), and whether a text holds one |
| `persons` | the people a line names, as a byline does |
| `references` | follow-up questions, the documents a request names, "continue" |
"""

from __future__ import annotations

from agents.language.answer_kind import AUTHOR, DATE, NUMBER, PRICE, asked_kind, asking_verbs, holds, without_asking
from agents.language.compare import (
    MAX,
    MIN,
    SUM,
    asks_after,
    compared,
    comparing_spans,
    totalling_words,
    without_after,
    without_comparing,
)
from agents.language.detect import LANGUAGES, detect_in_conversation, detect_language, detector_loaded, load_detector
from agents.language.intents import (
    Intent,
    asked_sentences,
    detect_intents,
    document_formats,
    document_topic,
    is_direct_question,
    named_formats,
    question_of,
    table_formats,
)
from agents.language.parts import RequestPart, documents_by_part, question_parts, without_instructions
from agents.language.persons import person_names
from agents.language.references import (
    ANSWER,
    goes_on,
    left_out,
    named_documents,
    pointed_at,
    refers_back,
    resolve_references,
    rounds_named,
    wants_continuation,
    without_document_nouns,
    without_named_documents,
    without_named_kinds,
)
from agents.language.sentences import (
    best_passages,
    informative_passages,
    normalize_space,
    split_sentences,
    summaries,
    summarize,
)
from agents.language.target import language_name, language_words, load_names, target_language
from agents.language.words import (
    common_words,
    content_words,
    fold,
    function_words,
    index_terms,
    names,
    query_languages,
    query_terms,
    stems,
    stop_words,
    tokens,
)

__all__ = [
    "ANSWER", "AUTHOR", "DATE", "LANGUAGES", "MAX", "MIN", "NUMBER", "PRICE", "SUM", "asks_after", "compared", "comparing_spans", "question_parts", "totalling_words", "without_after", "without_comparing", "Intent", "asked_kind", "asked_sentences", "asking_verbs",
    "best_passages", "common_words", "content_words", "detect_in_conversation", "detect_intents", "detect_language", "detector_loaded", "document_formats", "fold", "function_words", "holds", "index_terms", "informative_passages", "named_formats", "names", "person_names",
    "is_direct_question", "load_detector", "normalize_space", "query_languages",
    "left_out", "pointed_at", "document_topic", "query_terms", "question_of", "goes_on", "refers_back", "resolve_references", "rounds_named", "split_sentences", "stems", "stop_words", "summaries", "summarize", "table_formats", "target_language", "language_name", "language_words", "load_names",
    "tokens", "wants_continuation", "without_asking", "without_instructions",
    "RequestPart", "documents_by_part", "named_documents", "without_document_nouns", "without_named_documents",
    "without_named_kinds",
]
