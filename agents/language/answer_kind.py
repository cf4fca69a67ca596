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

PRICE, DATE, NUMBER = "price", "date", "number"

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
_HELD = {PRICE: _PRICE_HELD, DATE: _DATE_HELD, NUMBER: _NUMBER_HELD}


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
    """PRICE, DATE or NUMBER when the question asks for that kind of fact, else "" (a price before a
    number: "how much does it cost" asks for an amount of money)."""
    if _PRICE_ASKED.search(question):
        return PRICE
    if _asks_a_date(question):
        return DATE
    if _NUMBER_ASKED.search(question):
        return NUMBER
    return ""


def without_asking(question: str) -> str:
    """The question without the words that ask for a kind of fact ("how many", "wie lange",
    "combien coûte", "price"): they say what kind of answer is wanted, which `holds` checks, not
    what it is about, so no document needs to write them for the question to be answered."""
    for pattern in (_PRICE_ASKED, _DATE_ASKED, _NUMBER_ASKED):
        question = pattern.sub(" ", question)
    return question


def holds(kind: str, text: str) -> bool:
    """Whether the text holds a fact of that kind (any text holds the kind "")."""
    pattern = _HELD.get(kind)
    return pattern is None or bool(pattern.search(text))
