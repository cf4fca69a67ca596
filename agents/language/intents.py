"""What a request asks for: its intents (extract tables, summarise, translate, answer a question,
write a document), in the order the work runs, the question within a request that asks for more,
and the file formats it names. Regular expressions over the lowercased request, in en/de/fr: the
offline model plans with them (a model with words of its own plans without). Pure, no I/O.
"""

from __future__ import annotations

import re
from typing import Literal

from agents.language.references import names_documents_only, without_document_nouns
from agents.language.words import function_words, tokens

Intent = Literal["extract", "summary", "translate", "answer", "write"]

_INDIRECT = (
    r"\b(?:tell|show) me,? (?:what|which|who|when|where|why|how|whether|if)\b|\btell me the\b"
    r"|\b(?:sag|sage|sagt|sagen sie|zeig|zeige|zeigen sie) mir,? (?:was|wer|wann|wo|welche\w*|warum|wieso|wie|ob)\b"
    r"|\b(?:sag|sage|sagt|sagen sie|nenn|nenne|nennen sie) mir,? (?:den|die|das)\b"
    r"|\b(?:dis|dites|montre|montrez)[- ]moi,? (?:ce qu|quel\w*|qui|quand|où|pourquoi|comment|combien|si)"
    r"|\b(?:dis|dites)[- ]moi,? (?:le|la|les)\b"
)
# A question asked outright: an interrogative first, or a preposition and one ("In which ...",
# "Mit welchem ...", "Dans quel ...", "Womit ...").
_DIRECT = [
    r"^\s*(?:what|who|whom|whose|when|where|which|why|how|explain|compare)\b",
    r"^\s*(?:in|from|for|by|with|at|on|to|of|since|until) (?:what|which|whom|whose|when|where)\b",
    r"^\s*(?:was|wer|wem|wen|wessen|wann|wo|welche\w*|warum|wieso|weshalb|wie|erkläre?|vergleiche?|gibt es)\b",
    r"^\s*(?:in|aus|von|mit|für|bei|an|auf|zu|nach|seit|bis|um|über|unter) (?:was|wem|wen|wann|welche\w*)\b",
    r"^\s*wo(?:r?an|r?auf|r?aus|bei|durch|für|mit|nach|r?in|r?über|von|zu)\b",
    r"^\s*(?:quel(?:le)?s?|qui|quand|où|pourquoi|comment|combien|explique\w*|compare\w*)\b",
    r"^\s*(?:dans|de|d'|pour|par|avec|en|à|sur|chez|depuis|jusqu'à) ?(?:quel(?:le)?s?|qui|quoi|lequel|laquelle"
    r"|lesquel(?:le)?s|où|quand)\b",
]
# Asking what a document is about asks for its gist, a summary: "What is this text about?", "What's it
# about?", "Worum geht es in dem Bericht?", "Wovon handelt das Buch?", "De quoi parle cet article ?". What
# the question names must be the documents themselves (or nothing): "What is the dispute about?" asks
# about a thing in them (`_gist_of_documents`).
_GIST = re.compile(
    r"\bwhat(?:['’]s|\s+is|\s+are|\s+was|\s+were)\s+(?P<en>[^?.!;\n]{1,60}?)\s+(?:all\s+)?about\s*(?:[?.!;,]|\s+and\b|$)"
    r"|\bworum\s+geht\s+es(?:\s+(?P<de>(?:in|im|bei|beim)\s+[^?.!;\n]{1,60}?))?\s*(?:[?.!;]|$)"
    r"|\b(?:wovon|worüber)\s+(?:handelt|handeln|spricht|sprechen)\s+(?P<de2>[^?.!;\n]{1,60}?)\s*(?:[?.!;]|$)"
    r"|\b(?:de|sur)\s+quoi\s+(?:parle|parlent|traite|traitent|porte|portent)(?:-t-(?:il|elle)|-(?:ils|elles))?"
    r"\s*(?P<fr>[^?.!;\n]{0,60}?)\s*(?:[?.!;]|$)"
    r"|\bde\s+quoi\s+(?:s['’]agit-il|il\s+s['’]agit)\b",
    re.IGNORECASE)
