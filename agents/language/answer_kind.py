"""The kind of fact a question asks for, and whether a text holds one (answer-type checking, as
question-answering systems have done since TREC): "Combien coûte la visite guidée ?" asks for a
price, and a passage without an amount cannot answer it, however many of the question's words it
shares ("Bienvenue à la visite guidée" shares two of three).

Three kinds, asked in en/de/fr: a price ("how much does it cost", "was kostet", "combien coûte",
"price", "Gebühr", "tarif"), a date or time ("when", "wann", "quand", "what year") and a number
("how many", "wie viele", "combien de", "what percentage"). A text holds a price when an amount stands
beside a currency (or says the thing is free), a date when it names a year, a month, a weekday or a
clock time, a number when it has digits or a number word. Pure, no I/O.
"""

from __future__ import annotations

import re

from agents.language.persons import BYLINE_MARKER, names_a_line

PRICE, DATE, NUMBER, AUTHOR = "price", "date", "number", "author"

_PRICE_ASKED = re.compile(
    r"\b(?:cost|costs|price|prices|priced|fee|fees|charge|charges|tariff|how much (?:do|does|did|is|are|will|would)"
    r"(?: \w+){0,4} (?:pay|cost|charge)"
    r"|kostet|kosten|kostete|preis|preise|gebühr|gebühren|wie teuer|eintritt"
    r"|coûte|coûtent|coûtait|coût|coûts|prix|tarif|tarifs|frais)\b",
    re.IGNORECASE,
)
_DATE_ASKED = re.compile(
    r"\b(?:when|what date|which date|what day|which day|what year|which year|what time|by what date"
    r"|wann|welche[nms]? (?:datum|tag|jahr)|an welchem tag|in welchem jahr|um wie viel uhr|bis wann|seit wann"
    r"|quand|quelle date|quel jour|quelle année|en quelle année|à quelle heure|depuis quand|jusqu'à quand)\b",
    re.IGNORECASE,
)
_NUMBER_ASKED = re.compile(
    r"\b(?:how many|how much|how long|how far|how old|how big|how large|how high|what percentage|what share"
    r"|wie viele|wie viel|wieviel|wieviele|wie lange|wie weit|wie alt|wie groß|wie hoch|wie oft"
    r"|combien|quel pourcentage|quelle part|quelle durée|quelle taille)\b",
    re.IGNORECASE,
)

# Who wrote a document: "Who wrote the essay?", "Who are the authors?", "Wer hat den Bericht verfasst?", "Wer ist
# die Autorin?", "Qui a écrit ce texte ?", "Qui est l'auteur ?". Its answer is a byline, not a passage that
# shares the question's words (`agents.knowledge.bylines`).
_AUTHOR_ASKED = re.compile(
    r"\bwho\s+(?:wrote|has\s+written|had\s+written|authored|is\s+the\s+author|are\s+the\s+authors|is\s+it\s+by)\b"
    r"|\bwhose\s+(?:essay|article|paper|report|book|text)\b|\bauthors?\s+of\b|\bwritten\s+by\s+whom\b"
    r"|\bwer\s+(?:hat|schrieb|verfasste)\b[^?.!]*?\b(?:geschrieben|verfasst|schrieb|verfasste)\b"
    r"|\bwer\s+(?:ist|sind|war|waren)\s+(?:der|die)\s+(?:autor|autorin|autoren|verfasser|verfasserin)\b"
    r"|\bvon\s+wem\s+(?:ist|stammt|wurde)\b"
    r"|\bqui\s+(?:a\s+écrit|a\s+rédigé|est\s+l['’]auteur|sont\s+les\s+auteurs|est\s+l['’]autrice)\b"
    r"|\bde\s+qui\s+est\b",
    re.IGNORECASE,
)
# A byline in running text: a person named after "by", "von", "par" or a label ("Author:", "Rédigé par");
# a line that names people and nothing else is one too (`holds`).
_AUTHOR_HELD = re.compile(rf"\b{BYLINE_MARKER}\s*:?\s+[A-ZÀ-ÖØ-Þ][\w'’.-]+\s+[A-ZÀ-ÖØ-Þ]")
_CURRENCY = r"(?:[€$£¥]|\b(?:eur|euros?|usd|dollars?|chf|gbp|francs?|cents?|ct|pfund|pounds?)\b)"
_AMOUNT = r"\d[\d'’.,\u202f\u00a0 ]*"
# A table row's passage is "column: value; ..." (app.store.search): a column whose name carries the
# currency ("cost_eur", "Betrag (€)") makes its cell an amount. Letters, not word characters, bound
# the currency there: "_" joins it to the column's other words.
_CURRENCY_IN_NAME = r"(?:[€$£¥]|(?<![^\W\d_])(?:eur|euros?|usd|chf|gbp)(?![^\W\d_]))"
_PRICE_HELD = re.compile(
    rf"{_CURRENCY}\s*{_AMOUNT}|{_AMOUNT}\s*{_CURRENCY}|\b\d+(?:[.,]-|,–|\.–)"
    rf"|{_CURRENCY_IN_NAME}[^:;\n]{{0,20}}:\s*{_AMOUNT}"
    r"|\b(?:free of charge|free|no charge|kostenlos|kostenfrei|gratis|umsonst|gratuit|gratuite|gratuitement)\b",
    re.IGNORECASE,
)
_MONTHS = (r"jan(?:uary|uar|vier)?|feb(?:ruary|ruar)?|févr(?:ier)?|mar(?:ch)?|märz|mars|apr(?:il)?|avril|may|mai"
           r"|june?|juni|juin|july?|juli|juil(?:let)?|aug(?:ust)?|août|sep(?:t(?:ember|embre)?)?|oct(?:ober|obre)?"
           r"|okt(?:ober)?|nov(?:ember|embre)?|dec(?:ember)?|dez(?:ember)?|déc(?:embre)?")
