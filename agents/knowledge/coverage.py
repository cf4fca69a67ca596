"""Whether the passages found answer a question: "not found" is said only when they miss what it asks.

The check before this one (`absent_words`) named the question's words no document uses when they
were half its words, each counting alike: "Wie lange dauerte der Stromausfall?" was "not found" for
"lange" and "dauerte" above a quote giving the 40 minutes, and a word asked twice was named twice.
A person who believes the first line stops reading. Now:

- the terms are the question's content words (each language's function words from the maintained
  lists, `stopwords` and stopwords-iso: `function_words`, and the words that ask for a kind of fact, "how many", "wie lange", "combien coûte":
  `without_asking`), each stem once; the verb a question asks with ("What does the table hold?", "Was
  umfasst die Wohnung?", "Que renferme la dégustation ?": `asking_verbs`, found by its place, not by a
  list) counts only where a document writes it: what the table holds is the answer, "hold" is not;
- a document writes a term when its text, its file's name or the name of one of its parts or tables
  does ("the table on the slides" over "slide 1 table 1", "the comments" over "comments", "sales" over
  "baeckerei-sonnenschein-sales.xlsx");
- each weighs by how rare it is among the documents' sentences (smoothed IDF, log(1 + N / (df + ½)));
  a term in no sentence weighs most, since it may be what was asked about;
- the question is not answered when the best passages (those an answer quotes) hold less than half
  of that weight and at least one term is in no document (what "not found" names, above the quotes);
- an answer holding more than half and less than `WHOLE_SHARE` names the words no document writes
  under its quotes ("Not found in hall.txt: «toaster»"): the part of the question left open;
- never when a best passage holds the kind of fact asked for beside every term the documents have:
  that quote is the answer;
- but always when the question names something no document writes (`absent_names`): "How many
  Stanley Cups did the Canadiens win?" over a table of three other teams was answered with their
  rows, each holding a number beside "Stanley Cups", and a French question over the English table
  was never judged at all (its words are not the documents'). A name is spelt alike in every
  language, so this one check holds across languages; nothing quoted can be about a name no
  document writes.

Pure, no I/O; CPU in proportion to the documents' text (callers run it off the loop when long).
"""

from __future__ import annotations

import math
import os
from collections.abc import Sequence
from dataclasses import dataclass

from agents.base import DocumentText
from agents.knowledge.retrieval import document_language
from agents.language import (
    asked_kind,
    asking_verbs,
    content_words,
    detect_language,
    fold,
    function_words,
    holds,
    index_terms,
    language_words,
    named_formats,
    names,
    split_sentences,
    stems,
    tokens,
    without_asking,
    without_comparing,
    without_document_nouns,
    without_instructions,
    without_named_kinds,
)

BEST = 3  # the passages an answer quotes (the offline model quotes up to three)
ANSWERED_SHARE = 0.5  # of the question's weight the best passages hold for it to count as answered
# Below this share, the words no document writes are named under the quotes (a two-part question
# whose second part is nowhere; "the technician's phone number" over a report naming the technician).
WHOLE_SHARE = 0.75


@dataclass(frozen=True)
class Coverage:
    """What of a question the best passages hold: `share` of its weight, and its words no document writes."""

    share: float = 1.0
    absent: tuple[str, ...] = ()

    @property
    def unanswered(self) -> list[str]:
        """The words to name above the passages: the documents do not answer (else [])."""
        return list(self.absent) if self.absent and self.share < ANSWERED_SHARE else []

    @property
    def unmentioned(self) -> list[str]:
        """The words to name under the quotes of an answer that holds most of what was asked (else [])."""
        return list(self.absent) if self.absent and ANSWERED_SHARE <= self.share < WHOLE_SHARE else []


def question_terms(question: str, language: str) -> list[tuple[str, str]]:
    """(word as written, stem) for each term the question asks about, each stem once, in order."""
    function = function_words(language)
    # The words of comparing ("le plus élevé", "the most") ask for an operation, not for something written.
    asked = without_comparing(without_asking(question))
    # A code mixes letters and digits ("E2", "A4", "B12"): the most particular word a question has, however short.
    codes = {t for t in tokens(asked) if any(c.isdigit() for c in t) and any(c.isalpha() for c in t)}
    content = set(content_words(asked, language, shortest=3)) - {w for w in tokens(asked) if w.casefold() in function}
    words = [w for w in tokens(asked) if w in codes or w in content]
    terms: dict[str, str] = {}
    for word, stem in zip(words, stems([w.casefold() for w in words], language), strict=True):
        terms.setdefault(stem, word)
    return [(word, stem) for stem, word in terms.items()]