# Asking for a file of the tables: a verb of extraction or delivery, or a format to deliver in.
# Without one, a question's "the table" or "the CSV file" names where the answer is.
_TABLE_FORMAT = re.compile(r"\b(?:excel|csv|tsv|xlsx?|ods|workbooks?|spreadsheets?|arbeitsmappe|tabellenkalkulation"
                           r"|classeurs?|feuilles? de calcul)\b")
_TABLE_OUTPUT = re.compile(
    r"\bextra(?:ct|hier|i)|\bexport|\bconvert|\bkonvertier|\bumwandel|\bwandle|\bspeicher|\bsave\b"
    r"|\b(?:give|send|make|create|build|produce|put)\b|\b(?:gib|schick\w*|erstell\w*|mach\w*)\b"
    r"|\b(?:donne|envoie|crée|créez|fais|faites|mets|mettez)\b"
    r"|\b(?:as|into|als|en|comme|in)(?: an?| ein\w*| une?)? (?:excel|csv|xlsx?|workbook|spreadsheet|tabellenkalkulation"
    r"|arbeitsmappe|classeur|feuille de calcul)\b"
)
# (intent, patterns) in the order the tasks run; patterns match the lowercased prompt.
INTENTS: list[tuple[Intent, list[str]]] = [
    ("extract", [
        r"\btab(?:le|elle|leau)", r"\bcsv\b", r"\bexcel\b", r"\bxlsx?\b", r"spreadsheet",
        r"\bfigures\b", r"\bzahlen\b", r"\bchiffres\b", r"\bdonnées\b", r"\bdaten\b", r"\bdata\b",
        r"kalkulationstabelle", r"\bfeuille de calcul",
    ]),
    ("summary", [
        r"summar", r"zusammenfass", r"\bfass\w*\b.*\bzusammen\b", r"résum", r"\bresum",
        r"synthès", r"overview", r"überblick", r"\bgist\b", r"\btl;?dr\b", r"\bkey points\b",
        r"kernpunkte", r"points clés",
    ]),
    ("translate", [r"translat", r"übersetz", r"tradui", r"traduction"]),
    ("answer", [
        *_DIRECT,
        r"analy[sz]", r"\bfind\b", r"\bfinde\b", r"\btrouve\w*\b",
        # An indirect question anywhere: "... and tell me what ...", "sag mir, was ...", "dis-moi ce que ...".
        _INDIRECT,
    ]),
    # A report is asked for with a verb or an indefinite article; "summarise the report" is not.
    ("write", [
        r"\b(?:write|draft|compose)\b",
        # "a report", "a Word report", "a short memo", "einen Word-Bericht", "einen kurzen Bericht".
        r"\ban? (?:(?:word|short|brief|detailed|formal|one-page|two-page) )?(?:report|memo|letter|article|brief(?:ing)?)\b",
        # A format asked for ("as a Word document", "als DOCX"), not a document referred to
        # ("the comment in the Word document", "im Word-Dokument").
        r"\b(?:as|in|into|als|en|comme)(?: an?| ein\w*| une?)? (?:word[- ]?(?:dok|doc)\w*|docx|document word)\b",
        r"schreib", r"verfass", r"\bentw(?:irf|erfen)",
        r"\beine?n? (?:kurze[nr]? |ausführliche[nr]? )?(?:word-)?(?:bericht|memo|brief|artikel)\b", r"rédig", r"écri[sr]",
        r"\bune? (?:rapport|mémo|lettre|article)\b",
    ]),
]
# A yes/no question or a polite request ("Can you ...?", "Kannst du mir ... geben?", "Peux-tu
# ...?") asks a question only when it asks for nothing else: then it is a command.
_WEAK_QUESTION = [
    r"\?", r"^\s*(?:is|are|does|do|did|can|could|would|will)\b",
    r"^\s*(?:ist|sind|hat|haben|kannst|können|könnten|könntest|würdest|würden)\b",
    r"^\s*(?:est-ce|peux|pouvez|pourrais|pourriez|voudrais|voulez)\b",
]