_DAYS = (r"monday|tuesday|wednesday|thursday|friday|saturday|sunday|montag|dienstag|mittwoch|donnerstag|freitag"
         r"|samstag|sonntag|lundi|mardi|mercredi|jeudi|vendredi|samedi|dimanche|today|tomorrow|heute|morgen"
         r"|aujourd'hui|demain")
_DATE_HELD = re.compile(
    rf"\b(?:1[5-9]|20)\d\d\b|\b\d{{1,2}}[./]\d{{1,2}}(?:[./]\d{{2,4}})?\b|\b(?:{_MONTHS})\b|\b(?:{_DAYS})\b"
    r"|\b\d{1,2}(?::\d\d|\s*(?:h\b|uhr\b|am\b|pm\b|a\.m\.|p\.m\.))",
    re.IGNORECASE,
)
_NUMBER_HELD = re.compile(
    r"\d|\b(?:one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|twenty|hundred|thousand|half|dozen"
    r"|eins|zwei|drei|vier|fünf|sechs|sieben|acht|neun|zehn|elf|zwölf|zwanzig|hundert|tausend|halbe?"
    r"|deux|trois|quatre|cinq|six|sept|huit|neuf|dix|onze|douze|vingt|cent|mille|moitié|douzaine)\b",
    re.IGNORECASE,
)
_HELD = {PRICE: _PRICE_HELD, DATE: _DATE_HELD, NUMBER: _NUMBER_HELD, AUTHOR: _AUTHOR_HELD}


# "when", "wann", "quand" after another question word of their sentence join a clause, they ask nothing:
# "What should I do when the red light blinks?", "Que faire quand le voyant clignote ?". Right after
# "and" ("What was decided, and when?") they ask again.
_BARE_WHEN = re.compile(r"\b(?:when|wann|quand)\b", re.IGNORECASE)
_QUESTION_WORD = re.compile(
    r"\b(?:what|how|which|who|whom|whose|why|where|was|wie|welche[rsnm]?|wer|wen|wem|warum|wieso|weshalb|wo"
    r"|comment|pourquoi|où|qui|quoi|quel|quelle|quels|quelles|que faire|qu['’]est-ce)\b", re.IGNORECASE)
_AND = re.compile(r"\b(?:and|und|et),?\s*$", re.IGNORECASE)


def _asks_a_date(question: str) -> bool:
    for found in _DATE_ASKED.finditer(question):
        if not _BARE_WHEN.fullmatch(found.group()):
            return True  # "what year", "an welchem Tag", "à quelle heure": always a date
        before = re.split(r"[.?!;:]", question[:found.start()])[-1]
        if not _QUESTION_WORD.search(before) or _AND.search(before):
            return True
    return False


def asked_kind(question: str) -> str:
    """PRICE, DATE, NUMBER or AUTHOR when the question asks for that kind of fact, else "" (a price before a
    number: "how much does it cost" asks for an amount of money; "When was the author born?" asks a date)."""
    if _PRICE_ASKED.search(question):
        return PRICE
    if _asks_a_date(question):
        return DATE
    if _NUMBER_ASKED.search(question):
        return NUMBER
    if _AUTHOR_ASKED.search(question):
        return AUTHOR
    return ""


def without_asking(question: str) -> str:
    """The question without the words that ask for a kind of fact ("how many", "wie lange",
    "combien coûte", "price"): they say what kind of answer is wanted, which `holds` checks, not
    what it is about, so no document needs to write them for the question to be answered."""
    for pattern in (_PRICE_ASKED, _DATE_ASKED, _NUMBER_ASKED, _AUTHOR_ASKED):
        question = pattern.sub(" ", question)
    return question


def holds(kind: str, text: str) -> bool:
    """Whether the text holds a fact of that kind (any text holds the kind ""); an author is held by a byline,
    in running text or as a line of names."""
    pattern = _HELD.get(kind)
    return pattern is None or bool(pattern.search(text)) or (kind == AUTHOR and names_a_line(text))