def weights(terms: Sequence[str], documents: Sequence[DocumentText]) -> dict[str, float]:
    """Each term's weight: smoothed inverse document frequency over the documents' sentences (a
    short document has few passages, and rarity among two passages says little)."""
    units = [set(index_terms(sentence, document_language(doc.items))) for doc in documents
             for _, text in doc.items for sentence in split_sentences(text)]
    n = len(units)
    return {t: math.log(1 + n / (sum(t in u for u in units) + 0.5)) for t in terms}


def _named(file_name: str) -> str:
    """The words of a file's name ("baeckerei-sonnenschein-sales.xlsx": what the document is about)."""
    stem = file_name.rsplit(".", 1)[0] if "." in file_name else file_name
    return " ".join(stem.replace("_", " ").replace("-", " ").split())


def _key(word: str) -> str:
    return fold(word).casefold()


KIN_PREFIX = 4  # letters two stems share at the start, and at least KIN_SHARE of the shorter, to be one word's forms
KIN_SHARE = 0.6


def _kin(stem: str, present: set[str]) -> bool:
    """Whether the documents write a form of the word `stem` its stemmer does not join to it: a vowel changed
    inside ("beschlossen" and "Beschluss", "décidé" and "décision", "decided" and "decision"). Snowball only
    cuts endings, and a question's verb is often the noun its documents write."""
    head = stem[:KIN_PREFIX]
    for other in present:
        if other.startswith(head) and other != stem:
            shared = len(os.path.commonprefix([stem, other]))
            if shared >= KIN_SHARE * min(len(stem), len(other)):
                return True
    return False


COMPOUND_HEAD = 4  # letters at least of the word a compound ends with ("Fehlercode" over the column "Code")
COMPOUND_MODIFIER = 3  # letters at least before it


def _compound(key: str, written: set[str]) -> bool:
    """Whether `key` (folded) is a compound whose head the documents write: "Fehlercode" over a table whose
    column is "Code", "Pelletverbrauch" over "verbraucht ... Pellets". German, Dutch and the Nordic
    languages join a noun's modifiers to it, and a question names the kind of thing a document's heading
    or column leaves implicit; the head says what is asked about."""
    return any(key[i:] in written for i in range(COMPOUND_MODIFIER, len(key) - COMPOUND_HEAD + 1))


def _written(documents: Sequence[DocumentText]) -> set[str]:
    return {_key(t) for doc in documents for t in tokens(f"{doc.name} {doc.text}")}


def absent_names(question: str, documents: Sequence[DocumentText], asked: str = "") -> tuple[str, ...]:
    """The names the question writes (`agents.language.names`) that no document writes, as a word, as
    a stem in the question's language or the document's, or in its file name; a language's own name
    ("in French") is none. With `asked` (the user's request), only the names the user wrote too: a
    planned task's instructions may add names of their own ("Cite the passage"). A file type
    ("as an Excel file", "CSV") names no fact."""
    own = detect_language(question, default="en")
    languages = {document_language(d.items) for d in documents if d.items}
    if not languages:
        return ()
    same = own in languages
    # Not the words it names the documents themselves by ("der Bericht", "The Essay"): where to look.
    found = names(without_comparing(without_document_nouns(question)), own, same)  # as in `question_terms`
    if asked.strip() and asked.strip() != question.strip():
        said = {_key(n) for n in names(without_comparing(without_document_nouns(asked)),
                                       detect_language(asked, default="en"), same)}
        found = [n for n in found if _key(n) in said]
    spoken = {_key(name) for name in language_words()}
    found = [n for n in found if _key(n) not in spoken and not named_formats(n)]
    if not found:
        return ()
    words: set[str] = set()
    stemmed: set[str] = set()
    for doc in documents:
        written = [_key(t) for t in tokens(f"{doc.name} {doc.text}")]
        words.update(written)
        stemmed.update(stems(sorted(set(written)), document_language(doc.items)))
    missing = []
    for name in found:
        key = _key(name)
        if key in words or _compound(key, words) or any(stems([key], lang)[0] in stemmed for lang in {own, *languages}):
            continue
        missing.append(name)
    return tuple(missing)