def _any_of(patterns: list[str]) -> re.Pattern[str]:
    """One pattern that matches where any of `patterns` does: a single scan of the prompt, not one per pattern."""
    return re.compile("|".join(f"(?:{p})" for p in patterns))


_INTENT_PATTERNS = [(intent, _any_of(patterns)) for intent, patterns in INTENTS]
_DIRECT_PATTERN = _any_of(_DIRECT)
_INDIRECT_PATTERN = re.compile(_INDIRECT)
_WEAK_QUESTION_PATTERN = _any_of(_WEAK_QUESTION)
_CSV = re.compile(r"\bcsv\b")
_WORKBOOK = re.compile(r"\b(?:excel|xlsx?|workbook|arbeitsmappe|classeur|spreadsheet|tabellenkalkulation)\b")
_WORD = re.compile(r"(?<![\d-])\b(?:ms[- ])?word\b(?!\s*(?:count|limit|for word))|\bdocx\b")
_MARKDOWN = re.compile(r"\bmarkdown\b|\.md\b|\bmd\b")


def detect_intents(prompt: str, has_tables: bool) -> list[Intent]:
    """The intents a request expresses, in task order."""
    text = prompt.lower()
    found: list[Intent] = [intent for intent, pattern in _INTENT_PATTERNS if pattern.search(text)]
    # "extract the tables" is table work; "extract" alone only when the documents hold tables.
    if "extract" not in found and has_tables and re.search(r"\bextra(?:ct|hier|i)", text):
        found.insert(0, "extract")
    # "What is the square of 12 in the table?" asks for an answer, not for the table; so does "... and tell
    # me what the Word document says about its nested table" (issue 50: a table file nobody asked for).
    if "extract" in found and (is_direct_question(text) or _INDIRECT_PATTERN.search(text)) \
            and not _TABLE_OUTPUT.search(text):
        found.remove("extract")
    # "Write a report on the harvest figures": the figures are the report's material, not a workbook to
    # deliver (issue 50, item 8: an extra tables.xlsx nobody asked for, and the report made of the
    # extractor's status lines). Table work stays when it is asked for by its verb or a table format.
    if "write" in found and "extract" in found and not re.search(r"\bextra(?:ct|hier|i)", text) \
            and not _TABLE_FORMAT.search(text):
        found.remove("extract")
    if not found and _WEAK_QUESTION_PATTERN.search(text):
        found.append("answer")
    gist = _gist_of_documents(text)
    if gist is not None:
        if "summary" not in found:
            found.insert(next((i for i, intent in enumerate(found) if intent != "extract"), len(found)), "summary")
        # The gist was the question: nothing else asks one ("Answer in two sentences" says how long).
        rest = text[:gist.start()] + " " + text[gist.end():]
        if "answer" in found and not any(p.search(rest) for intent, p in _INTENT_PATTERNS if intent == "answer") \
                and not re.search(r"\w[^.!?]*\?", rest):
            found.remove("answer")
    return found


def _gist_of_documents(text: str) -> re.Match[str] | None:
    """Where the request asks what the documents are about ("what is this essay about?", "worum geht es?"),
    naming nothing in them but the documents themselves; None when it does not."""
    for match in _GIST.finditer(text):
        group, named = next(((g, v) for g, v in match.groupdict().items() if v), ("en", ""))
        # Besides a document it may name only a pronoun, a determiner or a preposition pointing at one ("it",
        # "in diesem", "cet"): the function words of the language it is asked in (its group's name).
        pointers = function_words(group[:2])
        if all(w.casefold() in pointers for w in tokens(without_document_nouns(named))):
            return match
    return None


def is_direct_question(prompt: str) -> bool:
    """The request opens with an interrogative ("What is ...", "In welcher Datei ...", "Dans quel ...")."""
    text = prompt.lower()
    return _DIRECT_PATTERN.search(text) is not None