# The verb of a question asking what something holds ("What does the table hold?", "Was enthält die
# Tabelle?", "Que contient le tableau ?") relates what is asked for to what it is asked of; a document
# answers it with the table's rows, never with the verb. The stop-word lists hold some such verbs
# ("contain", "show", "say") and miss the rest ("hold", "cover", "list", "enthält", "contient"): found
# by its place in the question instead of by a list, any verb is one. A verb is where each language's
# grammar puts it in a question asking for an object: after do-support's subject ("What does the table
# on the slides hold?", the clause's last word after a noun; before its complement in "What does the
# memo mention about Berlin?"), after the copula as a participle ("What is listed in the table?"),
# second in German (V2: "Was enthält ...", "Welche Werte enthält ...") or last after an auxiliary
# (the verb bracket: "Was wird in der Tabelle aufgeführt?"; lower case, unlike a German noun), after
# French "que" (inversion: "Que contient ...") or last after "qu'est-ce que" and its subject.
_WORD = r"[^\W\d_][^\W\d_'’-]*"
_EN_DO = re.compile(r"\b(?:what|which(?:\s+\w+)?)\s+(?:do|does|did)\s+(?P<clause>[^?.!;]+)", re.IGNORECASE)
_EN_PARTICIPLE = re.compile(rf"\b(?:what|which(?:\s+\w+)?)\s+(?:is|are|was|were)\s+(?P<verb>{_WORD})"
                            r"\s*(?:\?|$|\b(?:in|on|at|by|about|for|under|from|within|inside)\b)", re.IGNORECASE)
# A question about the subject ("Who wrote it?", "Who signed the lease?") asks with the verb after "who";
# one about a pronoun's passive ("When was it written?") with the participle after the pronoun; French
# "Qui a écrit ... ?" with the participle after the auxiliary.
_EN_WHO = re.compile(rf"\bwho\s+(?P<verb>{_WORD})", re.IGNORECASE)
_EN_PASSIVE = re.compile(rf"\b(?:when|where|how|why|by whom)\s+(?:is|are|was|were)\s+(?:it|this|that|they|these|those)"
                         rf"\s+(?P<verb>{_WORD})", re.IGNORECASE)
_FR_QUI = re.compile(rf"\bqui\s+(?:a|ont|avait|avaient)\s+(?P<verb>{_WORD})", re.IGNORECASE)
_DE_V2 = re.compile(rf"(?:^|[.!?;:,]\s*)(?:was|wer|wen|wem|wo|worin|woraus|womit|worüber|wovon|wozu|welche[rsnm]?\s+\w+)"
                    rf"\s+(?P<verb>{_WORD})(?P<clause>[^?.!;]*)", re.IGNORECASE)
_FR_QUE = re.compile(rf"\bqu(?:e\s+|['’]\s*)(?P<verb>{_WORD})", re.IGNORECASE)
_FR_QUEL = re.compile(rf"\bquel(?:le)?s?\s+{_WORD}\s+(?P<verb>{_WORD})", re.IGNORECASE)
_FR_ESTCE = re.compile(r"\bqu['’]est-ce\s+qu(?:e\s+|['’]\s*)(?P<clause>[^?.!;]+)", re.IGNORECASE)
_PREPOSITION = re.compile(r"(?:about|for|on|in|of|at|from|regarding|concerning|under|within|with|by"
                          r"|über|zu|zum|zur|für|von|vom|in|im|auf|an|am|bei|mit"
                          r"|sur|pour|de|du|des|dans|à|au|aux|en|concernant|avec|par)", re.IGNORECASE)


def _clause_verb(clause: str, function: frozenset[str]) -> str:
    """The verb after a question's subject: the clause's last word after a noun (a content word), or the
    word before the complement that ends it ("mention" in "the memo mention about Berlin")."""
    words: list[str] = re.findall(_WORD, clause)
    for i in range(len(words) - 1, 0, -1):
        word, before = words[i], words[i - 1]
        last = i == len(words) - 1
        if (last or _PREPOSITION.fullmatch(words[i + 1])) and word.islower() and before.casefold() not in function \
                and not _PREPOSITION.fullmatch(before) and not _PREPOSITION.fullmatch(word):
            return word
    return ""


def asking_verbs(question: str, function: frozenset[str]) -> list[str]:
    """The verbs of the question's asking for an object (see above), as written; `function`: the
    question language's function words, which no subject ends on."""
    found: list[str] = []
    for match in _EN_DO.finditer(question):
        found.append(_clause_verb(match.group("clause"), function))
    found += [m.group("verb") for m in _EN_PARTICIPLE.finditer(question)]
    found += [m.group("verb") for m in (*_EN_WHO.finditer(question), *_EN_PASSIVE.finditer(question),
                                        *_FR_QUI.finditer(question)) if m.group("verb").islower()]
    for match in _DE_V2.finditer(question):
        verb = match.group("verb")
        if verb.islower():
            found.append(verb)
            if verb.casefold() in function:  # an auxiliary: the verb closes the bracket, in lower case
                last: list[str] = re.findall(_WORD, match.group("clause"))[-1:]
                found += [w for w in last if w.islower()]
    found += [m.group("verb") for m in (*_FR_QUE.finditer(question), *_FR_QUEL.finditer(question))
              if not m.group("verb").casefold().startswith("est")]
    found += [_clause_verb(m.group("clause"), function) for m in _FR_ESTCE.finditer(question)]
    return [w for w in dict.fromkeys(found) if w and w.casefold() not in function]
