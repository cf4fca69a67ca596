"""What a request points back at: a follow-up question's earlier one ("And in 2022?"), the documents
it names by file name, a word of the name, kind ("the Excel from before"), position ("the second
one") or as what the user saw ("translate that", "the summary of round 2"), and a request to carry
on with an interrupted round. Regular expressions over the request, in en/de/fr. Pure, no I/O.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

from agents.language.words import function_words

ANSWER = "answer"  # the origin of an earlier step's text, as a document a request can name

# A question that goes on from the one before and points back at what it asked: "And what was it
# in 2022?", "Und wie hoch war er 2022?", "Et en 2022 ?". Its own words name only what changed.
FEW_WORDS = 5  # "And in Zone NA?": a follow-up that says only what changed
_GOES_ON = re.compile(r"^\W*(?:and|und|et)\b", re.IGNORECASE)
# Only pronouns that are nothing else: "en", "le", "das", "es", "sie" are also prepositions,
# articles or "there is" ("Et en quelle année Molière est-il mort ?" asks a question of its own).
_POINTS_BACK = re.compile(r"\b(?:it|its|that|those|them|er|ihn|davon|dies|cela|ça|celui|celle)\b", re.IGNORECASE)


def goes_on(question: str) -> bool:
    """Whether a question begins as a follow-up: "And …", "Und …", "Et …"."""
    return bool(_GOES_ON.match(question))


def refers_back(question: str) -> bool:
    """Whether a question begins as a follow-up ("And …") and names what it asks by a pronoun, or
    names only what changed in a few words ("And in Zone NA?", "Und 2022?")."""
    if not goes_on(question):
        return False
    return bool(_POINTS_BACK.search(question)) or len(re.findall(r"\w+", question)) <= FEW_WORDS


# Kinds of document a request names without naming the file, in en/de/fr.
_KINDS: dict[str, tuple[str, ...]] = {
    r"\b(?:excel|workbooks?|xlsx?|arbeitsmappe|classeurs?)\b": ("xlsx", "xls", "xlsm", "ods"),
    r"\b(?:spreadsheets?|tabellenkalkulation|feuilles? de calcul)\b": ("xlsx", "xls", "xlsm", "ods", "csv", "tsv"),
    r"\bcsv\b": ("csv",),
    r"\bpdfs?\b": ("pdf",),
    r"(?<![\d-])\b(?:word|docx)\b(?!\s*(?:count|limit|for word))": ("docx", "doc", "odt"),  # not "a 500-word summary"
    r"\b(?:powerpoint|pptx|slides?|folien|präsentation|diapositives?|présentation)\b": ("pptx", "ppt", "odp"),
    r"\b(?:images?|photos?|bild|bilder|scans?|png|jpe?g)\b": ("png", "jpg", "jpeg", "tif", "tiff", "bmp", "gif"),
}
# A kind after a word of making ("as Excel", "into a spreadsheet", "en CSV", "als Word-Datei", "in Excel")
# is a format to deliver, not a document to read: "le tableau Excel en CSV" reads the workbook, makes a CSV.
_AS_FORMAT = re.compile(r"\b(?:as|into|to|in|als|nach|zu|en|comme|vers)\s+(?:(?:an?|eine?[mnrs]?|une?)\s+)?$")


def _spoken_kinds(text: str) -> list[tuple[re.Match[str], tuple[str, ...]]]:
    """Where a (casefolded) text names a kind of document as a document ("the PDF", "le Word", "die
    Excel-Datei"), not as a format to deliver (`_AS_FORMAT`), with the file extensions of that kind."""
    return [(m, exts) for pattern, exts in _KINDS.items() for m in re.finditer(pattern, text)
            if not _AS_FORMAT.search(text[max(0, m.start() - 16):m.start()])]


def _of_kind(text: str, pool: Sequence[Mapping[str, Any]], earlier: bool) -> list[str]:
    """The documents of `pool` of each kind the text names as a document ("the PDF and the Word"); with
    `earlier` ("the Excel from before"), of each kind those of the latest round that had one."""
    found: list[str] = []
    for _, exts in _spoken_kinds(text):
        kind = [f for f in pool if str(f.get("ext") or "").lower() in exts]
        if kind and earlier:
            newest = max(int(f.get("round") or 0) for f in kind)
            kind = [f for f in kind if int(f.get("round") or 0) == newest]
        found += [str(f["name"]) for f in kind if str(f["name"]) not in found]
    return found


def without_named_kinds(text: str, facts: Sequence[Mapping[str, Any]]) -> str:
    """The text without the kinds of document it names as documents the workflow has ("le tableau Excel
    en CSV" over a workbook is "le tableau en CSV"): what is left names the formats to deliver."""
    held = {str(f.get("ext") or "").lower() for f in facts}
    low = text.lower()
    out = text if len(low) == len(text) else low  # the text's own case, where lowering kept its length
    spans = sorted((m.start(), m.end()) for m, exts in _spoken_kinds(low) if held & set(exts))
    for start, end in reversed(spans):
        out = out[:start] + " " + out[end:]
    return " ".join(out.split())


# The documents themselves, named by what they are rather than by format, after a word that points at one
# ("What does the essay say about ...", "Was schreibt der Autor über ...", "Que dit l'article sur ..."):
# where to look, not what to find. A document that writes the word keeps it as a term (`coverage`).
_DOCUMENT_NOUN = re.compile(
    r"(?:\b(?:the|this|that|these|those|your|my|our"
    r"|der|die|das|dem|den|des|im|ihr|ihre[mnrs]?|dies(?:e[mnrs]?)?|meine?[mnrs]?|unsere?[mnrs]?"
    r"|le|la|les|du|au|aux|ce|cet|cette|ces|votre|vos|mon|ma|mes|notre|nos)\s+|\bl['’]\s*)"
    r"(?P<noun>documents?|files?|texts?|essays?|articles?|papers?|reports?|letters?|memos?|authors?|writers?"
    r"|books?|chapters?|forms?|manuals?|brochures?|leaflets?"
    r"|dokumente?n?|datei(?:en)?|texte?s?|aufsatz(?:es)?|aufsätzen?|artikels?|berichte?s?|briefe?s?"
    r"|autor(?:in|s)?|verfasser(?:in|s)?|buch(?:es)?|büchern?|kapitels?|formulare?s?|handbuch(?:es)?|broschüre"
    r"|fichiers?|essais?|rapports?|lettres?|courriers?|auteure?s?|autrice|livres?|chapitres?|formulaires?"
    r"|manuels?)\b",
    re.IGNORECASE)


def without_document_nouns(text: str) -> str:
    """The text without the words it names the documents themselves by ("the essay", "der Bericht",
    "l'article"): what is left is what it asks of them."""
    return " ".join(_DOCUMENT_NOUN.sub(lambda m: m.group(0)[:m.start("noun") - m.start()] + " ", text).split())


def without_named_documents(text: str, facts: Sequence[Mapping[str, Any]]) -> str:
    """The text without the file names, their stems and the kinds of document it names of `facts` ("what
    does budget.xlsx give for Zone EUR", "what does the PDF say about Berlin"): the words of what it asks."""
    out = without_named_kinds(text, facts)
    for f in sorted(facts, key=lambda f: -len(str(f["name"]))):
        name = str(f["name"])
        for spelt in (name, _stem_of(name)):
            if len(spelt) >= 4:
                out = re.sub(rf"(?<![\w-]){re.escape(spelt)}(?![\w-])", " ", out, flags=re.IGNORECASE)
    return " ".join(out.split())


_EARLIER = re.compile(r"\b(?:before|earlier|previous|last time|vorhin|vorher|davor|früher|zuvor|"
                      r"avant|précédent\w*|tout à l'heure|plus tôt)\b")
_WORD = re.compile(r"[^\W\d_]{4,}")
# Words that name what is asked for rather than which document: "extract the tables" must not
# pick "a-tables.xlsx" out of several uploads.
_GENERIC = frozenset("""file files document documents datei dateien dokument dokumente fichier fichiers
    from and this that diese dieser dieses cette report reports table tables summary summaries data text
    texts excel word pdf csv sheet sheets bericht berichte tabelle tabellen zusammenfassung daten
    rapport rapports tableau tableaux résumé données texte sample test example
    workbook workbooks arbeitsmappe classeur spreadsheet attachment attachments upload uploads these those
    diesem dieser diesen ceci ces""".split())


def names_documents_only(text: str) -> bool:
    """Whether a phrase's words only point at the documents ("this workbook", "dieses Dokument", "ce
    fichier"), naming nothing they are about."""
    return not _words(text)


def _words(text: str) -> set[str]:
    return {w for w in _WORD.findall(text.casefold()) if w not in _GENERIC}


def _stem_of(name: str) -> str:
    return name.rsplit(".", 1)[0] if "." in name else name


def _spelt(stem: str, text: str) -> bool:
    return (len(stem) >= 4 and stem not in _GENERIC
            and re.search(rf"(?<![\w-]){re.escape(stem)}(?![\w-])", text) is not None)


# "translate that", "fasse das zusammen", "traduis ça": a verb of work on a pronoun points at the
# last thing the user saw; "the second one", "der zweite", "le deuxième" at the user's uploads, in order.
_THAT = re.compile(
    r"\b(?:translate|summari[sz]e|shorten|rewrite|rephrase|export|save|format|convert|turn|put|send|"
    r"übersetze?|fasse?|kürze?|formuliere?|speichere?|exportiere?|traduis|traduire|résume|résumer|"
    r"raccourcis|réécris|reformule|enregistre|exporte)\s+(?:that|this|it|das|dies|es|ça|cela|le|la)\b"
    r"|\bl'(?:traduire|résumer)\b|\b(?:traduis|résume)[- ]le\b")
_ORDINALS = {
    1: r"first|erste[nrs]?|premi(?:er|ère)", 2: r"second|zweite[nrs]?|deuxième|seconde?",
    3: r"third|dritte[nrs]?|troisième", 4: r"fourth|vierte[nrs]?|quatrième", -1: r"last|letzte[nrs]?|derni(?:er|ère)",
}
_ORDINAL = re.compile(
    r"\b(?:the|der|die|das|den|dem|le|la)\s+(" + "|".join(f"(?P<n{i if i > 0 else 'l'}>{w})"
                                                       for i, w in _ORDINALS.items()) +
    r")(?:\s+(?:one|document|file|upload|eine?|dokument|datei|fichier)\b"
    r"|(?=\s*(?:[.,;!?]|$|only\b|nur\b|zusammen\b|seulement\b|uniquement\b)))")


_KIND_WORDS = {"summary": "summary", "zusammenfassung": "summary", "résumé": "summary",
               "translation": "translation", "übersetzung": "translation", "traduction": "translation",
               "answer": "answer", "antwort": "answer", "réponse": "answer", "report": "report", "bericht": "report",
               "rapport": "report"}
_OF_ROUND = re.compile(r"\b(" + "|".join(_KIND_WORDS) + r")\s+(?:of|from|in|aus|von|der|du|de la|de)\s+"
                       r"(?:the\s+)?(?:round|runde|tour)\s+(\d+)")


_ROUND_NAMED = re.compile(r"\b(?:round|runde|tour)\s+(\d+)\b", re.IGNORECASE)  # the words `_OF_ROUND` reads


def rounds_named(prompt: str) -> list[int]:
    """The rounds a request names by number ("the summary of round 2"), in order."""
    return list(dict.fromkeys(int(n) for n in _ROUND_NAMED.findall(prompt)))


def _pointed(text: str, facts: Sequence[Mapping[str, Any]]) -> list[str]:
    """What "the summary of round 2", "that" or "the second one" points at, else []."""
    of_round = _OF_ROUND.search(text)
    if of_round:
        kind, number = _KIND_WORDS[of_round.group(1)], int(of_round.group(2))
        named = [str(f["name"]) for f in facts if f.get("origin") == ANSWER and int(f.get("round") or 0) == number
                 and str(f["name"]).startswith(kind)]
        if named:
            return named
    found = _ORDINAL.search(text)
    uploads = sorted((f for f in facts if f.get("origin", "uploaded") == "uploaded"),
                     key=lambda f: int(f.get("round") or 0))  # stable: each round's own order is kept
    if found and uploads:
        n = next(int(k[1:]) if k != "nl" else -1 for k, v in found.groupdict().items() if v)
        if n == -1 or n <= len(uploads):
            return [str(uploads[n - 1 if n > 0 else -1]["name"])]
    if any(_pronoun(text, m, facts) for m in _THAT.finditer(text)):
        answers = [f for f in facts if f.get("origin") == ANSWER]
        if answers:
            newest = max(int(f.get("round") or 0) for f in answers)
            return [str(f["name"]) for f in answers if int(f.get("round") or 0) == newest][-1:]
    return []


_NEXT = re.compile(r"[\s,]*([^\W\d_]+)")


def _pronoun(text: str, match: re.Match[str], facts: Sequence[Mapping[str, Any]]) -> bool:
    """Whether the word `_THAT` read is a pronoun ("fasse das zusammen", "translate it into German") and
    not the article or determiner of a noun ("fasse das Protokoll zusammen", "summarise this report",
    "résume le rapport": that names a document, which is not the last answer): what follows it is
    nothing, a function word of en/de/fr, or the kind of an earlier answer ("that summary" after one)."""
    after = _NEXT.match(text, match.end())
    if after is None:
        return True
    word = after.group(1)
    kinds = {_KIND_WORDS[w] for w in _KIND_WORDS if w == word}
    if any(f.get("origin") == ANSWER and str(f["name"]).startswith(tuple(kinds)) for f in facts):
        return True
    return word == "bitte" or any(word in function_words(lang) for lang in ("en", "de", "fr"))


def _named(text: str, names: Sequence[str]) -> list[str]:
    """The names of `names` whose file name or stem the (casefolded) request spells out."""
    return [n for n in names if n.casefold() in text or _spelt(_stem_of(n).casefold(), text)]


def pointed_at(prompt: str, facts: Sequence[Mapping[str, Any]]) -> list[str]:
    """The documents a request points at beyond doubt: by file name, position ("the second one"), as
    what the user saw last ("translate that") or by round ("the summary of round 2"); else []. No
    guess by a word of a name or a kind of file: a plan's choice is checked against this."""
    text = prompt.casefold()
    return _named(text, [str(f["name"]) for f in facts]) or _pointed(text, facts)


def resolve_references(prompt: str, facts: Sequence[Mapping[str, Any]]) -> list[str]:
    """The documents the request refers to by file name, by a word of their name ("the contract"
    for contract.pdf), by kind ("the Excel from before"), or as what the user saw ("that" for the
    last step's text, "the second one" for the second upload); empty when it names none. What it
    leaves out ("skip the ledger": `left_out`) is not what it refers to."""
    text = prompt.casefold()
    if _LEAVE_OUT.search(prompt):
        kept = _LEAVE_OUT.sub(" ", prompt).casefold()
        gone = set(left_out(prompt, facts))
        chosen = [n for n in resolve_references(kept, facts) if n not in gone] if kept.strip() else []
        return chosen or [str(f["name"]) for f in facts if gone and str(f["name"]) not in gone
                          and f.get("origin") != ANSWER and (f.get("new") or not any(g.get("new") for g in facts))]
    # A full file name or its stem, spelt out.
    named = _named(text, [str(f["name"]) for f in facts])
    if named:
        return named
    by_word = _by_word(text, facts)
    if by_word:
        return by_word
    earlier = bool(_EARLIER.search(text))
    if not earlier and any(f.get("new") for f in facts):
        # "the PDF" among this round's uploads is what the request is about, not a pick; a request whose
        # parts name different ones reads each in its part (`agents.language.documents_by_part`).
        return []
    pointed = _pointed(text, facts)
    if pointed:
        return pointed
    return _of_kind(text, [f for f in facts if not (earlier and f.get("new"))], earlier)


def _by_word(text: str, facts: Sequence[Mapping[str, Any]]) -> list[str]:
    """The documents a word of whose name the (casefolded) text writes ("the contract" for
    "Contract_2024.pdf", "the cups" for "stanley-cups.tsv"); earlier answers are not named so."""
    asked = _words(re.sub(r"[`'\"]", " ", text))
    return [str(f["name"]) for f in facts if f.get("origin") != ANSWER
            and asked & _words(re.sub(r"[-_.]", " ", _stem_of(str(f["name"]))))]


def named_documents(text: str, facts: Sequence[Mapping[str, Any]]) -> list[str]:
    """The documents one part of a request names, as a pick among `facts`: by file name, a word of the
    name, position or as what the user saw (as `resolve_references` reads them), else by a kind spoken
    as a document ("the PDF", "le Word", "die Excel-Datei", not "as CSV"), among this round's uploads
    when there are any and the part does not say "before"; [] when it names none."""
    text = text.casefold()
    found = _named(text, [str(f["name"]) for f in facts]) or _by_word(text, facts) or _pointed(text, facts)
    if found:
        return found
    earlier = bool(_EARLIER.search(text))
    new = [f for f in facts if f.get("new") and f.get("origin") != ANSWER]
    return _of_kind(text, new if new and not earlier else [f for f in facts if not (earlier and f.get("new"))],
                    earlier)


# "skip the ledger", "without the minutes", "ohne die Tabelle", "überspringe das Protokoll", "sauf le devis",
# "sans le rapport": what follows names a document the request leaves out, up to the next comma or "and".
_LEAVE_OUT = re.compile(
    r"\b(?:skip|skipping|without|except|excluding|ignore|ignoring|leave out|(?:do not|don't) (?:use|read)|"
    r"ohne|außer|ausser|überspring\w*|ignorier\w*|sauf|sans|hormis|ignore[rz]?|laisse[rz]? de côté)"
    r"\s+([^,;.!?]+?)(?=\s+(?:and|und|et|but|aber|mais)\b|[,;.!?]|$)",
    re.IGNORECASE)


def left_out(prompt: str, facts: Sequence[Mapping[str, Any]]) -> list[str]:
    """The documents a request leaves out ("only the report, skip the ledger"), by what follows a word of
    leaving out, resolved as `resolve_references` resolves a request; [] when it leaves none out."""
    found: list[str] = []
    for match in _LEAVE_OUT.finditer(prompt):
        named = resolve_references(match.group(1), [{**f, "new": False} for f in facts])
        found += [n for n in named if n not in found]
    return found


_CONTINUE = re.compile(
    r"^\s*(?:please\s+|bitte\s+)?(?:continue|carry on|go on|resume|keep going|proceed|weiter\w*|fortfahren|"
    r"fahre? fort|mach(?:e)? weiter|continue[rz]?|continuons|reprend\w*|poursui\w*)\b"
    r"|\b(?:where you (?:left off|stopped)|wo du aufgehört|là où tu t'es arrêté|là où vous vous êtes arrêté)",
    re.IGNORECASE)


def wants_continuation(prompt: str) -> bool:
    """Whether the request asks to carry on with what the last round did not finish."""
    return bool(_CONTINUE.search(prompt))