def question_of(prompt: str) -> str:
    """The indirect question of a request that asks for more ("Give me the table and tell me what
    ... is" asks "tell me what ... is"), so the other work's words do not rank the passages."""
    match = re.search(_INDIRECT, prompt, re.IGNORECASE)
    return prompt[match.start():].strip() if match else prompt


def document_formats(prompt: str) -> list[str]:
    """The formats a written document is asked in: Word only, Markdown only, or (named neither or
    both) Markdown and Word. "A 500-word report" names a length, not Word."""
    text = prompt.lower()
    word, markdown = bool(_WORD.search(text)), bool(_MARKDOWN.search(text))
    if word != markdown:
        return ["docx"] if word else ["md"]
    return ["md", "docx"]


def named_formats(prompt: str) -> list[str]:
    """The file types a request names outright (CSV, an Excel workbook, Word, Markdown), in that order;
    none when it names none."""
    text = prompt.lower()
    return [ext for ext, pattern in (("csv", _CSV), ("xlsx", _WORKBOOK), ("docx", _WORD), ("md", _MARKDOWN))
            if pattern.search(text)]


def table_formats(prompt: str) -> list[str]:
    """The file types a table request asks for: a workbook unless only CSV is named."""
    text = prompt.lower()
    csv, workbook = bool(_CSV.search(text)), bool(_WORKBOOK.search(text))
    return ["xlsx", "csv"] if csv and workbook else (["csv"] if csv else ["xlsx"])


# "a report on the orchard survey", "einen Bericht über die Ernte", "un rapport sur la récolte": the kind of
# document and what it is about, as the request writes them.
_TOPIC = re.compile(
    r"\b(reports?|memos?|briefing|overview|letter|berichts?|übersicht|memo|brief|rapports?|note|synthèse|lettre)"
    r"(?:\s+(?:word|docx))?\s+(on|about|of|regarding|über|zu[mr]?|zu den|sur|concernant|à propos de)\s+([^.;!?\n]{3,80}?)\s*(?:[.;!?\n]|,\s|$)",
    re.IGNORECASE)


def document_topic(request: str) -> str:
    """The title a request implies for the document it asks to write: its kind and what it is about
    ("Report on the orchard survey and the harvest figures"); "" when it names no topic."""
    found = _TOPIC.search(request)
    if not found or names_documents_only(found.group(3)):  # "a report on this workbook" names no topic
        return ""
    text = " ".join(" ".join(found.group(1, 2, 3)).rstrip(".;!?, \n").split())
    return text[:1].upper() + text[1:]


_COUNTS = {"one": 1, "a": 1, "a single": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7,
           "eight": 8, "nine": 9, "ten": 10, "ein": 1, "einem": 1, "einen": 1, "zwei": 2, "drei": 3, "vier": 4,
           "fünf": 5, "sechs": 6, "sieben": 7, "acht": 8, "neun": 9, "zehn": 10, "un": 1, "une": 1, "une seule": 1,
           "deux": 2, "trois": 3, "quatre": 4, "cinq": 5, "sept": 7, "huit": 8, "neuf": 9, "dix": 10}
MAX_ASKED_SENTENCES = 20
# "in three sentences", "in 3 Sätzen", "in einem Satz", "en trois phrases", "en une seule phrase".
_SENTENCES = re.compile(
    rf"\b(\d{{1,2}}|{'|'.join(sorted(map(re.escape, _COUNTS), key=len, reverse=True))})\s+"
    r"(?:short\s+|kurzen?\s+|courtes\s+)?(?:sentences?|sätzen?|satz|phrases?)\b", re.IGNORECASE)


def asked_sentences(request: str) -> int | None:
    """How many sentences a request asks a summary to have ("in three sentences", "in 3 Sätzen", "en trois
    phrases"), at most MAX_ASKED_SENTENCES; None when it names no number."""
    match = _SENTENCES.search(request)
    if not match:
        return None
    word = match.group(1).casefold()
    count = int(word) if word.isdigit() else _COUNTS[word]
    return max(1, min(count, MAX_ASKED_SENTENCES))