def coverage(question: str, documents: Sequence[DocumentText], best: Sequence[str], asked: str = "") -> Coverage:
    """How much of the question the best passages (`best`, ranked first) hold (see the module's
    docstring). Only for a question in one of the documents' languages (a German question over an
    English manual is not "not found" for its German words).

    `asked`: the user's own request, whose words are the ones searched when it names two terms or
    more and the question is about it (shares a term with it): a planned task's question adds the
    planner's ("How often should I descale the kettle? Cite the passage." is not unanswered for
    "Cite" and "passage"). A "continue" or "And in 2022?" says too little: then the task's question
    is searched."""
    question, asked = without_instructions(question), without_instructions(asked)  # "Answer in English." asks nothing
    # "What does the PDF say about ...": the kind of document it names says where to look, not what it
    # asks; a document that does not write "PDF" is not "not found" for it (a word its parts are named by,
    # "the table on the slides" over "slide 1 table 1", still counts where they write it).
    kinds = [{"name": d.name, "ext": d.ext} for d in documents]
    missing = absent_names(without_named_kinds(question, kinds), documents,
                           without_named_kinds(asked, kinds) if asked else asked)
    if missing:  # nothing quoted can be about a name no document writes
        return Coverage(share=0.0, absent=missing)
    own = detect_language(question, default="en")
    said = {s for _, s in question_terms(asked, detect_language(asked, default="en"))} if asked.strip() else set()
    if len(said) >= 2 and said & {s for _, s in question_terms(question, own)}:
        question, own = asked, detect_language(asked, default="en")
    languages = list(dict.fromkeys(document_language(d.items) for d in documents if d.items))
    if not languages or own not in languages:
        return Coverage()
    terms = question_terms(question, own)
    # What the documents write, and what their parts are named ("slide 2 table 1", "comments", "sheet
    # Revenue"): a question about the table on the slides asks about a part, not a word of its text.
    present = {s for doc in documents
               for s in index_terms(" ".join([doc.text, _named(doc.name), *(name for name, _ in doc.items),
                                              *(t.name for t in doc.tables)]), document_language(doc.items))}
    # Not the kinds of document it names that no document writes ("PDF" over a PDF that never says it), nor
    # the words it names the documents themselves by ("What does the essay say ...", "der Bericht").
    kept = {s for _, s in question_terms(without_document_nouns(without_named_kinds(question, kinds)), own)}
    terms = [(w, s) for w, s in terms if s in kept or s in present]
    # Nor the verb of its asking that no document writes ("What does the table hold?"): what the table
    # holds is the answer, and no table writes "hold" (`asking_verbs`).
    asking = set(stems([w.casefold() for w in asking_verbs(question, function_words(own))], own))
    terms = [(w, s) for w, s in terms if s not in asking or s in present or _kin(s, present)]
    absent = tuple(word for word, stem in terms if stem not in present and not _kin(stem, present))
    if absent:  # a compound whose head the documents write is about what they write: neither absent nor weighed
        written = _written(documents)
        headed = {word for word in absent if _compound(_key(word), written)}
        absent = tuple(word for word in absent if word not in headed)
        terms = [(w, s) for w, s in terms if w not in headed]
    if not absent:
        return Coverage()
    top = list(best[:BEST])
    kind = asked_kind(question)
    known = {s for _, s in terms if s in present}
    if kind and known and any(holds(kind, text) and known <= set(index_terms(text, own)) for text in top):
        return Coverage()  # a quote holds the kind of fact asked for beside everything the documents have of it
    weight = weights([s for _, s in terms], documents)
    held = set().union(*(index_terms(text, own) for text in top)) if top else set()
    total = sum(weight.values())
    return Coverage(share=sum(w for s, w in weight.items() if s in held) / total, absent=absent)


def unanswered(question: str, documents: Sequence[DocumentText], best: Sequence[str], asked: str = "") -> list[str]:
    """The question's words no document writes, when the best passages do not answer it; else []."""
    return coverage(question, documents, best, asked).unanswered
